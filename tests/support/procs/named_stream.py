"""A stream between drivers that name each other (docs/architecture.md, "Driver names"): `pub
AERON_DIR CHANNEL STREAM SECONDS` offers a numbered message every millisecond for SECONDS (whatever
the connection does: back pressure and no connection are retried, the publication is never closed),
then prints how many it sent; `sub AERON_DIR CHANNEL STREAM COUNT` prints "ready", then "first
<epoch seconds>" on its first message and "received COUNT" once COUNT messages have arrived in order
(each a number above the last: a publisher that reconnects to a new subscriber goes on where it is)."""

from __future__ import annotations

import struct
import sys
import time

import aeron_async


def publish(aeron_dir: str, channel: str, stream_id: int, seconds: float) -> int:
    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client:
        pub = client.add_publication(channel, stream_id)
        print("ready", flush=True)
        sent = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if pub.offer(struct.pack("<q", sent + 1)) > 0:
                sent += 1
            time.sleep(0.001)
        print(f"sent {sent}", flush=True)
    return 0


def subscribe(aeron_dir: str, channel: str, stream_id: int, count: int) -> int:
    state = {"received": 0, "last": 0, "bad": 0}

    def on_message(data: memoryview, header: aeron_async.Header) -> None:
        (number,) = struct.unpack_from("<q", data, 0)
        if state["received"] == 0:
            print(f"first {time.time():.3f}", flush=True)
        if number <= state["last"]:
            state["bad"] += 1
        state["last"] = number
        state["received"] += 1

    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client:
        sub = client.add_subscription(channel, stream_id)
        print("ready", flush=True)
        deadline = time.monotonic() + 60
        while state["received"] < count and time.monotonic() < deadline:
            if sub.poll(on_message, 64) == 0:
                time.sleep(0.001)
    if state["bad"] or state["received"] < count:
        print(f"failed: received {state['received']}, out of order {state['bad']}", flush=True)
        return 1
    print(f"received {count}", flush=True)
    return 0


if __name__ == "__main__":
    mode, aeron_dir, channel, stream_id, amount = sys.argv[1:6]
    if mode == "pub":
        sys.exit(publish(aeron_dir, channel, int(stream_id), float(amount)))
    sys.exit(subscribe(aeron_dir, channel, int(stream_id), int(amount)))
