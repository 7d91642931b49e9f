"""One end of the congestion control test's stream: `pub` offers `count` messages of `size` bytes
(a sequence number in the first 8), retrying while back-pressured; `sub` receives them, checks
they arrive complete and in order, and reports how many bytes arrived in how long, timed from the
first message to the last."""

from __future__ import annotations

import struct
import sys
import time

import aeron_async
from support.procs import streams


def publish(aeron_dir: str, channel: str, stream_id: int, count: int, size: int) -> int:
    body = bytearray(size)
    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client:
        pub = client.add_exclusive_publication(channel, stream_id)
        print("ready", flush=True)
        if not streams.await_connected(pub, 30):
            return 1
        for seq in range(count):
            struct.pack_into("<q", body, 0, seq)
            body[8] = seq & 0xFF
            stall = time.monotonic() + 30
            while (result := pub.offer(body)) < 0:
                if result in (aeron_async.MAX_POSITION_EXCEEDED, aeron_async.CLOSED) or time.monotonic() > stall:
                    print(f"failed at {seq}: {result}", flush=True)
                    return 1
                time.sleep(0.0002)
        print(f"done {count}", flush=True)
        time.sleep(3600)  # stays until the test ends it, so nothing is cut short by its going away
    return 0


def subscribe(aeron_dir: str, channel: str, stream_id: int, count: int, size: int) -> int:
    state = {"next": 0, "first": 0.0, "last": 0.0, "bad": "", "gaps": 0, "gap_seconds": 0.0}

    def on_fragment(data: memoryview, header: aeron_async.Header) -> None:
        seq = struct.unpack_from("<q", data, 0)[0]
        if seq != state["next"] or len(data) != size or data[8] != seq & 0xFF:
            state["bad"] = state["bad"] or f"message {state['next']}: got seq {seq}, {len(data)} bytes"
        now = time.monotonic()
        if state["next"] == 0:
            state["first"] = now
        elif now - state["last"] > 0.01:  # nothing for 10 ms: ~9 messages' time at 10 Mbit/s
            state["gaps"] += 1
            state["gap_seconds"] += now - state["last"]
        state["next"] += 1
        state["last"] = now

    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client:
        sub = client.add_subscription(channel, stream_id)
        print("ready", flush=True)
        last_progress = time.monotonic()
        last_count = 0
        while state["next"] < count and not state["bad"]:
            if sub.poll(on_fragment, 256) == 0:
                time.sleep(0.0002)
            if state["next"] != last_count:
                last_count = state["next"]
                last_progress = time.monotonic()
            elif time.monotonic() - last_progress > 30:
                print(f"stalled at {state['next']}", flush=True)
                return 1
        if state["bad"]:
            print(f"out of order: {state['bad']}", flush=True)
            return 1
        print(f"verified {count} seconds {state['last'] - state['first']:.6f} "
              f"pauses {state['gaps']} over 10 ms, {state['gap_seconds']:.3f} s in all", flush=True)
    return 0


def main() -> int:
    mode, aeron_dir, channel = sys.argv[1], sys.argv[2], sys.argv[3]
    stream_id, count, size = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    return (publish if mode == "pub" else subscribe)(aeron_dir, channel, stream_id, count, size)


if __name__ == "__main__":
    sys.exit(main())
