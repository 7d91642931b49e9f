"""Request/response with the request/response API (docs/api.md, "Request/response"): one server
answers many clients over one request channel and a response channel per client (Aeron's response
channels); each client's requests are matched to their answers by correlation id, with a timeout.

    python examples/request_response.py [--clients 3] [--requests 5] [--backend asyncio|uvloop|trio]

One process, an embedded media driver, a server task (handlers run concurrently, at most 16 at
once) and several client tasks, each with its own `AsyncRpcClient` and up to 4 requests in flight.
"""

from __future__ import annotations

import argparse
import os
import time

import anyio

import aeron_async

CHANNEL, STREAM = "aeron:ipc", 1   # answers go on stream 2, on aeron:ipc?control-mode=response


async def shout(data: bytes) -> bytes:
    """The server's handler: any coroutine taking the request's bytes and returning the answer's."""
    return data.decode().upper().encode()


async def run_client(aeron: aeron_async.AsyncAeron, name: str, count: int, in_flight: int = 4) -> None:
    async with aeron_async.AsyncRpcClient(aeron, CHANNEL, STREAM) as client:
        numbers = iter(range(count))

        async def ask() -> None:
            for i in numbers:   # shared: each worker takes the next request number
                started = time.perf_counter()
                answer = await client.request(f"{name} request {i}".encode(), timeout=10.0)
                micros = (time.perf_counter() - started) * 1e6
                print(f"{name}: {answer.decode()!r} in {micros:.0f} us", flush=True)

        async with anyio.create_task_group() as workers:   # up to `in_flight` requests at once
            for _ in range(min(in_flight, count)):
                workers.start_soon(ask)


async def main(args: argparse.Namespace) -> None:
    # SIGINT or SIGTERM ends the run at once, closing cleanly
    async with aeron_async.cancel_on_signals() as stopping:
        async with aeron_async.connect(args.aeron_dir, embedded_driver=True, dir_delete_on_shutdown=True) as aeron:
            print(f"a server and {args.clients} clients in {aeron.aeron_dir}", flush=True)
            async with aeron_async.AsyncRpcServer(aeron, CHANNEL, STREAM, max_concurrent=16) as server, \
                    anyio.create_task_group() as outer:
                outer.start_soon(server.serve, shout)
                with anyio.fail_after(60):
                    async with anyio.create_task_group() as clients:
                        for c in range(args.clients):
                            clients.start_soon(run_client, aeron, f"client-{c}", args.requests)
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
    parser.add_argument("--backend", default="asyncio", choices=["asyncio", "uvloop", "trio"])
    ns = parser.parse_args()
    if ns.backend == "uvloop":
        anyio.run(main, ns, backend="asyncio", backend_options={"use_uvloop": True})
    else:
        anyio.run(main, ns, backend=ns.backend)
