"""Native min and tagged flow control (reference section 5) through the driver, on one unicast
receiver: options and bad input (clear errors naming the fix), the group min size gating
is_connected, receiver group tags (gtag= and the driver's AERON_RECEIVER_GROUP_TAG) and the
fc-receivers counter. Several receivers (multicast) are in tests/strategies/test_flow_control_group.py."""

from __future__ import annotations

import time

import pytest

import aeron_async
from aeron_async.counters import TYPE_FC_RECEIVERS
from aeron_async.monitor import CncReader, render
from conftest import UDP_SETTINGS, free_udp_port, wait_for


def fc_receivers(client: aeron_async.Aeron, pub: aeron_async.Publication) -> int | None:
    """The publication's fc-receivers counter value, None when it has none."""
    record = client.counters_reader.find_by_type_id_and_registration_id(TYPE_FC_RECEIVERS, pub.registration_id)
    return None if record is None else record.value


def stream(client: aeron_async.Aeron, pub: aeron_async.Publication, sub: aeron_async.Subscription, count: int) -> None:
    got: list[bytes] = []
    sent = 0
    deadline = time.monotonic() + 10
    while len(got) < count:
        assert time.monotonic() < deadline, f"{len(got)} of {count} messages"
        if sent < count and pub.offer(b"m%06d" % sent) > 0:
            sent += 1
        got.extend(m.data for m in sub.poll_messages())
    assert got == [b"m%06d" % i for i in range(count)]


# ---- bad input ----

BAD_PUBLICATIONS = [
    # (fc= value, fragments the error must name)
    ("fastest", ["fc=fastest", "unknown flow control 'fastest'", "registered: unicast", "min", "tagged"]),
    ("tagged,g:abc", ["fc=tagged,g:abc", "g:<group tag>[/<min group size>]", "tagged,g:100/2"]),
    ("min,g:1/x", ["fc=min,g:1/x", "g:<group tag>[/<min group size>]"]),
    ("min,t:soon", ["fc=min,t:soon", ",t:<timeout>"]),
    ("min,g:1001", ["fc=min,g:1001", "does not filter by group tag", "g:/<size>", "fc=tagged,g:1001"]),
    ("min,g:/2,g:/3", ["a second group option 'g:/3'"]),
    ("tagged,t:1s,t:2s", ["a second receiver timeout"]),
    ("min,t:0", ["malformed receiver timeout 't:0'", "t:500ms"]),
]


@pytest.mark.parametrize("fc, fragments", BAD_PUBLICATIONS, ids=[fc for fc, _ in BAD_PUBLICATIONS])
def test_bad_flow_control_options_are_refused_naming_the_fix(
    udp_client: aeron_async.Aeron, fc: str, fragments: list[str]
) -> None:
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|fc={fc}"
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        udp_client.add_publication(channel, 1)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


@pytest.mark.parametrize("gtag", ["abc", "1.5", "", "99999999999999999999"])
def test_gtag_must_be_a_64_bit_integer(udp_client: aeron_async.Aeron, gtag: str) -> None:
    with pytest.raises(aeron_async.InvalidChannelError, match="gtag=.* is invalid: expected a 64-bit integer"):
        udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|gtag={gtag}", 1)


def test_subscriptions_sharing_an_endpoint_must_agree_on_gtag(udp_client: aeron_async.Aeron) -> None:
    endpoint = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    udp_client.add_subscription(f"{endpoint}|gtag=7", 1)
    with pytest.raises(aeron_async.InvalidChannelError, match="gtag=8 differs from gtag=7"):
        udp_client.add_subscription(f"{endpoint}|gtag=8", 2)
    with pytest.raises(aeron_async.InvalidChannelError, match=r"gtag=\(none\) \(the default\) differs from gtag=7"):
        udp_client.add_subscription(endpoint, 3)
    udp_client.add_subscription(f"{endpoint}|gtag=7", 4)


@pytest.mark.parametrize("setting, value, match", [
    ("unicast_flow_control_strategy", "fastest", "AERON_UNICAST_FLOW_CONTROL_STRATEGY.*unknown flow control 'fastest'"),
    ("unicast_flow_control_strategy", "min,g:2", "does not filter by group tag"),
    ("receiver_group_tag", "abc", "AERON_RECEIVER_GROUP_TAG=abc is not a 64-bit integer; give the group tag"),
    ("flow_control_group_tag", "x", "AERON_FLOW_CONTROL_GROUP_TAG=x is not a 64-bit integer"),
    ("flow_control_group_min_size", -1, "AERON_FLOW_CONTROL_GROUP_MIN_SIZE=-1 must be at least 0"),
    ("flow_control_receiver_timeout", "0", "AERON_FLOW_CONTROL_RECEIVER_TIMEOUT above 0"),
])
def test_bad_flow_control_settings_stop_the_driver_starting(
    aeron_dir: str, setting: str, value: object, match: str
) -> None:
    with pytest.raises(aeron_async.ConfigurationError, match=match):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **dict(UDP_SETTINGS, **{setting: value}))


