"""Channel tags and aliases, and timestamps written into messages, as Aeron's C driver does them
(../shared/reference/aeron-wave3.md, sections 2 and 3): endpoints shared through a tag (an
ephemeral port reachable only that way), tagged spies, entity tags and session-id=tag:<n>, every
error text; channel-snd-ts-offset, channel-rcv-ts-offset and media-rcv-ts-offset stamps a subscriber
reads at their offsets or in the header's reserved value. One driver on 127.0.0.1, every wait bounded."""

from __future__ import annotations

import glob
import os
import struct
import time

import pytest

import aeron_async
from conftest import counters_by_label, free_udp_port, wait_for

STAMP = struct.Struct("<q")


def offer_until(pub: aeron_async.Publication, data: bytes, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while pub.offer(data) <= 0:
        if time.monotonic() > deadline:
            raise AssertionError(f"offer not accepted within {timeout} s")
        time.sleep(0.001)


def receive(sub: aeron_async.Subscription, count: int = 1, timeout: float = 10.0) -> list[aeron_async.Message]:
    got: list[aeron_async.Message] = []
    wait_for(lambda: got.extend(sub.poll_messages()) or len(got) >= count, timeout=timeout, what=f"{count} message(s)")
    return got


def entity_tag_of(aeron_dir: str, pub: aeron_async.Publication) -> int:
    """The log metadata's entity_tag (@448, after the three terms) of a publication's log file."""
    (path,) = glob.glob(os.path.join(aeron_dir, "publications", f"{pub.registration_id}.logbuffer"))
    with open(path, "rb") as log:
        log.seek(3 * pub.term_length + 448)
        return int(STAMP.unpack(log.read(8))[0])


# ---- tags and aliases ----

def test_two_publications_share_an_ephemeral_port_send_endpoint_only_through_a_tag(udp_client: aeron_async.Aeron) -> None:
    port = free_udp_port()
    sub = udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 1)
    sub2 = udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 2)
    first = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|control=127.0.0.1:0|tags=1001", 1)
    second = udp_client.add_publication("aeron:udp?tags=1001", 2)
    assert second.channel_status_id == first.channel_status_id      # one send endpoint
    (bound,) = wait_for(lambda: first.local_socket_addresses, timeout=5, what="the bound address")
    assert bound.startswith("127.0.0.1:") and not bound.endswith(":0")
    assert second.local_socket_addresses == [bound]
    # the same addresses without the tag: port 0 makes the channel unique, so another socket
    untagged = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|control=127.0.0.1:0", 3)
    assert untagged.channel_status_id != first.channel_status_id
    wait_for(lambda: first.is_connected and second.is_connected, timeout=5, what="both connected")
    offer_until(first, b"one")
    offer_until(second, b"two")
    assert [m.data for m in receive(sub)] == [b"one"]
    (message,) = receive(sub2)
    assert message.data == b"two"
    assert sub.images[0].source_identity == sub2.images[0].source_identity == bound   # one socket sent both


def test_subscriptions_join_an_ephemeral_port_receive_endpoint_through_a_tag(udp_client: aeron_async.Aeron) -> None:
    first = udp_client.add_subscription("aeron:udp?endpoint=127.0.0.1:0|tags=2002", 7)
    second = udp_client.add_subscription("aeron:udp?tags=2002", 8)
    assert second.channel_status_id == first.channel_status_id
    (bound,) = wait_for(lambda: first.local_socket_addresses, timeout=5, what="the bound address")
    pub7 = udp_client.add_publication(f"aeron:udp?endpoint={bound}", 7)
    pub8 = udp_client.add_publication(f"aeron:udp?endpoint={bound}", 8)
    wait_for(lambda: pub7.is_connected and pub8.is_connected, timeout=5, what="both connected")
    offer_until(pub7, b"seven")
    offer_until(pub8, b"eight")
    assert [m.data for m in receive(first)] == [b"seven"]
    assert [m.data for m in receive(second)] == [b"eight"]


def test_a_tagged_spy_reads_every_publication_of_the_stream_sent_with_that_tag(udp_client: aeron_async.Aeron) -> None:
    port = free_udp_port()
    sub = udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 5)
    spy = udp_client.add_subscription("aeron-spy:aeron:udp?tags=3003", 5)
    other_spy = udp_client.add_subscription("aeron-spy:aeron:udp?tags=3004", 5)
    pub = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|tags=3003", 5)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    offer_until(pub, b"spied")
    assert [m.data for m in receive(spy)] == [b"spied"]
    assert [m.data for m in receive(sub)] == [b"spied"]
    assert other_spy.images == []


