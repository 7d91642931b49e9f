"""Publisher process: sends `count` messages (sizes per streams.py) and reports progress."""

from __future__ import annotations

import sys
import time

import aeron_async
from procs import streams


def main() -> int:
    aeron_dir, channel, stream_id, small, large = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    total = small + large
    exclusive = len(sys.argv) > 6 and sys.argv[6] == "exclusive"
    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client:
        pub = client.add_exclusive_publication(channel, stream_id) if exclusive else client.add_publication(channel, stream_id)
        print(f"ready session={pub.session_id}", flush=True)
        deadline = time.monotonic() + 60
        while not pub.is_connected:
            if time.monotonic() > deadline:
                print("never connected", flush=True)
                return 1
            time.sleep(0.001)
        for seq in range(total):
            vectors = streams.build(seq, small)
            stall = time.monotonic() + 60
            while True:
                result = pub.offer_vectors(vectors)
                if result > 0:
                    break
                if result == aeron_async.MAX_POSITION_EXCEEDED or time.monotonic() > stall:
                    print(f"failed at {seq}: {result}", flush=True)
                    return 1
                time.sleep(0)
            if seq % 100_000 == 0:
                print(f"sent {seq}", flush=True)
        print(f"done {total} position={pub.position}", flush=True)
        # stay connected until the subscriber has everything (the test terminates us)
        if len(sys.argv) > 7 and sys.argv[7] == "linger":
            time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
