"""Revoking an exclusive publication and rejecting an image (Aeron 1.48, reference aeron-wave3.md 4.1
and 4.2), over IPC and UDP: the stream ends at once for every subscriber (`Image.is_publication_revoked`),
a rejected image's publisher hears of it (`Aeron.on_publication_error`), Aeron's system counters
40-42 move, and Aeron's error texts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import aeron_async
from aeron_async.counters import SYSTEM_COUNTER_NAMES
from conftest import TEST_DRIVER_SETTINGS, UDP_SETTINGS, free_udp_port, system_counter, system_counters, wait_for

REVOKED = "Publications Revoked"
IMAGES_REVOKED = "Publication Images Revoked"
REJECTED = "Images rejected"
# a rejected network image goes at its liveness timeout: short here
SETTINGS = dict(UDP_SETTINGS, image_liveness_timeout=1.0, publication_linger_timeout=0.5)


@pytest.fixture
def client(aeron_dir: str) -> Iterator[aeron_async.Aeron]:
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **SETTINGS) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as c:
            yield c


def watched_subscription(
    client: aeron_async.Aeron, channel: str, stream_id: int
) -> tuple[aeron_async.Subscription, list[tuple[str, aeron_async.Image]]]:
    events: list[tuple[str, aeron_async.Image]] = []
    sub = client.add_subscription(
        channel, stream_id,
        on_available_image=lambda image: events.append(("available", image)),
        on_unavailable_image=lambda image: events.append(("unavailable", image)))
    return sub, events


def wait_for_event(sub: aeron_async.Subscription, events: list[tuple[str, aeron_async.Image]], kind: str,
                   count: int = 1, timeout: float = 5.0) -> aeron_async.Image:
    def seen() -> aeron_async.Image | None:
        sub.images  # noqa: B018 - dispatches image events
        matching = [image for event, image in events if event == kind]
        return matching[count - 1] if len(matching) >= count else None
    image = wait_for(seen, timeout=timeout, what=f"{kind} image event #{count}")
    assert image is not None
    return image


def udp_channel(sub: aeron_async.Subscription) -> str:
    return f"aeron:udp?endpoint={sub.local_socket_addresses[0]}"


# ---- revoke ----

@pytest.mark.parametrize("media", ["ipc", "udp"])
def test_a_revoked_publication_ends_its_stream_at_once(client: aeron_async.Aeron, media: str) -> None:
    if media == "ipc":
        sub, events = watched_subscription(client, "aeron:ipc", 71)
        channel = "aeron:ipc"
    else:
        sub, events = watched_subscription(client, "aeron:udp?endpoint=127.0.0.1:0", 71)
        channel = udp_channel(sub)
    pub = client.add_exclusive_publication(channel, 71)
    wait_for(lambda: pub.is_connected and sub.images, timeout=5, what="the subscriber's image")
    image = wait_for_event(sub, events, "available")
    assert not image.is_publication_revoked
    for _ in range(10):
        wait_for(lambda: pub.offer(bytes(100)) > 0, timeout=5, what="an offer")

    # nothing was read: a close would drain (and wait for the subscriber); a revoke does not
    pub.revoke()
    assert pub.is_closed
    wait_for_event(sub, events, "unavailable")
    assert image.is_publication_revoked
    assert image.is_end_of_stream
    assert system_counter(client.aeron_dir, REVOKED) == 1
    if media == "udp":
        assert system_counter(client.aeron_dir, IMAGES_REVOKED) == 1

    # a plain close is no revoke
    other = client.add_exclusive_publication(channel, 71)
    second = wait_for_event(sub, events, "available", count=2)
    other.close()
    wait_for_event(sub, events, "unavailable", count=2)
    assert not second.is_publication_revoked
    assert system_counter(client.aeron_dir, REVOKED) == 1


def test_a_revoke_ends_every_image_of_a_multi_destination_publication(client: aeron_async.Aeron) -> None:
    """A manual multi-destination-cast publication sends to a plain subscription and, over two
    destinations, to a multi-destination subscription: revoked, each image ends with the revoked flag
    (the multi-destination one once both its connections are at end of stream, reference
    aeron-wave3.md 4.1), each counted once."""
    e1, e2, e3 = (f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}" for _ in range(3))
    mds, mds_events = watched_subscription(client, "aeron:udp?control-mode=manual", 70)
    mds.add_destination(e1)
    mds.add_destination(e2)
    plain, plain_events = watched_subscription(client, e3, 70)
    pub = client.add_exclusive_publication("aeron:udp?control-mode=manual", 70)
    for destination in (e1, e2, e3):
        pub.add_destination(destination)
    images = [wait_for_event(mds, mds_events, "available"), wait_for_event(plain, plain_events, "available")]
    for _ in range(10):
        wait_for(lambda: pub.offer(bytes(100)) > 0, timeout=5, what="an offer")
    pub.revoke()
    wait_for_event(mds, mds_events, "unavailable")
    wait_for_event(plain, plain_events, "unavailable")
    assert all(image.is_publication_revoked and image.is_end_of_stream for image in images)
    assert system_counter(client.aeron_dir, REVOKED) == 1
    assert system_counter(client.aeron_dir, IMAGES_REVOKED) == 2
    assert [event for event, _ in mds_events] == ["available", "unavailable"]


def test_only_an_exclusive_publication_can_be_revoked(client: aeron_async.Aeron) -> None:
    pub = client.add_publication("aeron:ipc", 72)
    assert not hasattr(pub, "revoke")
    with pytest.raises(aeron_async.InvalidArgumentError, match="not exclusive"):
        aeron_async.ExclusivePublication.revoke_on_close(pub)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_revoke_on_close_from_async_code(aeron_dir: str, anyio_backend: Any) -> None:
    context = aeron_async.DriverContext(**TEST_DRIVER_SETTINGS)
    async with aeron_async.connect(aeron_dir, embedded_driver=True, driver_context=context, driver_timeout=5.0) as client:
        sub = await client.add_subscription("aeron:ipc", 73)
        pub = await client.add_exclusive_publication("aeron:ipc", 73)
        concurrent = await client.add_publication("aeron:ipc", 74)
        with pytest.raises(aeron_async.InvalidArgumentError, match="not exclusive"):
            concurrent.revoke_on_close()
        with anyio.fail_after(5):
            while not sub.subscription.images:
                await anyio.sleep(0.001)
        image = sub.subscription.images[0]
        await pub.offer(b"never read")
        pub.revoke_on_close()
        await pub.aclose()
        with anyio.fail_after(5):
            while not image.is_closed:
                sub.subscription.images  # noqa: B018 - dispatches image events
                await anyio.sleep(0.001)
        assert image.is_publication_revoked
        assert system_counter(client.aeron_dir, REVOKED) == 1


# ---- reject ----

def test_a_rejected_udp_image_tells_the_publisher_and_goes(client: aeron_async.Aeron) -> None:
    frames: list[aeron_async.PublicationErrorFrame] = []
    client.on_publication_error = frames.append
    sub, events = watched_subscription(client, "aeron:udp?endpoint=127.0.0.1:0", 75)
    pub = client.add_publication(udp_channel(sub), 75)
    wait_for(lambda: pub.is_connected, timeout=5, what="the publication connected")
    image = wait_for_event(sub, events, "available")

    image.reject("not for this subscriber")
    assert system_counter(client.aeron_dir, REJECTED) == 1
    wait_for(lambda: client.poll_publication_errors() or frames, timeout=5, what="the publication error")
    frame = frames[0]
    assert frame.registration_id == pub.registration_id
    assert (frame.session_id, frame.stream_id) == (pub.session_id, 75)
    assert frame.error_code == 13
    assert frame.error_message == "not for this subscriber"
    assert frame.source_address.startswith("127.0.0.1:")
    assert frame.group_tag == -1
    counters = system_counters(client.aeron_dir)
    assert counters["Error Frames sent"] >= 1 and counters["Error Frames received"] >= 1

    # its data is dropped from now on; it goes at the liveness timeout, and the publisher (still
    # there) comes back as a new image: a reject is not permanent
    wait_for_event(sub, events, "unavailable", timeout=5)
    assert not image.is_publication_revoked
    again = wait_for_event(sub, events, "available", count=2, timeout=5)
    assert again.correlation_id != image.correlation_id
    client.poll_publication_errors()
    assert len(frames) == 1, "the publisher hears of each receiver's first ERR only"


def test_a_rejected_ipc_image_unlinks_every_subscriber_for_a_while(client: aeron_async.Aeron) -> None:
    sub, events = watched_subscription(client, "aeron:ipc", 76)
    other, other_events = watched_subscription(client, "aeron:ipc", 76)
    pub = client.add_publication("aeron:ipc", 76)
    image = wait_for_event(sub, events, "available")
    wait_for_event(other, other_events, "available")
    assert pub.is_connected

    image.reject("ipc says no")
    wait_for_event(sub, events, "unavailable")
    wait_for_event(other, other_events, "unavailable")
    assert not pub.is_connected
    frames = wait_for(client.poll_publication_errors, timeout=5, what="the publication error")
    assert len(frames) == 1
    assert frames[0].registration_id == pub.registration_id
    assert frames[0].receiver_id == -1 and frames[0].group_tag == -1
    assert frames[0].source_address == "127.0.0.1:0"
    assert (frames[0].error_code, frames[0].error_message) == (13, "ipc says no")
    assert system_counter(client.aeron_dir, REJECTED) == 1
    # after the cool-down (the image liveness timeout, 1 s here) both link again
    wait_for_event(sub, events, "available", count=2, timeout=5)
    wait_for_event(other, other_events, "available", count=2, timeout=5)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected again")


def test_reject_errors_are_aerons(client: aeron_async.Aeron) -> None:
    sub = client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 77)
    spy = client.add_subscription(f"aeron-spy:{udp_channel(sub)}", 77)
    pub = client.add_exclusive_publication(udp_channel(sub), 77)
    wait_for(lambda: spy.images and sub.images, timeout=5, what="the images")
    with pytest.raises(aeron_async.InvalidArgumentError, match="^spies can not reject images$"):
        spy.images[0].reject("no")
    with pytest.raises(aeron_async.InvalidArgumentError, match="^Invalidation reason_text must be 1023 bytes or less$"):
        sub.images[0].reject("x" * 1024)
    sub.images[0].reject("x" * 1023)   # the longest reason is taken

    # an image the driver no longer has
    ipc_sub = client.add_subscription("aeron:ipc", 78)
    ipc_pub = client.add_exclusive_publication("aeron:ipc", 78)
    gone = wait_for(lambda: ipc_sub.images and ipc_sub.images[0], timeout=5, what="the IPC image")
    ipc_pub.close()
    wait_for(lambda: not os.path.exists(
        os.path.join(client.aeron_dir, "publications", f"{gone.correlation_id}.logbuffer")), timeout=5,
        what="the IPC publication gone from the driver")
    with pytest.raises(aeron_async.RegistrationError,
                       match=f"^Unable to resolve image for correlationId={gone.correlation_id}$"):
        gone.reject("too late")
    pub.close()


@pytest.mark.anyio
async def test_reject_from_async_code(aeron_dir: str, anyio_backend: Any) -> None:
    context = aeron_async.DriverContext(**dict(TEST_DRIVER_SETTINGS, image_liveness_timeout=1.0))
    async with aeron_async.connect(aeron_dir, embedded_driver=True, driver_context=context, driver_timeout=5.0) as client:
        frames: list[aeron_async.PublicationErrorFrame] = []
        client.on_publication_error = frames.append
        sub = await client.add_subscription("aeron:ipc", 79)
        pub = await client.add_publication("aeron:ipc", 79)
        with anyio.fail_after(5):
            while not sub.subscription.images:
                await anyio.sleep(0.001)
        views = await sub.image_views()
        await views[0].reject("async no")
        with anyio.fail_after(5):
            while not frames:
                client.poll_publication_errors()
                await anyio.sleep(0.001)
        assert frames[0].error_message == "async no" and frames[0].registration_id == pub.registration_id


def test_aerons_system_counters_keep_aerons_ids(client: aeron_async.Aeron) -> None:
    labels = {record.system_counter_id: record.label for record in client.counters_reader.counters()
              if record.type_id == 0}
    assert (labels[40], labels[41], labels[42]) == (REVOKED, IMAGES_REVOKED, REJECTED)
    assert labels[43] == "Invalid client commands"
    assert (SYSTEM_COUNTER_NAMES[40], SYSTEM_COUNTER_NAMES[41], SYSTEM_COUNTER_NAMES[42], SYSTEM_COUNTER_NAMES[43]) == (
        "publications_revoked", "publication_images_revoked", "images_rejected", "invalid_client_commands")
