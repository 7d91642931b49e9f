"""Behaviours held to Aeron's (reference aeron-protocol.md 9.3, 7; docs/configuration.md, "Channel
parameters"): static counters (ADD_STATIC_COUNTER), next session id requests
(GET_NEXT_AVAILABLE_SESSION_ID), the registration ids of the channel status counters, the scope of
an explicit session-id=, the parameters Aeron's clients send that Aeron's driver accepts, and Aeron's
words in the errors it has words for."""

from __future__ import annotations

import re

import pytest

import aeron_async
from aeron_async.counters import CountersReader
from aeron_async.errors import AeronError
from conftest import TEST_DRIVER_SETTINGS, free_udp_port, udp_channel, wait_for

APP_TYPE = 1_001
TYPE_SEND_CHANNEL_STATUS = 6
TYPE_RECEIVE_CHANNEL_STATUS = 7
TYPE_LOCAL_SOCKADDR = 14


def _next(session_id: int, step: int = 1) -> int:
    """session_id + step with int32 wrap-around, as the driver's counter moves."""
    return (session_id + step + 2**31) % 2**32 - 2**31


# ---- static counters ----


def test_a_static_counter_is_one_per_type_and_registration_id_and_outlives_its_client(
        driver: aeron_async.MediaDriver) -> None:
    with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as first:
        counter = first.add_static_counter(APP_TYPE, 4242, b"key", "a static counter")
        assert counter.registration_id == 4242 and counter.type_id == APP_TYPE
        counter.value = 7
        record = first.counters_reader.find_by_id(counter.id)
        assert record is not None
        assert (record.registration_id, record.owner_id, record.label) == (4242, -1, "a static counter")
        # the same client asking again, and another registration id of the type: one counter each
        assert first.add_static_counter(APP_TYPE, 4242, b"other", "ignored").id == counter.id
        assert first.add_static_counter(APP_TYPE, 4243, b"", "another").id != counter.id
        counter.close()          # the handle only: the driver keeps the counter
    with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as second:
        again = second.add_static_counter(APP_TYPE, 4242, b"new key", "new label")
        assert again.id == counter.id and again.value == 7      # its client closed, the counter stayed
        record = second.counters_reader.find_by_id(again.id)
        assert record is not None and record.label == "a static counter" and record.owner_id == -1
        # a client's own counter with that type and registration id is no static counter
        own = second.add_counter(APP_TYPE, b"", "owned")
        with pytest.raises(AeronError, match=r"cannot add static counter, because a non-static counter exists "
                           rf"\(counterId={own.id}\) for typeId={APP_TYPE} and registrationId={own.registration_id}"):
            second.add_static_counter(APP_TYPE, own.registration_id, b"", "clash")


@pytest.mark.anyio
async def test_async_static_counter_and_next_session_id(aeron_dir: str) -> None:
    async with aeron_async.connect(aeron_dir, embedded_driver=True, **TEST_DRIVER_SETTINGS) as client:
        counter = await client.add_static_counter(APP_TYPE, 99, b"k", "async static")
        assert (await client.add_static_counter(APP_TYPE, 99)).id == counter.id
        record = client.counters_reader.find_by_id(counter.id)
        assert record is not None and (record.registration_id, record.owner_id) == (99, -1)
        first = await client.next_session_id(5)
        assert await client.next_session_id(5) == _next(first)


# ---- next session ids ----


def test_next_session_ids_are_consecutive_and_skip_those_in_use(client: aeron_async.Aeron) -> None:
    stream = 11
    a, b, c = (client.next_session_id(stream) for _ in range(3))
    assert (b, c) == (_next(a), _next(a, 2))
    # an id a publication of the stream holds is skipped; on another stream it is not in use
    held = client.add_exclusive_publication(f"aeron:ipc?session-id={_next(c, 2)}", stream)
    assert client.next_session_id(stream) == _next(c)
    assert client.next_session_id(stream) == _next(c, 3)
    # publications take theirs from the same counter
    assert client.add_exclusive_publication("aeron:ipc", stream + 1).session_id == _next(c, 4)
    held.close()