def test_entity_tags_name_publications_and_session_id_tag_copies_one(udp_client: aeron_async.Aeron) -> None:
    port = free_udp_port()
    tagged = udp_client.add_exclusive_publication(
        f"aeron:udp?endpoint=127.0.0.1:{port}|tags=11,77|term-length=128k|mtu=4096", 9)
    aeron_dir = udp_client.aeron_dir
    assert entity_tag_of(aeron_dir, tagged) == 77
    copy = udp_client.add_exclusive_publication(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|session-id=tag:77", 9)
    assert copy.session_id == tagged.session_id    # the same stream and session on another channel: no conflict
    assert copy.term_length == 128 * 1024 == tagged.term_length
    assert copy.max_payload_length == tagged.max_payload_length == 4096 - 32
    assert entity_tag_of(aeron_dir, copy) == -1    # Aeron's "no tag"
    ipc = udp_client.add_publication("aeron:ipc?tags=5,6", 9)
    assert entity_tag_of(aeron_dir, ipc) == 6
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|session-id=tag:78", 10)
    assert "session-id=tag:78 must reference a network publication" in str(info.value)


def test_an_alias_is_not_matched_and_shows_in_the_counter_labels(udp_client: aeron_async.Aeron) -> None:
    port = free_udp_port()
    first = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|tags=4100|alias=orders-eu", 4)
    second = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|tags=4100|alias=orders-us", 4)
    # the alias does not part them: one send endpoint, one publication (one session)
    assert second.channel_status_id == first.channel_status_id and second.session_id == first.session_id
    labels = [label for label in counters_by_label(udp_client.aeron_dir) if "alias=orders-eu" in label]
    assert any(label.startswith("snd-channel") for label in labels), labels
    assert any(label.startswith("pub-pos") for label in labels), labels


def test_a_tag_that_matches_nothing_needs_a_complete_channel_and_bad_tags_are_named(udp_client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        udp_client.add_publication("aeron:udp?tags=4999", 1)
    assert "URI must have explicit control, endpoint, or be manual control-mode when original" in str(info.value)
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|tags=abc", 1)
    assert "could not parse channel tag string: abc" in str(info.value)


@pytest.mark.parametrize("role, channel, error", [
    ("pub", "aeron:udp?tags=4200|control-mode=manual", "matching tag 4200 has mismatched control-mode"),
    ("pub", "aeron:udp?tags=4200|endpoint=127.0.0.1:{other}", "matching tag 4200 has mismatched endpoint or control"),
    ("sub", "aeron:udp?tags=4201|control-mode=manual", "matching tag 4201 has mismatched control-mode"),
    ("sub", "aeron:udp?tags=4201|endpoint=127.0.0.1:{other}", "matching tag 4201 has mismatched endpoint or control"),
])
def test_a_matching_tag_with_other_addresses_or_control_mode_is_refused(
    udp_client: aeron_async.Aeron, role: str, channel: str, error: str
) -> None:
    port = free_udp_port()
    udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|control=127.0.0.1:0|tags=4200", 1)
    udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}|tags=4201", 1)
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        add = udp_client.add_publication if role == "pub" else udp_client.add_subscription
        add(channel.format(other=free_udp_port()), 1)
    assert error in str(info.value)


# ---- timestamps ----

def test_sender_and_receiver_stamp_epoch_nanoseconds_at_their_offsets(udp_client: aeron_async.Aeron) -> None:
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|channel-snd-ts-offset=0|channel-rcv-ts-offset=8"
    sub = udp_client.add_subscription(channel, 1)
    pub = udp_client.add_publication(channel, 1)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    before = time.time_ns()
    offer_until(pub, bytes(24) + b"tail")
    (message,) = receive(sub)
    after = time.time_ns()
    sent, received = STAMP.unpack_from(message.data, 0)[0], STAMP.unpack_from(message.data, 8)[0]
    assert before <= sent <= received <= after, (before, sent, received, after)
    assert message.data[16:] == bytes(8) + b"tail"    # the rest as offered


def test_reserved_puts_the_stamp_in_the_headers_reserved_value(udp_client: aeron_async.Aeron) -> None:
    port = free_udp_port()
    sub = udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}|channel-rcv-ts-offset=reserved", 1)
    pub = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}|channel-snd-ts-offset=0", 1)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    before = time.time_ns()
    offer_until(pub, bytes(8))
    (message,) = receive(sub)
    after = time.time_ns()
    sent = STAMP.unpack_from(message.data, 0)[0]
    assert before <= sent <= message.reserved_value <= after, (before, sent, message.reserved_value, after)


def test_the_kernels_receive_time_is_stamped_on_loopback(udp_client: aeron_async.Aeron) -> None:
    port = free_udp_port()
    sub = udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}|media-rcv-ts-offset=4", 1)
    pub = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}", 1)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    before = time.time_ns()
    offer_until(pub, b"head" + bytes(8))
    (message,) = receive(sub)
    after = time.time_ns()
    assert message.data[:4] == b"head"
    stamped = STAMP.unpack_from(message.data, 4)[0]
    assert before <= stamped <= after, (before, stamped, after)


def test_timestamp_offsets_that_overlap_or_differ_from_the_endpoints_are_refused(udp_client: aeron_async.Aeron) -> None:
    port = free_udp_port()
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        udp_client.add_subscription(
            f"aeron:udp?endpoint=127.0.0.1:{port}|channel-rcv-ts-offset=0|channel-snd-ts-offset=4", 1)
    assert "channel-rcv-ts-offset and channel-snd-ts-offset overlap" in str(info.value)
    udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}|channel-rcv-ts-offset=0", 1)
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 2)
    assert "option conflicts with existing subscription: channel-rcv-ts-offset=-1 (not specified)" in str(info.value)
    pub_port = free_udp_port()
    udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{pub_port}|channel-snd-ts-offset=reserved", 1)
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{pub_port}|channel-snd-ts-offset=8", 2)
    assert "option conflicts with existing subscription: channel-snd-ts-offset=8" in str(info.value)
