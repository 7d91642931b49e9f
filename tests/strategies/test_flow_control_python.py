"""Flow-control strategies written in Python (aeron_async.flow_control): a strategy's callbacks get
the real fields of status messages over UDP (fc= applies on unicast channels in this driver), the
limit it returns really paces the publisher, the sender goes on while the strategy is stuck, a
strategy that raises is logged and replaced by min, bad options are refused, a standalone driver
takes strategies with --flow-control; and the reference min and tagged rules of MinFlowControl and
TaggedFlowControl, fed made-up status messages."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time

import pytest

import aeron_async
from aeron_async import FlowControlParams, MinFlowControl, StatusMessage, TaggedFlowControl, strategies
from aeron_async.counters import TYPE_SENDER_LIMIT, TYPE_SENDER_POSITION
from aeron_async.monitor import CncReader
from aeron_async.strategies import StrategyKind
from conftest import (PYTHON, REPO, UDP_SETTINGS, free_udp_port, python_env, start_driver, stop_driver, unique,
                      wait_for)

def fallback_name() -> str:
    """What a failed strategy is replaced by: the native min where one is registered."""
    return "min" if "min" in strategies.names(StrategyKind.FLOW_CONTROL) else "unicast"


def stream(client: aeron_async.Aeron, pub: aeron_async.Publication, sub: aeron_async.Subscription,
           count: int, size: int = 64, timeout: float = 20.0) -> None:
    """Offers `count` numbered messages and reads them back in order, within `timeout`."""
    sent = received = 0
    deadline = time.monotonic() + timeout
    while received < count:
        if sent < count and pub.offer(sent.to_bytes(8, "little") + bytes(size - 8)) > 0:
            sent += 1
        for message in sub.poll_messages():
            assert int.from_bytes(bytes(message.data[:8]), "little") == received
            received += 1
        assert time.monotonic() < deadline, f"{received} of {count} messages arrived within {timeout} s"


def counter_value(client: aeron_async.Aeron, type_id: int) -> int:
    records = client.counters_reader.find_by_type_id(type_id)
    assert len(records) == 1, records
    return int(records[0].value)


def errors(aeron_dir: str) -> list[str]:
    with CncReader(aeron_dir) as reader:
        return [e.text for e in reader.errors()]


# ---- through a driver ----


def test_callbacks_get_the_real_fields_of_status_messages(udp_client: aeron_async.Aeron) -> None:
    events: list[tuple[str, object]] = []
    made: list[FlowControlParams] = []

    class Recording(MinFlowControl):
        def __init__(self, params: FlowControlParams) -> None:
            super().__init__(params)
            made.append(params)

        def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
            events.append(("sm", (sm, sender_limit, now_ns, threading.current_thread().name)))
            return super().on_status_message(sm, sender_limit, now_ns)

        def on_setup(self, now_ns: int, sender_limit: int, sender_position: int) -> int:
            events.append(("setup", sender_position))
            return sender_limit

        def on_idle(self, now_ns: int, sender_limit: int, sender_position: int, is_end_of_stream: bool) -> int:
            events.append(("idle", sender_position))
            return super().on_idle(now_ns, sender_limit, sender_position, is_end_of_stream)

    name = unique("recording")
    strategies.register_flow_control(name, Recording)
    port = free_udp_port()
    channel = f"aeron:udp?endpoint=127.0.0.1:{port}"
    sub = udp_client.add_subscription(channel, 41)
    pub = udp_client.add_publication(f"{channel}|fc={name},g:/1,t:2s", 41)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    stream(udp_client, pub, sub, 5000, size=100)
    final = pub.position
    # a receiver reports its consumption once it moved a quarter of its window (32 KiB) past the last
    # report, so the last SM is at most that far behind the end
    wait_for(lambda: any(kind == "sm" and 0 <= final - e[0].position <= 32 * 1024 for kind, e in events),  # type: ignore[index]
             timeout=5, what="an SM within a quarter window of the end")

    assert len(made) == 1
    params = made[0]
    assert (params.name, params.options, params.stream_id) == (name, "g:/1,t:2s", 41)
    assert (params.group_min_size, params.group_tag, params.receiver_timeout_ns) == (1, -1, 2_000_000_000)
    assert params.term_length == 1024 * 1024
    sms = [e for kind, e in events if kind == "sm"]
    first, _, first_ns, thread_name = sms[0]  # type: ignore[misc]
    assert thread_name.startswith("aeron-async-flow-control")
    assert first.receiver_id != 0 and {sm.receiver_id for sm, *_ in sms} == {first.receiver_id}  # type: ignore[attr-defined]
    assert first.window == 128 * 1024 and first.group_tag is None and not first.is_end_of_stream
    assert first.source_address == f"127.0.0.1:{port}"  # the receive endpoint's socket sends the SMs
    positions = [sm.position for sm, *_ in sms]  # type: ignore[attr-defined]
    assert positions == sorted(positions) and 0 <= final - positions[-1] <= 32 * 1024 and len(set(positions)) > 3
    assert [now for _, _, now, _ in sms] == sorted(now for _, _, now, _ in sms)  # type: ignore[misc]
    assert any(kind == "setup" for kind, _ in events)  # SETUP came before the first SM
    assert any(kind == "idle" for kind, _ in events)


def test_the_limit_a_strategy_returns_paces_the_publisher(udp_client: aeron_async.Aeron) -> None:
    cap = [64 * 1024]

    class Capped(MinFlowControl):
        def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
            return min(super().on_status_message(sm, sender_limit, now_ns), cap[0])

        def on_idle(self, now_ns: int, sender_limit: int, sender_position: int, is_end_of_stream: bool) -> int:
            return min(super().on_idle(now_ns, sender_limit, sender_position, is_end_of_stream), cap[0])

    name = unique("capped")
    strategies.register_flow_control(name, Capped)
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    sub = udp_client.add_subscription(channel, 42)
    pub = udp_client.add_publication(f"{channel}|fc={name}", 42)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    chunk = bytes(992)  # 1 KiB frames
    offered = 0
    deadline = time.monotonic() + 10
    while offered < 200:  # 200 KiB: more than the cap, less than the publisher window (512 KiB)
        if pub.offer(chunk) > 0:
            offered += 1
        assert time.monotonic() < deadline
    received: list[int] = []

    def drain() -> int:
        received.extend(len(m.data) for m in sub.poll_messages())
        return len(received)

    wait_for(lambda: counter_value(udp_client, TYPE_SENDER_LIMIT) == 64 * 1024, timeout=5, what="snd-lmt at the cap")
    wait_for(lambda: drain() == 64, timeout=5, what="64 messages (the cap)")
    time.sleep(0.3)  # SMs keep coming; nothing beyond the cap is sent
    assert drain() == 64
    assert counter_value(udp_client, TYPE_SENDER_POSITION) == 64 * 1024

    cap[0] = 1 << 62
    wait_for(lambda: drain() == 200, timeout=5, what="the rest once the strategy allows it")


def test_the_sender_goes_on_while_a_strategy_is_stuck(udp_client: aeron_async.Aeron) -> None:
    """The sender never waits for Python: while a strategy's worker is blocked in a callback, its
    publication keeps the last limit and another publication of the same driver streams on."""
    release = threading.Event()
    entered = threading.Event()

    class Stuck(MinFlowControl):
        def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
            limit = super().on_status_message(sm, sender_limit, now_ns)
            self.count = getattr(self, "count", 0) + 1
            if self.count >= 2 and not release.is_set():  # after a first answer (connected)
                entered.set()
                release.wait(20)
            return limit

    name = unique("stuck")
    strategies.register_flow_control(name, Stuck)
    try:
        channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
        stuck_sub = udp_client.add_subscription(channel, 43)
        stuck_pub = udp_client.add_publication(f"{channel}|fc={name}", 43)
        wait_for(lambda: stuck_pub.is_connected, timeout=5, what="connected")
        wait_for(lambda: stuck_pub.offer(bytes(64)) > 0, timeout=5, what="an offer")
        wait_for(entered.is_set, timeout=5, what="the strategy blocked")
        wait_for(lambda: stuck_sub.poll_messages(), timeout=5, what="the message sent within the last limit")
        other = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
        sub = udp_client.add_subscription(other, 44)
        pub = udp_client.add_publication(other, 44)
        wait_for(lambda: pub.is_connected, timeout=5, what="the other publication connected")
        stream(udp_client, pub, sub, 20_000)
        assert not release.is_set()
    finally:
        release.set()


def test_a_strategy_that_raises_is_logged_and_replaced_by_min(udp_driver: aeron_async.MediaDriver,
                                                              udp_client: aeron_async.Aeron) -> None:
    class RaisesOnThird(MinFlowControl):
        def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
            self.count = getattr(self, "count", 0) + 1
            if self.count == 3:
                raise ValueError("boom on the third SM")
            return super().on_status_message(sm, sender_limit, now_ns)

    class RaisesInInit(MinFlowControl):
        def __init__(self, params: FlowControlParams) -> None:
            raise KeyError("no such thing")

    class ReturnsNone(MinFlowControl):
        def on_idle(self, now_ns: int, sender_limit: int, sender_position: int, is_end_of_stream: bool) -> int:
            return None  # type: ignore[return-value]

    cases = [(unique("raises"), RaisesOnThird, "raised ValueError: boom on the third SM in on_status_message"),
             (unique("init"), RaisesInInit, "RaisesInInit raised KeyError: 'no such thing' in creating it"),
             (unique("none"), ReturnsNone, "raised TypeError: on_idle returned None, not a sender limit (int)")]
    for stream_id, (name, cls, _) in enumerate(cases, start=45):
        strategies.register_flow_control(name, cls)
        channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
        sub = udp_client.add_subscription(channel, stream_id)
        pub = udp_client.add_publication(f"{channel}|fc={name},t:3s", stream_id)
        wait_for(lambda: pub.is_connected, timeout=5, what="connected")
        stream(udp_client, pub, sub, 20_000)  # the whole stream, through the failure
    logged = errors(udp_driver.aeron_dir)
    expected = fallback_name()
    for name, _, text in cases:
        matching = [e for e in logged if f"flow control '{name}'" in e]
        assert len(matching) == 1, logged
        assert text in matching[0] and f"now uses the native '{expected}' flow control" in matching[0]
        assert ".py:" in matching[0]  # where it was raised
    assert udp_driver.do_work is not None and not udp_driver.is_closed  # the driver runs on


def test_options_are_checked_when_the_publication_is_added(udp_client: aeron_async.Aeron) -> None:
    name = unique("min")
    strategies.register_flow_control(name, MinFlowControl)
    strategies.register_flow_control(name, MinFlowControl)  # the same class again: nothing happens
    with pytest.raises(aeron_async.ConfigurationError, match="already registered"):
        strategies.register_flow_control(name, TaggedFlowControl)
    tagged = unique("tagged")
    entry = strategies.register_flow_control(tagged, TaggedFlowControl, description="tagged, in Python")
    assert (entry.name, entry.description) == (tagged, "tagged, in Python")
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    with pytest.raises(aeron_async.InvalidChannelError, match=f"'x:1' is not an option of flow control '{name}'"):
        udp_client.add_publication(f"{channel}|fc={name},x:1", 50)
    with pytest.raises(aeron_async.InvalidChannelError, match="malformed group option 'g:/many'"):
        udp_client.add_publication(f"{channel}|fc={name},g:/many", 50)
    with pytest.raises(aeron_async.InvalidChannelError, match=f"flow control '{tagged}' needs a group tag"):
        udp_client.add_publication(f"{channel}|fc={tagged},t:1s", 50)

    class NoOptions(MinFlowControl):
        accepted_options = frozenset()

    bare = unique("bare")
    strategies.register_flow_control(bare, NoOptions)
    with pytest.raises(aeron_async.InvalidChannelError, match=r"'t:1s' is not an option .*\(it takes no options\)"):
        udp_client.add_publication(f"{channel}|fc={bare},t:1s", 50)

    class BadOption(MinFlowControl):
        accepted_options = frozenset({"z"})

    with pytest.raises(aeron_async.ConfigurationError, match="accepted_options may hold 'g' and 't' only"):
        strategies.register_flow_control(unique("bad"), BadOption)
    with pytest.raises(aeron_async.ConfigurationError, match="not a class or factory"):
        strategies.register_flow_control(unique("bad"), 42)


def test_a_standalone_driver_runs_strategies_given_with_flow_control(aeron_dir: str) -> None:
    proc = start_driver(aeron_dir, "-o", "AERON_TERM_BUFFER_LENGTH=1m",
                        "--flow-control", "slow2=examples.flow_control:SlowestOfTwoFastest",
                        "--flow-control", "boom=tests.support.procs.flow_control_strategies:RaisesOnThirdStatusMessage")
    try:
        with aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client:
            for stream_id, name in ((60, "slow2"), (61, "boom")):
                channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
                sub = client.add_subscription(channel, stream_id)
                pub = client.add_publication(f"{channel}|fc={name}", stream_id)
                wait_for(lambda: pub.is_connected, timeout=5, what=f"fc={name} connected")
                stream(client, pub, sub, 20_000)
        # `aeron-async strategies` in another process lists what that driver registered, and only the
        # names users type (not the C supplier aliases)
        listing = subprocess.run([PYTHON, "-m", "aeron_async", "strategies", "--aeron-dir", aeron_dir],
                                 env=python_env(), capture_output=True, text=True, timeout=30).stdout
        flow_control = listing.split("congestion control:")[0]
        for name in ("slow2", "boom"):
            assert re.search(rf"^  {name} .*\(registered by the driver in {re.escape(aeron_dir)}\)$", flow_control,
                             re.M), listing
        assert "unicast" in flow_control and "aa_" not in listing, listing
        out = subprocess.run([PYTHON, "-m", "aeron_async", "errors", "--aeron-dir", aeron_dir], env=python_env(),
                             capture_output=True, text=True, timeout=30).stdout
        assert "flow control 'boom'" in out and "RaisesOnThirdStatusMessage raised RuntimeError" in out, out
        assert "strategy failed on purpose" in out and "1 distinct errors" in out, out
    finally:
        stop_driver(proc)

    bad = subprocess.run([PYTHON, "-m", "aeron_async", "driver", "--aeron-dir", aeron_dir,
                          "--flow-control", "x=no.such.module:Thing"], env=python_env(),
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1 and "cannot import no.such.module" in bad.stderr
    bad = subprocess.run([PYTHON, "-m", "aeron_async", "driver", "--aeron-dir", aeron_dir, "--flow-control", "x"],
                         env=python_env(), capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "expects NAME=module:Class" in bad.stderr


def test_the_example_runs() -> None:
    result = subprocess.run([PYTHON, os.path.join(REPO, "examples", "flow_control.py"), "--messages", "5000"],
                            env=python_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "receivers at 100000, 300000 and 200000 with a 4096-byte window: sender limit 204096" in result.stdout
    assert "5,000 messages received over UDP" in result.stdout and "of 1 receiver(s)" in result.stdout


# ---- the reference rules, without a driver ----


def params(**overrides: object) -> FlowControlParams:
    values: dict[str, object] = dict(name="m", options="", registration_id=1, stream_id=1, initial_term_id=0,
                                     term_length=65536, group_tag=-1, group_min_size=0,
                                     receiver_timeout_ns=1_000_000_000)
    values.update(overrides)
    return FlowControlParams(**values)  # type: ignore[arg-type]


def sm(receiver: int, position: int, window: int = 1000, tag: int | None = None, flags: int = 0) -> StatusMessage:
    return StatusMessage(receiver, position, window, tag, "10.0.0.1:1", flags)


def test_min_follows_the_slowest_and_admits_no_one_a_window_behind() -> None:
    s = MinFlowControl(params())
    assert s.on_status_message(sm(1, 5000), 0, 0) == 6000          # the first receiver
    assert s.on_status_message(sm(2, 8000), 6000, 0) == 6000       # the slowest holds it
    assert s.on_status_message(sm(1, 9000), 6000, 0) == 9000       # now receiver 2 is the slowest
    assert s.on_status_message(sm(3, 7000), 9000, 0) == 9000       # 8000 >= 9000 - 1000: admitted, never lowers
    assert set(s.receivers) == {1, 2, 3}
    assert s.on_idle(1, 9000, 0, False) == 8000                    # idle takes the minimum
    assert s.on_status_message(sm(4, 1000), 8000, 1) == 8000       # 2000 < 8000 - 1000: not admitted
    assert 4 not in s.receivers
    s.on_error(3, None, 13, 2)                                     # ERR: gone at the next tick
    assert s.on_status_message(sm(2, 20_000, flags=0x40), 8000, 3) == 8000  # EOS marks receiver 2
    assert s.on_idle(4, 9000, 0, False) == 10_000 and set(s.receivers) == {1}
    assert s.on_idle(2_000_000_000, 10_000, 0, False) == 10_000 and not s.receivers  # timed out; kept
    assert s.on_status_message(sm(9, 50_000, flags=0x40), 10_000, 0) == 51_000  # EOS is never admitted
    assert not s.receivers


def test_min_with_a_group_size_holds_the_limit_and_connection_until_enough_receivers() -> None:
    s = MinFlowControl(params(group_min_size=2))
    assert not s.has_required_receivers()
    assert s.on_status_message(sm(1, 5000), 100, 0) == 100
    assert not s.has_required_receivers()
    assert s.on_idle(1, 100, 0, False) == 100
    assert s.on_status_message(sm(2, 5500), 100, 0) == 6000
    assert s.has_required_receivers()


def test_tagged_tracks_only_its_group_and_caps_after_an_elicited_setup() -> None:
    s = TaggedFlowControl(params(group_tag=1001, group_min_size=1))
    assert s.on_status_message(sm(1, 1000), 50, 0) == 50            # untagged: not tracked
    assert s.on_status_message(sm(2, 9000, tag=7), 50, 0) == 50     # another group
    assert s.on_status_message(sm(3, 5000, tag=1001), 50, 0) == 6000
    assert s.on_status_message(sm(1, 100), 6000, 0) == 6000         # untagged SMs do not hold it back
    assert set(s.receivers) == {3} and s.has_required_receivers()
    s.on_trigger_send_setup(4, 1001, "10.0.0.4:1", 10)              # a tagged newcomer asks for SETUP
    assert s.on_status_message(sm(3, 9000, tag=1001), 6000, 20) == 6000  # capped where it was
    assert s.on_status_message(sm(4, 2000, tag=1001), 6000, 25) == 6000   # a window behind: not admitted
    assert s.on_status_message(sm(4, 9500, tag=1001), 6000, 30) == 10_000  # admitted: the cap is gone
    s.on_trigger_send_setup(5, 1001, "10.0.0.5:1", 50)
    assert s.on_status_message(sm(3, 20_000, tag=1001), 10_000, 60) == 10_000  # capped again
    s.on_trigger_send_setup(6, 7, "10.0.0.6:1", 70)                    # another group's newcomer: no cap
    assert s.on_status_message(sm(4, 15_000, tag=1001), 10_000, 50 + 1_000_000_001) == 16_000  # the cap lasted one timeout


def test_a_python_strategy_as_the_drivers_default(aeron_dir: str) -> None:
    """Registered before the driver starts, a Python strategy can be the driver's default: here for
    unicast channels (AERON_UNICAST_FLOW_CONTROL_STRATEGY; the multicast default takes names the
    same way), so a publication without fc= runs it."""
    seen: list[int] = []

    class Default(MinFlowControl):
        def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
            seen.append(sm.receiver_id)
            return super().on_status_message(sm, sender_limit, now_ns)

    name = unique("default")
    strategies.register_flow_control(name, Default)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, unicast_flow_control_strategy=name, **UDP_SETTINGS):
        with aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client:
            channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
            sub = client.add_subscription(channel, 70)
            pub = client.add_publication(channel, 70)
            wait_for(lambda: pub.is_connected, timeout=5, what="connected")
            stream(client, pub, sub, 5000)
    assert seen, "the driver's default strategy saw no status message"
