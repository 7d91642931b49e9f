"""The publisher and subscriber of the Kubernetes example: a service that joins the media driver of its
pod (the `driver` sidecar) and publishes, or subscribes to, one stream until it is stopped, printing
a line a second.

    python app.py publish   --channel aeron:udp?endpoint=subscriber:40123 [--stream 1001] [--rate 100]
    python app.py subscribe --channel aeron:udp?endpoint=0.0.0.0:40123   [--stream 1001]

The channel, stream and aeron directory also come from AERON_CHANNEL, AERON_STREAM and AERON_DIR.
A channel that names a driver (`subscriber:40123`) is resolved by the pod's driver, through the
gossip of its driver-name resolver; until the name is known the registration is refused (with
AERON_NAME_RESOLUTION_PENDING_ALLOWED=true on the driver it succeeds, not connected, instead), so
the service retries a refused one every second. An offer waits, without spinning, while the subscriber is absent or behind; when the
subscriber's pod restarts elsewhere, the driver re-resolves its name and the stream carries on.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import anyio

import aeron_async


async def add_with_retry(client: aeron_async.AsyncAeron, kind: str, channel: str, stream: int, retry_for: float) -> object:
    deadline = time.monotonic() + retry_for
    while True:
        try:
            if kind == "publish":
                return await client.add_publication(channel, stream)
            return await client.add_subscription(channel, stream)
        except aeron_async.AeronError as exc:
            if time.monotonic() >= deadline:
                raise
            print(f"{kind}: {channel} not ready yet ({exc}); retrying in 1 s", flush=True)
            await anyio.sleep(1.0)


async def publish(client: aeron_async.AsyncAeron, args: argparse.Namespace) -> None:
    publication = await add_with_retry(client, "publish", args.channel, args.stream, args.retry_for)
    assert isinstance(publication, aeron_async.AsyncPublication)
    n = 0
    try:
        async with publication:
            print(f"publishing on {args.channel} stream {args.stream} at {args.rate} messages/s", flush=True)
            sent, last_report = 0, time.monotonic()
            interval = 1.0 / args.rate
            while args.count is None or n < args.count:
                await publication.offer(f"message {n} from {os.uname().nodename}".encode())  # waits for a subscriber
                n += 1
                sent += 1
                now = time.monotonic()
                if now - last_report >= 1.0:
                    print(f"sent {sent} messages in {now - last_report:.1f} s (total {n})", flush=True)
                    sent, last_report = 0, now
                await anyio.sleep(interval)
    finally:  # also when a signal cancelled the loop
        print(f"published {n} messages", flush=True)


async def subscribe(client: aeron_async.AsyncAeron, args: argparse.Namespace) -> None:
    subscription = await add_with_retry(client, "subscribe", args.channel, args.stream, args.retry_for)
    assert isinstance(subscription, aeron_async.AsyncSubscription)
    total = 0
    try:
        async with subscription:
            print(f"subscribed to {args.channel} stream {args.stream}", flush=True)
            received, last_report, last = 0, time.monotonic(), b""
            while args.count is None or total < args.count:
                with anyio.move_on_after(1.0):
                    async for batch in subscription.batches(max_messages=1024):
                        for message in batch:
                            last = message.data
                        received += len(batch)
                        total += len(batch)
                        if args.count is not None and total >= args.count:
                            break
                        if time.monotonic() - last_report >= 1.0:
                            break
                now = time.monotonic()
                print(f"received {received} messages in {now - last_report:.1f} s (total {total}, last {last!r})",
                      flush=True)
                received, last_report = 0, now
    finally:  # also when a signal cancelled the loop
        print(f"received {total} messages", flush=True)


async def main(args: argparse.Namespace) -> None:
    # SIGTERM (a pod being stopped) or SIGINT cancels the work at once, even an offer waiting for an
    # absent subscriber; the publication, subscription and client then close as on any exit.
    async with aeron_async.cancel_on_signals() as stopping:
        async with aeron_async.connect(args.aeron_dir) as client:  # the pod's driver, started before this container
            await (publish if args.mode == "publish" else subscribe)(client, args)
    if stopping.cancelled_caught:
        print("stopped by a signal; closed", flush=True)

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["publish", "subscribe"])
    parser.add_argument("--channel", default=os.environ.get("AERON_CHANNEL"))
    parser.add_argument("--stream", type=int, default=int(os.environ.get("AERON_STREAM", "1001")))
    parser.add_argument("--aeron-dir", default=os.environ.get("AERON_DIR"))
    parser.add_argument("--rate", type=float, default=100.0, help="messages a second (publish)")
    parser.add_argument("--count", type=int, default=None, help="stop after this many messages (default: run until stopped)")
    parser.add_argument("--retry-for", type=float, default=float("inf"),
                        help="seconds to keep retrying a refused registration (default: for ever)")
    ns = parser.parse_args()
    if not ns.channel:
        sys.exit("app.py: name the channel with --channel or AERON_CHANNEL")
    if ns.rate <= 0:
        sys.exit(f"app.py: --rate must be positive, got {ns.rate}")
    anyio.run(main, ns)