# ---- behaviour on one receiver ----

def test_min_tracks_the_receiver_and_counts_it(udp_driver: aeron_async.MediaDriver, udp_client: aeron_async.Aeron) -> None:
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    sub = udp_client.add_subscription(channel, 10)
    pub = udp_client.add_publication(f"{channel}|fc=min,t:500ms", 10)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    wait_for(lambda: fc_receivers(udp_client, pub) == 1, timeout=5, what="fc-receivers 1")
    record = udp_client.counters_reader.find_by_type_id_and_registration_id(TYPE_FC_RECEIVERS, pub.registration_id)
    assert record is not None and record.label.startswith("fc-receivers: ")
    assert record.session_id == pub.session_id and record.stream_id == 10
    with CncReader(udp_driver.aeron_dir) as reader:   # what `aeron-async stat` shows
        assert f"- fc-receivers: {pub.registration_id} " in render(reader)
    stream(udp_client, pub, sub, 2000)
    # the receiver goes: dropped after t: (the publication's own connection timeout is longer)
    sub.close()
    wait_for(lambda: fc_receivers(udp_client, pub) == 0, timeout=5, what="fc-receivers back to 0")
    # unicast flow control tracks nobody and has no such counter
    other = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}", 11)
    assert fc_receivers(udp_client, other) is None


def test_the_group_min_size_gates_is_connected(udp_client: aeron_async.Aeron) -> None:
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    sub = udp_client.add_subscription(channel, 12)
    pub = udp_client.add_publication(f"{channel}|fc=min,g:/2", 12)
    # one receiver sends status messages and is tracked, but two are required
    wait_for(lambda: fc_receivers(udp_client, pub) == 1, timeout=5, what="fc-receivers 1")
    time.sleep(0.3)
    assert not pub.is_connected
    assert pub.offer(b"x") == aeron_async.OfferResult.NOT_CONNECTED
    assert sub.poll_messages() == []
    # min size 1 on the same receiver: connected
    channel1 = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    pub1 = udp_client.add_publication(f"{channel1}|fc=min,g:/1", 13)
    sub1 = udp_client.add_subscription(channel1, 13)
    wait_for(lambda: pub1.is_connected, timeout=5, what="connected with g:/1")
    stream(udp_client, pub1, sub1, 100)


def test_tagged_tracks_only_receivers_sending_its_tag(udp_client: aeron_async.Aeron) -> None:
    port = free_udp_port()
    sub = udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}|gtag=1002", 14)
    pub = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|fc=tagged,g:1001/1", 14)
    time.sleep(0.5)  # status messages flow, with the wrong tag
    assert fc_receivers(udp_client, pub) == 0
    assert not pub.is_connected
    sub.close()
    pub.close()
    port = free_udp_port()
    sub = udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}|gtag=1001", 15)
    pub = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|fc=tagged,g:1001/1", 15)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    assert fc_receivers(udp_client, pub) == 1
    stream(udp_client, pub, sub, 500)


def test_the_drivers_receiver_group_tag_and_flow_control_defaults(aeron_dir: str) -> None:
    settings = dict(UDP_SETTINGS, receiver_group_tag=77, flow_control_group_tag=77, flow_control_group_min_size=1,
                    unicast_flow_control_strategy="tagged")
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as client:
            channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
            sub = client.add_subscription(channel, 16)
            pub = client.add_publication(channel, 16)   # no fc=: the driver's default, tagged with tag 77
            wait_for(lambda: pub.is_connected, timeout=5, what="connected")
            assert fc_receivers(client, pub) == 1
            stream(client, pub, sub, 200)
            # gtag= overrides the driver's tag for that endpoint: not tracked
            channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
            client.add_subscription(f"{channel}|gtag=5", 17)
            pub2 = client.add_publication(channel, 17)
            time.sleep(0.5)
            assert fc_receivers(client, pub2) == 0 and not pub2.is_connected
