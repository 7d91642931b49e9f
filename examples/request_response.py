"""Request/response over two streams: a server answers requests on stream 1 with responses on
stream 2; clients match responses to requests by a correlation id carried in `reserved_value`.

    python examples/request_response.py [--clients 3] [--requests 5]

One process, an embedded media driver, a server task and several client tasks. Each client has
its own exclusive publication (its own session); the server replies on one response stream and
every client picks out the answers to its own correlation ids.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import anyio

import aeron_async

REQUESTS, RESPONSES = 1, 2
CHANNEL = "aeron:ipc"


async def server(client: aeron_async.AsyncAeron, ready: anyio.Event) -> None:
    async with await client.add_subscription(CHANNEL, REQUESTS) as requests, \
            await client.add_publication(CHANNEL, RESPONSES) as responses:
        ready.set()
        async for request in requests:  # ends when the subscription is closed
            answer = request.data.decode().upper().encode()
            await responses.offer(answer, reserved_value=request.reserved_value)


async def run_client(client: aeron_async.AsyncAeron, name: str, count: int, ids: itertools.count) -> None:
    async with await client.add_exclusive_publication(CHANNEL, REQUESTS) as requests, \
            await client.add_subscription(CHANNEL, RESPONSES) as responses:
        for i in range(count):
            correlation_id = next(ids)
            started = time.perf_counter()
            await requests.offer(f"{name} request {i}".encode(), reserved_value=correlation_id)
            async for response in responses:  # other clients' answers are skipped
                if response.reserved_value == correlation_id:
                    break
            micros = (time.perf_counter() - started) * 1e6
            print(f"{name}: {response.data.decode()!r} (correlation id {correlation_id}) in {micros:.0f} us",
                  flush=True)


async def main(args: argparse.Namespace) -> None:
    # SIGINT or SIGTERM ends the run at once, closing cleanly
    async with aeron_async.cancel_on_signals() as stopping:
        async with aeron_async.connect(args.aeron_dir, embedded_driver=True, dir_delete_on_shutdown=True) as client:
            print(f"a server and {args.clients} clients in {client.aeron_dir}", flush=True)
            ready = anyio.Event()
            ids = itertools.count(1)
            async with anyio.create_task_group() as outer:
                outer.start_soon(server, client, ready)
                await ready.wait()
                with anyio.fail_after(60):
                    async with anyio.create_task_group() as clients:
                        for c in range(args.clients):
                            clients.start_soon(run_client, client, f"client-{c}", args.requests, ids)
                outer.cancel_scope.cancel()
    if stopping.cancelled_caught:
        print("stopped by a signal", flush=True)
        return
    print(f"{args.clients * args.requests} requests answered")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--aeron-dir", default=os.environ.get("AERON_DIR") or "/dev/shm/aeron-async-request-response",
                        help="the media driver's directory (default $AERON_DIR, else /dev/shm/aeron-async-request-response)")
    parser.add_argument("--backend", default="asyncio", choices=["asyncio", "trio"])
    ns = parser.parse_args()
    anyio.run(main, ns, backend=ns.backend)
