"""Untethered subscribers (tether=false), IPC subscribers and spies alike: one that falls a window
behind is dropped (its image goes unavailable, the publisher runs on), rests, and rejoins."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

import aeron_async
from conftest import TEST_DRIVER_SETTINGS, wait_for

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
