"""Untethered subscribers (tether=false), IPC subscribers, spies and the subscribers of network images
alike: one that falls a window behind is dropped (its image goes unavailable, the publisher runs on),
rests, and rejoins."""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Iterator

import pytest

import aeron_async
from conftest import TEST_DRIVER_SETTINGS, free_udp_port, wait_for

SETTINGS = dict(TEST_DRIVER_SETTINGS, untethered_window_limit_timeout=0.3, untethered_resting_timeout=0.6)


@pytest.fixture
def client(aeron_dir: str) -> Iterator[aeron_async.Aeron]:
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **SETTINGS) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as c:
            yield c


@pytest.mark.parametrize("kind", ["ipc", "spy"])
def test_an_untethered_subscriber_is_dropped_and_rejoins(client: aeron_async.Aeron, kind: str) -> None:
    if kind == "ipc":
        channel, stream = "aeron:ipc?term-length=64k", 81
        fast = client.add_subscription("aeron:ipc", stream)
        slow_channel = "aeron:ipc?tether=false"
    else:
        fast = client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 82)
        channel, stream = f"aeron:udp?endpoint={fast.local_socket_addresses[0]}|term-length=64k", 82
        slow_channel = f"aeron-spy:aeron:udp?endpoint={fast.local_socket_addresses[0]}|tether=false"
    events: list[str] = []
    slow = client.add_subscription(
        slow_channel, stream,
        on_available_image=lambda image: events.append("available"),
        on_unavailable_image=lambda image: events.append("unavailable"))
    pub = client.add_publication(channel, stream)
    wait_for(lambda: pub.is_connected and slow.images and fast.images, timeout=5, what="both subscribers")
    slow.poll_messages()  # dispatches the first image event

    def run(until: float) -> None:
        while time.monotonic() < until:
            pub.offer(bytes(1000))
            fast.poll_messages()

    # the slow subscriber reads nothing: after the window-limit timeout it is dropped
    deadline = time.monotonic() + 5
    while not events.count("unavailable"):
        run(time.monotonic() + 0.01)
        slow.images  # noqa: B018 - dispatches image events
        assert time.monotonic() < deadline, "the untethered subscriber was not dropped"
    dropped_at = pub.position
    # the publisher runs on without it (once it rests; a dropped spy lingers for the window-limit
    # timeout first), by far more than the 32 KiB window
    deadline = time.monotonic() + 3
    while pub.position < dropped_at + 64 * 1024:
        run(time.monotonic() + 0.01)
        assert time.monotonic() < deadline, "a dropped untethered subscriber still holds the publisher back"
    # after the resting timeout it rejoins near the current position, with a new image
    deadline = time.monotonic() + 5
    while events.count("available") < 2:
        run(time.monotonic() + 0.01)
        slow.images  # noqa: B018
        assert time.monotonic() < deadline, "the untethered subscriber did not rejoin"
    image = slow.images[0]
    assert image.join_position > dropped_at
    assert events == ["available", "unavailable", "available"]


# ---- untethered timeouts on the channel (reference aeron-wave3.md 5): per stream, from the
# publication's channel, stored in its log's metadata ----

CHANNEL_TIMEOUTS = "untethered-window-limit-timeout=300ms|untethered-linger-timeout=200ms|untethered-resting-timeout=600ms"


@pytest.fixture
def default_client(aeron_dir: str) -> Iterator[aeron_async.Aeron]:
    """A driver with Aeron's default untethered timeouts (5 s, 10 s): only a channel's make it quick."""
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as c:
            yield c


def log_metadata(client: aeron_async.Aeron, registration_id: int) -> bytes:
    with open(os.path.join(client.aeron_dir, "publications", f"{registration_id}.logbuffer"), "rb") as f:
        f.seek(-4096, os.SEEK_END)
        return f.read(4096)


