"""Demo: an embedded media driver, an IPC publisher thread and a subscriber, with live figures.

    python examples/demo.py [--seconds 10] [--size 64] [--batch]

The publisher offers fixed-size messages as fast as the subscriber lets it (back pressure is
reported, not hidden); the subscriber receives whole messages in batches and checks their order.
Every second it prints messages/s and MB/s.
"""

from __future__ import annotations

import argparse
import os
import struct
import tempfile
import threading
import time

import aeron_async


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--size", type=int, default=64, help="message size in bytes (at least 8)")
    parser.add_argument("--channel", default="aeron:ipc?term-length=8m")
    args = parser.parse_args()
    size = max(8, args.size)

    aeron_dir = os.path.join(tempfile.gettempdir() if not os.path.isdir("/dev/shm") else "/dev/shm",
                             f"aeron-demo-{os.getpid()}")
    stop = threading.Event()
    sent = [0, 0]  # messages, back-pressure events

    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, dir_delete_on_shutdown=True) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        subscription = client.add_subscription(args.channel, 1001)
        publication = client.add_publication(args.channel, 1001)
        print(f"embedded driver in {driver.aeron_dir}; channel {args.channel}, {size}-byte messages, "
              f"max message length {publication.max_message_length}")

        def publish() -> None:
            payload = bytearray(size)
            sequence = 0
            while not stop.is_set():
                struct.pack_into("<q", payload, 0, sequence)
                result = publication.offer(payload)
                if result > 0:
                    sequence += 1
                    sent[0] = sequence
                elif result == aeron_async.BACK_PRESSURED or result == aeron_async.NOT_CONNECTED:
                    sent[1] += 1
                    time.sleep(0)

        publisher = threading.Thread(target=publish, name="demo-publisher", daemon=True)
        publisher.start()
        received = 0
        expected = 0
        started = last_report = time.monotonic()
        last_count = 0
        try:
            while time.monotonic() - started < args.seconds:
                messages = subscription.poll_messages(max_messages=4096)
                if not messages:
                    time.sleep(0)
                for message in messages:
                    (sequence,) = struct.unpack_from("<q", message.data, 0)
                    if sequence != expected:
                        raise SystemExit(f"out of order: expected {expected}, got {sequence}")
                    expected += 1
                received += len(messages)
                now = time.monotonic()
                if now - last_report >= 1.0:
                    rate = (received - last_count) / (now - last_report)
                    print(f"{now - started:5.1f}s  {rate:12,.0f} msgs/s  {rate * size / 1e6:8.1f} MB/s  "
                          f"received {received:,}  back-pressured offers {sent[1]:,}", flush=True)
                    last_report, last_count = now, received
        finally:
            stop.set()
            publisher.join(timeout=5)
        elapsed = time.monotonic() - started
        print(f"done: {received:,} messages in {elapsed:.1f}s, {received / elapsed:,.0f} msgs/s average, "
              f"all in order")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
