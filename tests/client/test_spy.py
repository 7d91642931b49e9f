"""Spy subscriptions (aeron-spy: + a UDP channel): a local network publication's log read in place,
with Aeron's flow-control semantics (a spy holds the publisher back while the publication is
connected; with ssc=true spies keep it connected), including after its remote receiver is gone."""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Iterator

import pytest

import aeron_async
from aeron_async import ChannelStatus
from aeron_async.counters import TYPE_SUBSCRIBER_POSITION
from conftest import TEST_DRIVER_SETTINGS, new_aeron_dir, offer_all, start_driver, wait_for

SETTINGS = dict(TEST_DRIVER_SETTINGS, term_buffer_length="64k", publication_connection_timeout=0.5,
                untethered_window_limit_timeout=0.3, untethered_resting_timeout=5.0)
WINDOW = 32 * 1024  # half the 64 KiB term: how far a publisher may run ahead of its slowest consumer


@pytest.fixture
def client(aeron_dir: str) -> Iterator[aeron_async.Aeron]:
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **SETTINGS) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as c:
            yield c


@pytest.fixture
def remote() -> Iterator[aeron_async.Aeron]:
    """A second driver (the remote receiver's), with a client."""
    path = new_aeron_dir()
    driver = aeron_async.MediaDriver.launch(aeron_dir=path, **SETTINGS)
    c = aeron_async.Aeron.connect(path, driver_timeout=5.0)
    try:
        yield c
    finally:
        c.close()
        driver.close()


def receiver_channel(client: aeron_async.Aeron, stream_id: int) -> tuple[aeron_async.Subscription, str]:
    sub = client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", stream_id)
    return sub, f"aeron:udp?endpoint={sub.local_socket_addresses[0]}"


def spied_publication(client: aeron_async.Aeron, stream_id: int) -> tuple[
        aeron_async.Subscription, str, aeron_async.Publication, aeron_async.Subscription]:
    """(receiver, its channel, a publication to it, a spy of that), once the spy has its image and
    the publication is connected."""
    receiver, channel = receiver_channel(client, stream_id)
    pub = client.add_publication(channel, stream_id)
    spy = client.add_subscription("aeron-spy:" + channel, stream_id)
    wait_for(lambda: spy.images and pub.is_connected, timeout=5, what="the spy and the receiver")
    return receiver, channel, pub, spy


def drain(sub: aeron_async.Subscription, into: list[bytes]) -> int:
    messages = sub.poll_messages()
    into.extend(m.data for m in messages)
    return len(messages)


def moves_two_windows(pub: aeron_async.Publication, receiver: aeron_async.Subscription, received: list[bytes],
                      timeout: float, why: str) -> None:
    """Offers and drains `receiver` until the publication has moved two windows; fails with `why`
    after `timeout` seconds."""
    start = pub.position
    deadline = time.monotonic() + timeout
    while pub.position < start + 2 * WINDOW:
        pub.offer(bytes(1000))
        drain(receiver, received)
        assert time.monotonic() < deadline, why


def test_a_spy_reads_what_the_publication_sends(client: aeron_async.Aeron) -> None:
    receiver, channel = receiver_channel(client, 61)
    pub = client.add_publication(channel, 61)
    spy = client.add_subscription("aeron-spy:" + channel, 61)
    assert spy.channel_status == ChannelStatus.ACTIVE and spy.local_socket_addresses == []
    image = wait_for(lambda: spy.images, timeout=5, what="the spy's image")[0]
    assert image.source_identity == "aeron:ipc" and image.session_id == pub.session_id
    wait_for(lambda: pub.is_connected, timeout=5, what="the receiver")
    sent = [f"message {i}".encode() * (1 + i % 50) for i in range(300)]
    spied: list[bytes] = []
    received: list[bytes] = []
    for data in sent:
        offer_all(pub, data)
        drain(spy, spied)
        drain(receiver, received)
    wait_for(lambda: drain(spy, spied) + drain(receiver, received) == 0 and len(spied) == len(received) == len(sent),
             timeout=10, what="every message at the spy and the receiver")
    assert spied == sent and received == sent
    # the spy's position is a sub-pos counter, labelled with the spy channel, as in Aeron
    reader = client.counters_reader
    positions = [r for r in reader.find_by_type_id(TYPE_SUBSCRIBER_POSITION) if r.registration_id == spy.registration_id]
    assert len(positions) == 1
    assert positions[0].label.startswith(f"sub-pos: {spy.registration_id} {pub.session_id} 61 aeron-spy:{channel}")
    assert positions[0].value == pub.position


def test_a_spy_added_first_links_when_the_publication_appears(client: aeron_async.Aeron) -> None:
    receiver, channel = receiver_channel(client, 62)
    spy = client.add_subscription("aeron-spy:" + channel, 62)
    other_stream = client.add_subscription("aeron-spy:" + channel, 63)
    assert spy.images == []
    pub = client.add_publication(channel, 62)
    wait_for(lambda: spy.images, timeout=5, what="the spy's image")
    wait_for(lambda: pub.is_connected, timeout=5, what="the receiver")
    offer_all(pub, b"hello spy")
    got = wait_for(lambda: spy.poll_messages(), timeout=5, what="the message")
    assert [m.data for m in got] == [b"hello spy"]
    assert other_stream.images == []  # another stream's spy does not match
    # nor does a spy of another channel (canonical form) see it
    elsewhere = client.add_subscription("aeron-spy:aeron:udp?endpoint=127.0.0.1:1", 62)
    time.sleep(0.1)
    assert elsewhere.images == []


