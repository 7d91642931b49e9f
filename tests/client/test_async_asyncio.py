"""asyncio-specific behaviour of the async facade (pytest-asyncio): the wake-up fd is registered
with the loop once, however many waits, and drained fully on every wake-up."""

from __future__ import annotations

import asyncio
import os

import pytest

import aeron_async
from conftest import TEST_DRIVER_SETTINGS


@pytest.mark.asyncio
async def test_wakeup_fd_registered_once_and_drained(aeron_dir: str) -> None:
    loop = asyncio.get_running_loop()
    registrations = []
    original = loop.add_reader

    def counting_add_reader(fd, callback, *args):
        registrations.append(fd)
        return original(fd, callback, *args)

    loop.add_reader = counting_add_reader  # type: ignore[method-assign]
    context = aeron_async.DriverContext(**TEST_DRIVER_SETTINGS)
    try:
        async with aeron_async.connect(aeron_dir, embedded_driver=True, driver_context=context) as client:
            sub = await client.add_subscription("aeron:ipc", 30)
            pub = await client.add_publication("aeron:ipc", 30)
            fd = sub._waker.fd
            for i in range(50):  # every receive waits: the message is sent while it is parked

                async def send_later(i: int = i) -> None:
                    await asyncio.sleep(0.001)
                    await pub.offer(i.to_bytes(4, "little"))

                sender = asyncio.create_task(send_later())
                message = await asyncio.wait_for(sub.receive(), 5)
                await sender
                assert int.from_bytes(message.data, "little") == i
                await asyncio.sleep(0)  # a signal that raced a re-check is drained by the loop's reader
                with pytest.raises(BlockingIOError):  # nothing left behind in the eventfd
                    os.eventfd_read(fd)
            assert registrations.count(fd) == 1
            await sub.aclose()
            assert fd not in loop._selector.get_map()  # type: ignore[attr-defined]
    finally:
        loop.add_reader = original  # type: ignore[method-assign]