# ---- channel status counters ----


def test_channel_status_counters_carry_the_registration_id(udp_client: aeron_async.Aeron) -> None:
    sub = udp_client.add_subscription(udp_channel(), 21)
    pub = udp_client.add_publication(udp_channel(), 21)
    with CountersReader(udp_client.aeron_dir) as reader:
        rcv = reader.find_by_type_id_and_registration_id(TYPE_RECEIVE_CHANNEL_STATUS, sub.registration_id)
        snd = reader.find_by_type_id_and_registration_id(TYPE_SEND_CHANNEL_STATUS, pub.registration_id)
        assert rcv is not None and rcv.id == sub.channel_status_id
        assert snd is not None and snd.id == pub.channel_status_id
        sockaddrs = reader.find_by_type_id(TYPE_LOCAL_SOCKADDR)
        assert {r.registration_id for r in sockaddrs} == {sub.registration_id, pub.registration_id}


# ---- the scope of session-id= ----


def test_one_session_id_on_two_channels_of_a_stream(udp_client: aeron_async.Aeron) -> None:
    """Unique per stream on a send endpoint (aeron:udp) and among aeron:ipc publications, as Aeron's."""
    stream, session = 31, 4711
    first = udp_channel(session_id=session)
    udp_client.add_exclusive_publication(first, stream)
    udp_client.add_exclusive_publication(udp_channel(session_id=session), stream)    # another endpoint
    udp_client.add_exclusive_publication(f"aeron:ipc?session-id={session}", stream)
    with pytest.raises(aeron_async.InvalidChannelError, match=(
            rf"^existing publication has clashing sessionId={session} for streamId={stream} "
            rf"channel={re.escape(first)}\. Another publication of the stream on this send endpoint")):
        udp_client.add_exclusive_publication(first, stream)
    with pytest.raises(aeron_async.InvalidChannelError, match=(
            rf"^existing publication has clashing sessionId={session} for streamId={stream} "
            rf"channel=aeron:ipc\?session-id={session}\. Another publication of the stream on aeron:ipc")):
        udp_client.add_exclusive_publication(f"aeron:ipc?session-id={session}", stream)


# ---- parameters Aeron's clients send ----


def test_parameters_aeron_accepts(udp_client: aeron_async.Aeron) -> None:
    # socket buffers on aeron:ipc: accepted and ignored, as Aeron's drivers do
    pub = udp_client.add_publication("aeron:ipc?so-sndbuf=64k|so-rcvbuf=128k", 41)
    sub = udp_client.add_subscription("aeron:ipc?so-rcvbuf=128k|so-sndbuf=64k", 41)
    wait_for(lambda: pub.is_connected and sub.images, timeout=5, what="the IPC image")
    # mtu= on subscriptions: for the publishing end
    for channel in ("aeron:ipc?mtu=8k", udp_channel(mtu="8k"), f"aeron-spy:{udp_channel(mtu='8k')}"):
        udp_client.add_subscription(channel, 42).close()


def test_a_manual_subscription_with_an_endpoint_receives_on_its_destinations(
        udp_client: aeron_async.Aeron) -> None:
    """control-mode=manual with endpoint= (as Aeron's clients write it): the endpoint names the
    channel only, the subscription receives on the destinations added to it."""
    named, port = free_udp_port(), free_udp_port()
    sub = udp_client.add_subscription(f"aeron:udp?control-mode=manual|endpoint=127.0.0.1:{named}", 43)
    sub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{port}")
    pub = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}", 43)
    got: list[bytes] = []

    def delivered() -> bool:
        pub.offer(b"through the destination")
        got.extend(m.data for m in sub.poll_messages())
        return bool(got)

    wait_for(delivered, timeout=10, what="a message over the destination")
    assert got[0] == b"through the destination"
    with pytest.raises(aeron_async.InvalidChannelError, match="remove control="):
        udp_client.add_subscription(f"aeron:udp?control-mode=manual|control=127.0.0.1:{port}", 43)


