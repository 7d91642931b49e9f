"""Nothing dropped silently: a subscription announces every image, however many arrive before it is
next polled (the client's event ring grows on image events), for the synchronous client's callbacks
and image list and for the async facade's, on every event loop."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import aeron_async
from aeron_async._ffi import lib
from conftest import TEST_DRIVER_SETTINGS, wait_for

CHANNEL = "aeron:ipc?term-length=64k"
PUBLICATIONS = 300


def test_three_hundred_publications_give_three_hundred_images(client: aeron_async.Aeron) -> None:
    available: list[aeron_async.Image] = []
    unavailable: list[aeron_async.Image] = []
    sub = client.add_subscription(CHANNEL, 41, on_available_image=available.append,
                                  on_unavailable_image=unavailable.append)
    pubs = [client.add_exclusive_publication(CHANNEL, 41) for _ in range(PUBLICATIONS)]
    # nothing takes the subscription's events while every image arrives: only the native count is read
    wait_for(lambda: lib.aa_subscription_image_count(sub._ptr) == PUBLICATIONS, what="every image")
    assert sub.poll(lambda data, header: None, 10) == 0
    assert len(available) == PUBLICATIONS
    assert sorted(image.session_id for image in available) == sorted(pub.session_id for pub in pubs)
    assert {image.session_id for image in sub.images} == {pub.session_id for pub in pubs}

    for pub in pubs:
        pub.close()
    wait_for(lambda: lib.aa_subscription_image_count(sub._ptr) == 0, what="every image gone")
    assert sub.poll(lambda data, header: None, 10) == 0
    assert sorted(image.session_id for image in unavailable) == sorted(pub.session_id for pub in pubs)
    assert sub.images == []


@pytest.mark.anyio
async def test_the_async_facade_announces_every_image(aeron_dir: str, anyio_backend: Any) -> None:
    context = aeron_async.DriverContext(**TEST_DRIVER_SETTINGS)
    async with aeron_async.connect(aeron_dir, embedded_driver=True, driver_context=context, driver_timeout=5.0) as client:
        available: list[aeron_async.Image] = []
        sub = await client.add_subscription(CHANNEL, 42, on_available_image=available.append)
        pubs = [await client.add_exclusive_publication(CHANNEL, 42) for _ in range(PUBLICATIONS)]
        with anyio.fail_after(10):
            while lib.aa_subscription_image_count(sub.subscription._ptr) < PUBLICATIONS:
                await anyio.sleep(0.001)
        views = await sub.image_views()
        assert len(views) == PUBLICATIONS and len(available) == PUBLICATIONS
        assert {view.session_id for view in views} == {pub.session_id for pub in pubs}
