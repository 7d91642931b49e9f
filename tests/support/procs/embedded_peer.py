"""A process that launches an embedded driver on a directory unless one runs there (as the README's
first example does), then exchanges messages with its peers on one IPC stream.

Driven line by line over stdin/stdout by tests/driver/test_driver_lifecycle.py: it prints "started",
waits for "launch", connects and prints "launched" or "joined" and "ready"; waits for "go", offers
its name and receives until it has every peer's name ("exchanged N"); waits for "exit", then leaves
its `async with` (the process that launched the driver closes it, so it is told to leave last)."""

from __future__ import annotations

import sys

import anyio

import aeron_async
from conftest import TEST_DRIVER_SETTINGS

STREAM = 7


async def read_line() -> str:
    return (await anyio.to_thread.run_sync(sys.stdin.readline)).strip()


async def main(aeron_dir: str, name: str, peers: int) -> None:
    print("started", flush=True)
    assert await read_line() == "launch"
    # the driver's settings of the tests, but its driver timeout is connect's own argument
    settings = {key: value for key, value in TEST_DRIVER_SETTINGS.items() if key != "driver_timeout"}
    async with aeron_async.connect(aeron_dir, embedded_driver=True, driver_timeout=10.0, **settings) as client:
        print("launched" if client.driver is not None else "joined", flush=True)
        async with await client.add_subscription("aeron:ipc", STREAM) as sub, \
                await client.add_publication("aeron:ipc", STREAM) as pub:
            print("ready", flush=True)
            assert await read_line() == "go"
            with anyio.fail_after(20):
                await pub.offer(name.encode())
                names: set[str] = set()
                async for message in sub:
                    names.add(message.data.decode())
                    if len(names) == peers:
                        break
            print(f"exchanged {len(names)}: {','.join(sorted(names))}", flush=True)
            assert await read_line() == "exit"


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