def test_a_tethered_spy_holds_the_publisher_back_and_an_untethered_one_is_dropped(client: aeron_async.Aeron) -> None:
    receiver, channel, pub, spy = spied_publication(client, 64)
    received: list[bytes] = []
    accepted = 0
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:  # the receiver reads; the spy does not
        if pub.offer(bytes(1000)) > 0:
            accepted += 1
        drain(receiver, received)
    assert pub.position <= WINDOW + 1100, "a spy that does not read must hold the publisher to a window"
    assert pub.offer(bytes(1000)) == aeron_async.BACK_PRESSURED
    spied: list[bytes] = []
    wait_for(lambda: drain(spy, spied) == 0 and len(spied) == accepted, timeout=5, what="the spy to catch up")
    wait_for(lambda: pub.offer(bytes(1000)) > 0, timeout=5, what="the limit to move on once the spy read")
    spy.close()

    untethered = client.add_subscription("aeron-spy:" + channel + "|tether=false", 64)
    unavailable = wait_for(lambda: untethered.images, timeout=5, what="the untethered spy's image")
    deadline = time.monotonic() + 5
    while untethered.images and time.monotonic() < deadline:  # dropped after the window-limit timeout
        pub.offer(bytes(1000))
        drain(receiver, received)
    assert not untethered.images, "an untethered spy behind the window must be dropped"
    assert unavailable[0].is_closed
    # once it has lingered (the window-limit timeout) it rests (5 s) and no longer holds the publisher back
    moves_two_windows(pub, receiver, received, 3.0, "a dropped untethered spy must not hold the publisher back")


def test_ssc_spies_keep_a_publication_without_receivers_connected(client: aeron_async.Aeron) -> None:
    channel = "aeron:udp?endpoint=127.0.0.1:9"  # nothing listens there
    lone = client.add_publication(channel + "|ssc=true", 65)
    time.sleep(0.1)
    assert not lone.is_connected and lone.offer(b"x") == aeron_async.NOT_CONNECTED
    spy = client.add_subscription("aeron-spy:" + channel, 65)
    wait_for(lambda: lone.is_connected, timeout=5, what="ssc to connect the publication through its spy")
    sent = [bytes([i % 256]) * 2000 for i in range(200)]  # several windows: only the spy paces it
    spied: list[bytes] = []
    for data in sent:
        deadline = time.monotonic() + 5
        while lone.offer(data) < 0:
            drain(spy, spied)
            assert time.monotonic() < deadline, "the publication did not move at its spy's pace"
    wait_for(lambda: drain(spy, spied) == 0 and len(spied) == len(sent), timeout=5, what="everything at the spy")
    assert spied == sent
    spy.close()
    wait_for(lambda: not lone.is_connected, timeout=5, what="the publication to disconnect without its spy")


def test_without_ssc_a_spy_does_not_connect_a_publication(client: aeron_async.Aeron) -> None:
    channel = "aeron:udp?endpoint=127.0.0.1:9"
    pub = client.add_publication(channel, 66)
    spy = client.add_subscription("aeron-spy:" + channel, 66)
    wait_for(lambda: spy.images, timeout=5, what="the spy's image")
    time.sleep(0.2)
    assert not pub.is_connected and pub.offer(b"x") == aeron_async.NOT_CONNECTED


@pytest.mark.parametrize("ssc", [True, False])
def test_a_spy_on_a_publication_whose_remote_receiver_is_gone(
    client: aeron_async.Aeron, remote: aeron_async.Aeron, ssc: bool
) -> None:
    receiver, channel = receiver_channel(remote, 67)
    pub = client.add_publication(channel + ("|ssc=true" if ssc else ""), 67)
    spy = client.add_subscription("aeron-spy:" + channel, 67)
    wait_for(lambda: spy.images and pub.is_connected, timeout=5, what="the spy and the remote receiver")
    spied: list[bytes] = []
    received: list[bytes] = []
    for i in range(50):
        offer_all(pub, b"before %d" % i)
        drain(spy, spied)
    wait_for(lambda: drain(receiver, received) == 0 and len(received) == 50, timeout=5, what="the remote receiver")
    receiver.close()  # the remote receiver goes away; its driver stops sending status messages
    remote.close()
    gone = time.monotonic()
    deadline = gone + 5
    after = 0
    refused = 0
    while time.monotonic() < deadline:
        result = pub.offer(b"after %d" % after)
        if result > 0:
            after += 1
        elif result == aeron_async.NOT_CONNECTED:
            refused = result
            if not ssc:
                break
        drain(spy, spied)
        if ssc and time.monotonic() > gone + 1.0:  # twice the publication connection timeout
            break
        time.sleep(0.001)
    wait_for(lambda: drain(spy, spied) == 0 and len(spied) == 50 + after, timeout=5, what="the spy to read all")
    # the spy read everything the publication accepted, in order, before and after the receiver left
    assert spied == [b"before %d" % i for i in range(50)] + [b"after %d" % i for i in range(after)]
    if ssc:
        assert refused == 0 and pub.is_connected, "with ssc=true the spy keeps the publication going"
        assert after > 100
    else:
        assert refused == aeron_async.NOT_CONNECTED and not pub.is_connected