@pytest.mark.parametrize("kind", ["ipc", "spy"])
def test_the_publications_channel_sets_its_untethered_timeouts(default_client: aeron_async.Aeron, kind: str) -> None:
    client = default_client
    if kind == "ipc":
        stream = 83
        fast = client.add_subscription("aeron:ipc", stream)
        channel = f"aeron:ipc?term-length=64k|{CHANNEL_TIMEOUTS}"
        slow_channel = "aeron:ipc?tether=false"
    else:
        stream = 84
        fast = client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", stream)
        endpoint = fast.local_socket_addresses[0]
        channel = f"aeron:udp?endpoint={endpoint}|term-length=64k|{CHANNEL_TIMEOUTS}"
        slow_channel = f"aeron-spy:aeron:udp?endpoint={endpoint}|tether=false"
    events: list[str] = []
    slow = client.add_subscription(
        slow_channel, stream,
        on_available_image=lambda image: events.append("available"),
        on_unavailable_image=lambda image: events.append("unavailable"))
    pub = client.add_publication(channel, stream)
    metadata = log_metadata(client, pub.registration_id)
    window_limit, resting = struct.unpack_from("<qq", metadata, 472)
    (linger,) = struct.unpack_from("<q", metadata, 500)
    assert (window_limit, resting, linger) == (300_000_000, 600_000_000, 200_000_000)
    wait_for(lambda: pub.is_connected and slow.images and fast.images, timeout=5, what="both subscribers")
    slow.poll_messages()

    def run(until: float) -> None:
        while time.monotonic() < until:
            pub.offer(bytes(1000))
            fast.poll_messages()

    # dropped after the channel's 300 ms (the driver's 5 s would time the waits below out), rejoins
    # after its linger and resting timeouts (the driver's 10 s likewise)
    deadline = time.monotonic() + 3
    while events.count("available") < 2:
        run(time.monotonic() + 0.01)
        slow.images  # noqa: B018 - dispatches image events
        assert time.monotonic() < deadline, f"the untethered subscriber was not dropped and back in time: {events}"
    assert events == ["available", "unavailable", "available"]


def test_the_driver_keeps_its_untethered_timeouts_for_other_channels(default_client: aeron_async.Aeron) -> None:
    pub = default_client.add_publication("aeron:ipc", 85)
    metadata = log_metadata(default_client, pub.registration_id)
    window_limit, resting = struct.unpack_from("<qq", metadata, 472)
    (linger,) = struct.unpack_from("<q", metadata, 500)
    # AERON_UNTETHERED_LINGER_TIMEOUT unset: the window-limit timeout
    assert (window_limit, resting, linger) == (5_000_000_000, 10_000_000_000, 5_000_000_000)


@pytest.mark.parametrize(("param", "java_name"), [
    ("untethered-window-limit-timeout", "untetheredWindowLimitTimeoutNs"),
    ("untethered-linger-timeout", "untetheredLingerTimeoutNs"),
    ("untethered-resting-timeout", "untetheredRestingTimeoutNs"),
])
def test_a_channel_timeout_must_be_above_the_timer_interval(
    default_client: aeron_async.Aeron, param: str, java_name: str
) -> None:
    # the test driver's timer interval is 50 ms
    with pytest.raises(aeron_async.InvalidChannelError, match=f"{java_name}=50000000 <= timerIntervalNs=50000000"):
        default_client.add_publication(f"aeron:ipc?{param}=50ms", 86)
    default_client.add_publication(f"aeron:ipc?{param}=51ms", 86).close()


def test_a_subscriptions_untethered_timeouts_are_refused_as_per_stream(default_client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.InvalidChannelError, match="per stream: give it on the publication's channel"):
        default_client.add_subscription("aeron:ipc?tether=false|untethered-linger-timeout=2s", 87)
    with pytest.raises(aeron_async.InvalidChannelError, match="per stream: give it on the publication's channel"):
        default_client.add_subscription("aeron-spy:aeron:udp?endpoint=127.0.0.1:40999|untethered-linger-timeout=2s", 87)


# ---- network images (reference aeron-wave3.md 5): an image's untethered subscribers follow the
# timeouts of the channel that opened its receive endpoint ----

def drop_and_rejoin(pub: aeron_async.Publication, fast: aeron_async.Subscription, slow: aeron_async.Subscription,
                    events: list[str], timeout: float) -> int:
    """Publishes while `fast` reads and `slow` reads nothing, until `slow` was dropped and is back;
    returns the publisher's position when it was dropped."""
    slow.poll_messages()  # dispatches the first image event
    dropped_at = -1
    deadline = time.monotonic() + timeout
    while events.count("available") < 2:
        until = time.monotonic() + 0.01
        while time.monotonic() < until:
            pub.offer(bytes(1000))
            fast.poll_messages()
        slow.images  # noqa: B018 - dispatches image events
        if dropped_at < 0 and "unavailable" in events:
            dropped_at = pub.position
        assert time.monotonic() < deadline, f"the untethered subscriber was not dropped and back in time: {events}"
    assert events == ["available", "unavailable", "available"]
    return dropped_at


def image_log_metadata(client: aeron_async.Aeron, image: aeron_async.Image) -> tuple[int, int, int]:
    with open(os.path.join(client.aeron_dir, "images", f"{image.correlation_id}.logbuffer"), "rb") as f:
        f.seek(-4096, os.SEEK_END)
        metadata = f.read(4096)
    window_limit, resting = struct.unpack_from("<qq", metadata, 472)
    (linger,) = struct.unpack_from("<q", metadata, 500)
    return window_limit, resting, linger


