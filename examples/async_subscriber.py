"""An async subscriber: prints the messages of a stream, then exits after --count of them.

    python examples/async_subscriber.py [--count 10] [--channel aeron:ipc] [--stream 1001] [--aeron-dir DIR]

It launches an embedded media driver in this process unless one is already running in the aeron
directory, so start it before `async_publisher.py` (which joins the same driver). Pass
`--backend trio` to run the same code on trio.
"""

from __future__ import annotations

import argparse

import anyio

import aeron_async
from sample_configuration import stream_arguments


async def main(args: argparse.Namespace) -> None:
    received = 0
    # SIGINT or SIGTERM ends the run at once, closing cleanly
    async with aeron_async.cancel_on_signals() as stopping:
        async with aeron_async.connect(args.aeron_dir, embedded_driver=True, dir_delete_on_shutdown=True) as client:
            async with await client.add_subscription(args.channel, args.stream) as subscription:
                print(f"subscribed to {args.channel} stream {args.stream} in {client.aeron_dir}", flush=True)
                with anyio.fail_after(args.timeout):
                    async for message in subscription:
                        received += 1
                        print(f"{received:4d}: {message.data.decode(errors='replace')!r} from session "
                              f"{message.session_id} at position {message.position}", flush=True)
                        if received == args.count:
                            break
    print(f"received {received} messages" + (" (stopped by a signal)" if stopping.cancelled_caught else ""), flush=True)


if __name__ == "__main__":
    ns = stream_arguments(__doc__).parse_args()
    anyio.run(main, ns, backend=ns.backend)