def test_a_closed_publication_ends_the_spys_stream(client: aeron_async.Aeron) -> None:
    receiver, channel = receiver_channel(client, 68)
    pub = client.add_publication(channel + "|linger=0", 68)
    spy = client.add_subscription("aeron-spy:" + channel, 68)
    image = wait_for(lambda: spy.images, timeout=5, what="the spy's image")[0]
    wait_for(lambda: pub.is_connected, timeout=5, what="the receiver")
    words = [b"last words %d" % i for i in range(20)]
    for data in words:
        offer_all(pub, data)
    final = pub.position
    pub.close()
    # draining waits for a spy that has not read yet (linger=0 does not cut it short), as in Aeron
    time.sleep(0.3)
    assert spy.images == [image]
    spied: list[bytes] = []
    wait_for(lambda: drain(spy, spied) == 0 and image.is_end_of_stream, timeout=5, what="end of stream at the spy")
    assert spied == words and image.end_of_stream_position == final
    wait_for(lambda: not spy.images, timeout=10, what="the spy's image to go")
    reader = client.counters_reader
    wait_for(lambda: not [r for r in reader.find_by_type_id(TYPE_SUBSCRIBER_POSITION)
                          if r.registration_id == spy.registration_id], timeout=10, what="the spy's counter to go")


def test_closing_a_spy_frees_its_position_and_releases_the_publisher(client: aeron_async.Aeron) -> None:
    receiver, _, pub, spy = spied_publication(client, 69)
    received: list[bytes] = []
    deadline = time.monotonic() + 5
    while pub.offer(bytes(1000)) > 0:  # up to the window the idle spy allows
        drain(receiver, received)
        assert time.monotonic() < deadline
    reader = client.counters_reader
    spy_id = spy.registration_id
    spy.close()
    wait_for(lambda: not [r for r in reader.find_by_type_id(TYPE_SUBSCRIBER_POSITION) if r.registration_id == spy_id],
             timeout=5, what="the spy's counter to be freed")
    moves_two_windows(pub, receiver, received, 5.0, "the publisher is still held back by a closed spy")


def test_spies_that_cannot_work_are_refused(client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.InvalidChannelError, match="spy reads a network publication"):
        client.add_subscription("aeron-spy:aeron:ipc", 70)
    with pytest.raises(aeron_async.InvalidChannelError, match="only subscribes"):
        client.add_publication("aeron-spy:aeron:udp?endpoint=127.0.0.1:40999", 70)


@pytest.mark.anyio
async def test_an_async_spy(aeron_dir: str) -> None:
    async with aeron_async.connect(aeron_dir, embedded_driver=True, **SETTINGS) as aclient:
        channel = "aeron:udp?endpoint=127.0.0.1:9|ssc=true"
        pub = await aclient.add_publication(channel, 71)
        spy = await aclient.add_subscription("aeron-spy:aeron:udp?endpoint=127.0.0.1:9", 71)
        for i in range(100):
            await pub.offer(b"async %d" % i)
            assert (await spy.receive()).data == b"async %d" % i


def test_a_spy_goes_on_when_the_remote_driver_process_is_killed(client: aeron_async.Aeron) -> None:
    remote_dir = new_aeron_dir()
    proc = start_driver(remote_dir)
    try:
        remote = aeron_async.Aeron.connect(remote_dir, driver_timeout=5.0)
        receiver, channel = receiver_channel(remote, 72)
        pub = client.add_publication(channel + "|ssc=true", 72)
        spy = client.add_subscription("aeron-spy:" + channel, 72)
        wait_for(lambda: spy.images and pub.is_connected and receiver.images, timeout=10,
                 what="the spy and the remote receiver")
        spied: list[bytes] = []
        for i in range(20):
            offer_all(pub, b"%d" % i)
        proc.send_signal(signal.SIGKILL)  # the remote receiver's driver dies without a word
        proc.wait(10)
        killed = time.monotonic()
        sent = 20
        while time.monotonic() < killed + 1.5:  # three publication connection timeouts
            if pub.offer(b"%d" % sent) > 0:
                sent += 1
            drain(spy, spied)
            time.sleep(0.001)
        assert pub.is_connected, "ssc: the spy keeps the publication connected without its receiver"
        wait_for(lambda: drain(spy, spied) == 0 and len(spied) == sent, timeout=5, what="the spy to read all")
        assert spied == [b"%d" % i for i in range(sent)] and sent > 100
        remote.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        shutil.rmtree(remote_dir, ignore_errors=True)
