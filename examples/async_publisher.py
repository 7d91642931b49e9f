"""An async publisher: offers --count messages on a stream, waiting (not spinning) while nobody
subscribes or the subscriber is behind.

    python examples/async_publisher.py [--count 10] [--channel aeron:ipc] [--stream 1001] [--aeron-dir DIR]

It joins the media driver running in the aeron directory (started by `async_subscriber.py`), or
launches an embedded one if there is none.
"""

from __future__ import annotations

import argparse

import anyio

import aeron_async
from sample_configuration import stream_arguments


async def main(args: argparse.Namespace) -> None:
    # SIGINT or SIGTERM ends the run at once (even an offer waiting for a subscriber), closing cleanly
    async with aeron_async.cancel_on_signals() as stopping:
        async with aeron_async.connect(args.aeron_dir, embedded_driver=True, dir_delete_on_shutdown=True) as client:
            async with await client.add_publication(args.channel, args.stream) as publication:
                print(f"publishing on {args.channel} stream {args.stream} in {client.aeron_dir}", flush=True)
                with anyio.fail_after(args.timeout):  # offer waits while not connected; bound the wait
                    for i in range(args.count):
                        position = await publication.offer(f"hello {i}".encode())
                        print(f"sent 'hello {i}' at position {position}", flush=True)
                        await anyio.sleep(args.interval)
    if stopping.cancelled_caught:
        print("stopped by a signal", flush=True)


if __name__ == "__main__":
    parser = stream_arguments(__doc__)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between messages")
    ns = parser.parse_args()
    anyio.run(main, ns, backend=ns.backend)
