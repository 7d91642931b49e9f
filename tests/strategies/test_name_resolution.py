"""Name resolution in one process, over loopback: the csv_table resolver, registrations answered when
the resolver executor has answered, names that do not resolve yet (with and without
AERON_NAME_RESOLUTION_PENDING_ALLOWED), the resolutions table and `aeron-async resolve`.
DNS (hosts files, a DNS server that does not answer) is in test_name_resolution_netns.py."""

from __future__ import annotations

import os
import pathlib
import subprocess
from collections.abc import Iterator

import pytest

import aeron_async
from aeron_async.monitor import CncReader
from aeron_async.resolve import read_name_resolutions
from conftest import PYTHON, UDP_SETTINGS, free_udp_port, python_env, system_counter, wait_for

def receive(sub: aeron_async.Subscription, expected: bytes, what: str) -> None:
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or expected in got, timeout=10, what=what)


@pytest.fixture
def table(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "names.csv"


def write_table(path: pathlib.Path, text: str) -> None:
    """Rewrites the csv_table file with a modification time surely different from the last one."""
    previous = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(previous + 1_000_000_000, previous + 1_000_000_000))


@pytest.fixture
def csv_client(aeron_dir: str, table: pathlib.Path) -> Iterator[aeron_async.Aeron]:
    write_table(table, "svc-a,127.0.0.1\nlate-svc,late-svc.invalid\n")
    settings = dict(UDP_SETTINGS, name_resolver_supplier="csv_table", name_resolver_init_args=str(table),
                    name_resolution_pending_allowed=True, driver_reresolution_check_interval=0.1)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as client:
            yield client


def test_named_channels_stream_through_the_csv_table_and_the_table_shows_them(
        aeron_dir: str, csv_client: aeron_async.Aeron) -> None:
    port = free_udp_port()
    channel = f"aeron:udp?endpoint=svc-a:{port}"
    sub = csv_client.add_subscription(channel, 71)
    pub = csv_client.add_publication(channel, 71)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    wait_for(lambda: pub.offer(b"by name") > 0, timeout=5, what="the offer")
    receive(sub, b"by name", "the message")

    table = read_name_resolutions(aeron_dir)
    assert table.resolver == "csv_table"
    entry = next(e for e in table.entries if e.name == f"svc-a:{port}")
    assert (entry.key, entry.address, entry.source, entry.state) == ("endpoint", f"127.0.0.1:{port}", "csv_table", "resolved")
    assert entry.change_count == 0
    cli = [PYTHON, "-m", "aeron_async", "resolve", "--aeron-dir", aeron_dir]
    out = subprocess.run([*cli, "svc-a"], capture_output=True, text=True, timeout=30, env=python_env())
    assert out.returncode == 0, out.stderr
    assert f"svc-a:{port} (endpoint) -> 127.0.0.1:{port}" in out.stdout
    out = subprocess.run([*cli, "never-named"], capture_output=True, text=True, timeout=30, env=python_env())
    assert out.returncode == 2
    assert "has not resolved 'never-named'" in out.stderr and "'csv_table'" in out.stderr


def test_a_name_that_does_not_resolve_is_an_error_naming_the_option(aeron_dir: str) -> None:
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **UDP_SETTINGS) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as client:
            with pytest.raises(aeron_async.AeronError) as info:
                client.add_publication(f"aeron:udp?endpoint=no-such-host.invalid:{free_udp_port()}", 72)
            assert "no-such-host.invalid" in str(info.value)
            assert "AERON_NAME_RESOLUTION_PENDING_ALLOWED" in str(info.value)
            # the driver goes on: a channel by address works after it
            port = free_udp_port()
            sub = client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 72)
            pub = client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}", 72)
            wait_for(lambda: pub.is_connected, timeout=5, what="connected")
            assert sub.channel_status == 1


