"""Publisher process: sends `count` messages (sizes per streams.py) and reports progress. With
AA_PUBLISHER_WAIT_FOR_GO set it prints "connected" once connected and sends after reading "go"."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

import aeron_async
from aeron_async.counters import CountersReader
from support.procs import streams


def pacer(spec: str | None, stream_id: int) -> Callable[[aeron_async.Publication], None] | None:
    """AA_PUBLISHER_PACE="<aeron dir>,<aeron dir>,...:<max lead in bytes>": the publisher stays at most
    that far ahead of the slowest subscriber of the stream on those drivers (their sub-pos counters,
    read through their CnC files), whatever the flow control lets it do."""
    if not spec:
        return None
    dirs, lead = spec.rsplit(":", 1)
    max_lead = int(lead)
    readers = [CountersReader(d) for d in dirs.split(",")]
    ids = []
    for reader in readers:
        found = [c.id for c in reader if c.label.startswith("sub-pos:") and c.label.split()[3] == str(stream_id)]
        if len(found) != 1:
            raise SystemExit(f"{reader.aeron_dir}: {len(found)} sub-pos counters of stream {stream_id}")
        ids.append(found[0])

    def pace(pub: aeron_async.Publication) -> None:
        stall = time.monotonic() + 60
        while pub.position - min(r.value(i) for r, i in zip(readers, ids)) > max_lead:
            if time.monotonic() > stall:
                raise SystemExit("the slowest subscriber made no progress for 60 s")
            time.sleep(0.0005)
    return pace


def main() -> int:
    aeron_dir, channel, stream_id, small, large = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    total = small + large
    exclusive = len(sys.argv) > 6 and sys.argv[6] == "exclusive"
    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client:
        pub = client.add_exclusive_publication(channel, stream_id) if exclusive else client.add_publication(channel, stream_id)
        print(f"ready session={pub.session_id}", flush=True)
        if not streams.await_connected(pub, 60):
            return 1
        if os.environ.get("AA_PUBLISHER_WAIT_FOR_GO"):
            # the test gets every receiver ready (e.g. an image on each host) before any data goes out
            print("connected", flush=True)
            if sys.stdin.readline().strip() != "go":
                return 1
        pace = pacer(os.environ.get("AA_PUBLISHER_PACE"), stream_id)
        # AA_PUBLISHER_RATE: at most that many messages a second (checked every 64 messages)
        rate = float(os.environ.get("AA_PUBLISHER_RATE", "0"))
        started = time.monotonic()
        for seq in range(total):
            if pace is not None and seq % 256 == 0:
                pace(pub)
            if rate and seq % 64 == 0:
                ahead = started + seq / rate - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
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