def test_a_network_subscriptions_channel_sets_its_images_untethered_timeouts(default_client: aeron_async.Aeron) -> None:
    client = default_client
    stream = 89
    endpoint = f"127.0.0.1:{free_udp_port()}"
    # the first subscription opens the receive endpoint: its channel's timeouts are the stream's
    fast = client.add_subscription(f"aeron:udp?endpoint={endpoint}|{CHANNEL_TIMEOUTS}", stream)
    events: list[str] = []
    slow = client.add_subscription(
        f"aeron:udp?endpoint={endpoint}|tether=false", stream,
        on_available_image=lambda image: events.append("available"),
        on_unavailable_image=lambda image: events.append("unavailable"))
    pub = client.add_publication(f"aeron:udp?endpoint={endpoint}|term-length=64k", stream)
    wait_for(lambda: pub.is_connected and slow.images and fast.images, timeout=5, what="both subscribers")
    assert image_log_metadata(client, fast.images[0]) == (300_000_000, 600_000_000, 200_000_000)
    # dropped after the channel's 300 ms, back after its 200 ms linger and 600 ms rest (the driver's
    # 5 s and 10 s would time this out): the publisher ran on meanwhile, far past the receiver window
    # (32 KiB: half the term)
    dropped_at = drop_and_rejoin(pub, fast, slow, events, timeout=3)
    assert slow.images[0].join_position > dropped_at + 32 * 1024
    # the fast one was never dropped
    assert len(fast.images) == 1


def test_the_drivers_default_untethers_network_subscriptions_too(aeron_dir: str) -> None:
    settings = dict(SETTINGS, tether_subscriptions=False, term_buffer_length="64k")
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as client:
        endpoint = f"127.0.0.1:{free_udp_port()}"
        fast = client.add_subscription(f"aeron:udp?endpoint={endpoint}|tether=true", 90)
        events: list[str] = []
        slow = client.add_subscription(
            f"aeron:udp?endpoint={endpoint}", 90,
            on_available_image=lambda image: events.append("available"),
            on_unavailable_image=lambda image: events.append("unavailable"))
        pub = client.add_publication(f"aeron:udp?endpoint={endpoint}", 90)
        wait_for(lambda: pub.is_connected and slow.images and fast.images, timeout=5, what="both subscribers")
        # the driver's timeouts, the subscription's channel giving none
        assert image_log_metadata(client, fast.images[0]) == (300_000_000, 600_000_000, 300_000_000)
        drop_and_rejoin(pub, fast, slow, events, timeout=5)


def test_subscriptions_sharing_a_receive_endpoint_share_its_untethered_timeouts(default_client: aeron_async.Aeron) -> None:
    client = default_client
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    client.add_subscription(f"{channel}|untethered-window-limit-timeout=300ms", 91)
    with pytest.raises(aeron_async.InvalidChannelError,
                       match=r"untethered-window-limit-timeout=400ms differs from the 300000000ns of the receive "
                             r"endpoint it shares .*give the same value or leave it out"):
        client.add_subscription(f"{channel}|untethered-window-limit-timeout=400ms|tether=false", 91)
    with pytest.raises(aeron_async.InvalidChannelError, match=r"untethered-resting-timeout=2s differs from the 10000000000ns"):
        client.add_subscription(f"{channel}|untethered-resting-timeout=2s", 92)
    # the same value, or none: the endpoint's
    client.add_subscription(f"{channel}|untethered-window-limit-timeout=300000us|tether=false", 91)
    client.add_subscription(f"{channel}|tether=false", 92)
    # and each above the timer interval, as on a publication's channel
    with pytest.raises(aeron_async.InvalidChannelError, match="untetheredLingerTimeoutNs=50000000 <= timerIntervalNs=50000000"):
        client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|untethered-linger-timeout=50ms", 93)


def test_a_shared_publication_keeps_its_streams_untethered_timeouts(default_client: aeron_async.Aeron) -> None:
    first = default_client.add_publication("aeron:ipc?untethered-window-limit-timeout=300ms", 88)
    with pytest.raises(aeron_async.InvalidChannelError, match="untethered-window-limit-timeout"):
        default_client.add_publication("aeron:ipc?untethered-window-limit-timeout=400ms", 88)
    same = default_client.add_publication("aeron:ipc?untethered-window-limit-timeout=300000us", 88)
    assert same.session_id == first.session_id