def test_with_pending_allowed_a_publication_waits_for_its_name_and_connects_once_it_resolves(
        aeron_dir: str, csv_client: aeron_async.Aeron, table: pathlib.Path) -> None:
    port = free_udp_port()
    pub = csv_client.add_publication(f"aeron:udp?endpoint=late-svc:{port}", 73)   # registered, not connected
    sub = csv_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 73)
    wait_for(lambda: system_counter(aeron_dir, "Errors") >= 2, timeout=5, what="retries logged")
    assert not pub.is_connected
    errors = [e.text for e in CncReader(aeron_dir).errors()]
    assert any("late-svc" in text and "not resolved yet, retried" in text for text in errors), errors
    # a subscription binds its endpoint: it cannot wait for a name, and says so
    with pytest.raises(aeron_async.AeronError, match="applies to a publication's endpoint= only"):
        csv_client.add_subscription(f"aeron:udp?endpoint=late-svc:{free_udp_port()}", 73)

    write_table(table, "svc-a,127.0.0.1\nlate-svc,127.0.0.1\n")
    wait_for(lambda: pub.is_connected, timeout=5, what="connected once the name resolves")
    wait_for(lambda: pub.offer(b"late but here") > 0, timeout=5, what="the offer")
    receive(sub, b"late but here", "the message")
    entry = next(e for e in read_name_resolutions(aeron_dir).entries if e.name == f"late-svc:{port}")
    assert entry.state == "resolved" and entry.address == f"127.0.0.1:{port}" and entry.failure_count >= 1
    assert system_counter(aeron_dir, "Resolution changes") == 0   # a first resolution is no change


def test_closing_a_publication_that_waits_for_its_name(aeron_dir: str, csv_client: aeron_async.Aeron) -> None:
    pub = csv_client.add_publication(f"aeron:udp?endpoint=late-svc:{free_udp_port()}", 74)
    pub.close()
    port = free_udp_port()
    stream = csv_client.add_publication(f"aeron:udp?endpoint=svc-a:{port}", 74)
    sub = csv_client.add_subscription(f"aeron:udp?endpoint=svc-a:{port}", 74)
    wait_for(lambda: stream.is_connected, timeout=5, what="connected")
    wait_for(lambda: stream.offer(b"after") > 0, timeout=5, what="the offer")
    receive(sub, b"after", "the message")


def test_a_silent_mdc_destination_and_control_address_follow_their_moved_names(
        aeron_dir: str, table: pathlib.Path) -> None:
    """Re-resolution (reference 8.3) of a manual MDC destination added by name and of a subscription's
    control= name: each falls silent (its receiver or publisher closed) while its name moved, and after
    5 s without status messages (sender) or data (receiver) it is resolved again and the new address
    swapped in, without closing the publication or the subscription."""
    write_table(table, "dest-svc,127.0.0.1\nctl-svc,127.0.0.1\n")
    settings = dict(UDP_SETTINGS, name_resolver_supplier="csv_table", name_resolver_init_args=str(table),
                    driver_reresolution_check_interval=0.2)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as client:
        # a manual MDC publication whose destination names dest-svc
        port = free_udp_port()
        mdc = client.add_publication("aeron:udp?control-mode=manual", 81)
        mdc.add_destination(f"aeron:udp?endpoint=dest-svc:{port}")
        first_receiver = client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 81)
        second_receiver = client.add_subscription(f"aeron:udp?endpoint=127.0.0.2:{port}", 81)
        # a subscription whose control= (the dynamic MDC publisher) names ctl-svc
        control = free_udp_port()
        first_publisher = client.add_publication(f"aeron:udp?control=127.0.0.1:{control}|control-mode=dynamic", 82)
        second_publisher = client.add_publication(f"aeron:udp?control=127.0.0.2:{control}|control-mode=dynamic", 82)
        subscriber = client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|control=ctl-svc:{control}", 82)
        for pub, sub in ((mdc, first_receiver), (first_publisher, subscriber)):
            wait_for(lambda: pub.is_connected, timeout=5, what="connected")
            wait_for(lambda: pub.offer(b"before") > 0, timeout=5, what="the offer")
            receive(sub, b"before", "the first message")

        write_table(table, "dest-svc,127.0.0.2\nctl-svc,127.0.0.2\n")
        first_receiver.close()
        first_publisher.close()
        for pub, sub, what in ((mdc, second_receiver, "the destination"), (second_publisher, subscriber, "control")):
            got: list[bytes] = []

            def arrived() -> bool:
                pub.offer(b"after")
                got.extend(m.data for m in sub.poll_messages())
                return b"after" in got

            wait_for(arrived, timeout=15, interval=0.01, what=f"{what} moving to 127.0.0.2")
        assert not mdc.is_closed and not subscriber.is_closed
        assert system_counter(aeron_dir, "Resolution changes") == 2
        moved = {e.name: e for e in read_name_resolutions(aeron_dir).entries}
        assert moved[f"dest-svc:{port}"].address == f"127.0.0.2:{port}"
        assert moved[f"ctl-svc:{control}"].address == f"127.0.0.2:{control}"
