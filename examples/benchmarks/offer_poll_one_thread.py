"""The message path's cost in one thread, with an embedded SHARED driver: per-message `offer` and
`offer_batch` against batch `poll_messages(4096)`, 32-byte messages over aeron:ipc.

    python examples/benchmarks/offer_poll_one_thread.py

No second process and no scheduling between processes: what one call costs, not end-to-end
throughput (that is `aeron-async bench`).
"""

from __future__ import annotations

import signal
import tempfile
import time

from aeron_async import Aeron, MediaDriver

MESSAGES = 4_000_000


def main() -> None:
    aeron_dir = tempfile.mkdtemp(prefix="aeron-offer-poll-")
    with MediaDriver.launch(aeron_dir=aeron_dir, threading_mode="SHARED", dir_delete_on_shutdown=True), \
            Aeron.connect(aeron_dir) as client:
        pub = client.add_publication("aeron:ipc", 10)
        sub = client.add_subscription("aeron:ipc", 10)
        while not pub.is_connected:
            time.sleep(0.01)
        data = bytes(32)
        offer, poll = pub.offer, sub.poll_messages
        batch = [data] * 1024
        for form in ("offer", "offer_batch"):
            for _ in range(3):  # the first round maps the log's pages in
                start, n = time.perf_counter(), 0
                while n < MESSAGES:
                    if form == "offer":
                        for _ in range(1024):
                            if offer(data) > 0:
                                n += 1
                    else:
                        n += max(pub.offer_batch(batch), 0)
                    while len(poll(4096)) == 4096:
                        pass
                while poll(4096):
                    pass
                rate = n / (time.perf_counter() - start)
            print(f"{form} + poll_messages(4096): {rate / 1e6:.2f} M msgs/s (last of 3 rounds)")
        t_offer = t_poll = 0.0
        for _ in range(200):
            start = time.perf_counter()
            for _ in range(10_000):
                offer(data)
            t_offer += time.perf_counter() - start
            start = time.perf_counter()
            while poll(4096):
                pass
            t_poll += time.perf_counter() - start
        print(f"offer: {t_offer / 2e6 * 1e9:.0f} ns per message; poll_messages(4096): {t_poll / 2e6 * 1e9:.0f} ns per message")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM as Ctrl-C: the with blocks close
    try:
        main()
    except KeyboardInterrupt:
        print("stopped by a signal", flush=True)
