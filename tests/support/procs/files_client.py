"""A client of a driver run by another user (docs/security.md, "Files"): connects to the aeron
directory given, then on IPC and on a UDP channel subscribes, publishes `count` messages and reads
them all back, and prints "ok <uid> <IPC messages> <UDP messages>"; a failure exits non-zero with
the error."""

from __future__ import annotations

import os
import sys
import time

import aeron_async


def round_trip(client: aeron_async.Aeron, channel: str, stream_id: int, count: int) -> int:
    sub = client.add_subscription(channel, stream_id)
    pub = client.add_publication(channel, stream_id)
    deadline = time.monotonic() + 20
    while not pub.is_connected:
        if time.monotonic() > deadline:
            raise SystemExit(f"{channel}: not connected")
        time.sleep(0.001)
    got: list[bytes] = []
    sent = 0
    while len(got) < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"{channel}: {len(got)} of {count} messages after 20 s")
        if sent < count and pub.offer(b"message %d" % sent) > 0:
            sent += 1
        got.extend(m.data for m in sub.poll_messages())
    assert got == [b"message %d" % i for i in range(count)], got[:3]
    pub.close()
    sub.close()
    return len(got)


def main() -> None:
    aeron_dir, udp_port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client:
        ipc = round_trip(client, "aeron:ipc", 3001, count)
        udp = round_trip(client, f"aeron:udp?endpoint=127.0.0.1:{udp_port}", 3002, count)
    print("ok", os.getuid(), ipc, udp, flush=True)


if __name__ == "__main__":
    main()
