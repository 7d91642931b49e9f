"""Subscriber process: receives and verifies `small + large` messages in order, then exits 0."""

from __future__ import annotations

import sys
import time

import aeron_async
from support.procs import streams


def main() -> int:
    aeron_dir, channel, stream_id, small, large = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    total = small + large
    state = {"next": 0}

    def on_message(data: memoryview, header: aeron_async.Header) -> None:
        streams.verify(data, state["next"], small)
        state["next"] += 1

    handler = aeron_async.FragmentAssembler(on_message)
    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client:
        sub = client.add_subscription(channel, stream_id)
        print("ready", flush=True)
        last_progress = time.monotonic()
        last_count = 0
        while state["next"] < total:
            if sub.poll(handler, 256) == 0:
                time.sleep(0)
            if state["next"] != last_count:
                last_count = state["next"]
                last_progress = time.monotonic()
                if last_count % 100_000 == 0:
                    print(f"received {last_count}", flush=True)
            elif time.monotonic() - last_progress > 60:
                print(f"stalled at {state['next']}", flush=True)
                return 1
        print(f"verified {total}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