# ---- Aeron's words ----


def test_errors_in_aerons_words(udp_client: aeron_async.Aeron) -> None:
    for channel in ("aeron:tcp?endpoint=localhost:40123", "udp://localhost:40123", "aeron:"):
        with pytest.raises(aeron_async.InvalidChannelError,
                           match=rf"^invalid URI scheme or transport: {re.escape(channel)}\. "):
            udp_client.add_subscription(channel, 51)
    udp_client.add_publication("aeron:ipc", 52)
    with pytest.raises(aeron_async.InvalidChannelError,
                       match=r"^existing publication has different 'mtu': existing=1408 requested=4096\. "):
        udp_client.add_publication("aeron:ipc?mtu=4096", 52)
    with pytest.raises(aeron_async.InvalidChannelError, match=r"^control has port=0 for subscription"):
        udp_client.add_subscription(udp_channel() + "|control=127.0.0.1:0", 53)
    with pytest.raises(aeron_async.InvalidChannelError,
                       match=r"^URIs for UDP must specify endpoint, control, tags, or control-mode=manual/response"):
        udp_client.add_subscription("aeron:udp?interface=127.0.0.1", 54)
    # values a real aeronmd cannot take, in its words
    for channel, words in (
            ("aeron:ipc?linger=abc", "could not parse linger=abc in URI"),
            ("aeron:ipc?untethered-window-limit-timeout=abc", "could not parse untethered-window-limit-timeout=abc in URI"),
            ("aeron:ipc?term-length=1000", "term length less than min length of 65536: length=1000"),
            ("aeron:ipc?term-length=3m", "term length not a power of 2: length=3145728"),
            ("aeron:ipc?term-length=2g", "term length greater than max length of 1073741824: length=2147483648"),
            ("aeron:ipc?mtu=abc", "could not parse mtu=abc in URI"),
            ("aeron:ipc?mtu=33", "mtuLength must be a multiple of FRAME_ALIGNMENT: mtuLength=33"),
            ("aeron:ipc?mtu=100000", "mtuLength must be a > HEADER_LENGTH and <= MAX_UDP_PAYLOAD_LENGTH: mtuLength=100000")):
        with pytest.raises(aeron_async.InvalidChannelError, match=rf"^{re.escape(words)}\. Channel "):
            udp_client.add_publication(channel, 58)
    # a publication with control= but neither endpoint= nor control-mode= (as a real aeronmd answers it)
    channel = f"aeron:udp?control=127.0.0.1:{free_udp_port()}"
    with pytest.raises(aeron_async.InvalidChannelError, match=(
            rf"^'control' parameter requires that either 'endpoint' or 'control-mode' is specified, "
            rf"channel={re.escape(channel)}\. ")):
        udp_client.add_publication(channel, 57)
    port = free_udp_port()
    mdc = udp_client.add_publication("aeron:udp?control-mode=manual", 56)
    mds = udp_client.add_subscription("aeron:udp?control-mode=manual", 56)
    for target, key in ((mdc, "mtu=1408"), (mds, "so-rcvbuf=128k"), (mds, "rcv-wnd=64k")):
        destination = f"aeron:udp?endpoint=127.0.0.1:{port}|{key}"
        with pytest.raises(aeron_async.InvalidChannelError, match=(
                rf"destinations must not contain the key: {key.split('=')[0]} channel={re.escape(destination)}\. ")):
            target.add_destination(destination)
    with pytest.raises(aeron_async.InvalidChannelError, match=r"^URI length \(5000\) exceeds max supported length "
                       r"\(4095\): aeron:ipc\?alias=xxx"):
        udp_client.add_subscription("aeron:ipc?alias=" + "x" * (5000 - 16), 55)
