"""A flow-control strategy written in Python: "the slowest of the two fastest receivers".

The sender may run as far as the second-fastest receiver allows, so the fastest two receivers get
the stream at full speed together and any slower one falls behind (and recovers by NAK, or is left
behind) instead of holding everybody back. docs/api.md ("Flow-control strategies") walks through it.

Run it: `python examples/flow_control.py [--messages N]`. It first feeds the strategy three made-up
receivers to show the rule, then streams N messages over UDP on 127.0.0.1 through an embedded
driver, with the strategy chosen by `fc=slowest-of-two-fastest` on the publication channel. A
standalone driver takes it as `aeron-async driver --flow-control
slowest-of-two-fastest=examples.flow_control:SlowestOfTwoFastest` (with the repository on
PYTHONPATH).
"""

from __future__ import annotations

import argparse
import signal
import socket
import tempfile
import time
from typing import ClassVar

import aeron_async
from aeron_async import FlowControlParams, FlowControlStrategy, StatusMessage


class SlowestOfTwoFastest(FlowControlStrategy):
    """Sender limit = the second-highest `position + window` among the live receivers (the only
    one's with a single receiver). An SM never lowers the limit; an idle tick drops receivers silent
    for `t:` (5 s by default) and recomputes it; an SM with EOS or an ERR drops its receiver."""

    accepted_options: ClassVar[frozenset[str]] = frozenset({"t"})

    def __init__(self, params: FlowControlParams) -> None:
        super().__init__(params)
        self.receivers: dict[int, tuple[int, int]] = {}  # receiver id -> (position + window, time of last SM)

    def _limit(self, sender_limit: int) -> int:
        limits = sorted((limit for limit, _ in self.receivers.values()), reverse=True)
        if not limits:
            return sender_limit  # nobody to follow: stay where we are
        return limits[1] if len(limits) > 1 else limits[0]

    def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
        if sm.is_end_of_stream:
            self.receivers.pop(sm.receiver_id, None)
        else:
            self.receivers[sm.receiver_id] = (sm.position + sm.window, now_ns)
        return max(sender_limit, self._limit(sender_limit))

    def on_idle(self, now_ns: int, sender_limit: int, sender_position: int, is_end_of_stream: bool) -> int:
        timeout = self.params.receiver_timeout_ns
        for receiver_id, (_, last) in list(self.receivers.items()):
            if now_ns - last > timeout:
                del self.receivers[receiver_id]
        return self._limit(sender_limit)

    def on_error(self, receiver_id: int, group_tag: int | None, error_code: int, now_ns: int) -> None:
        self.receivers.pop(receiver_id, None)


def show_the_rule() -> None:
    params = FlowControlParams(
        name="slowest-of-two-fastest", options="", registration_id=1, stream_id=1, initial_term_id=0,
        term_length=65536, group_tag=-1, group_min_size=0, receiver_timeout_ns=5_000_000_000,
    )
    strategy = SlowestOfTwoFastest(params)
    limit = 0
    for receiver_id, position in ((1, 100_000), (2, 300_000), (3, 200_000)):
        sm = StatusMessage(receiver_id, position, 4096, None, f"10.0.0.{receiver_id}:40456", 0)
        limit = strategy.on_status_message(sm, limit, now_ns=0)
    print(f"receivers at 100000, 300000 and 200000 with a 4096-byte window: sender limit {limit}")


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stream(messages: int) -> None:
    seen: list[StatusMessage] = []

    class Watched(SlowestOfTwoFastest):
        def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
            seen.append(sm)
            return super().on_status_message(sm, sender_limit, now_ns)

    aeron_async.strategies.register_flow_control("slowest-of-two-fastest", Watched)
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    with tempfile.TemporaryDirectory(prefix="aeron-fc-example-") as aeron_dir:
        with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, threading_mode="SHARED", term_buffer_length="1m"):
            with aeron_async.Aeron.connect(aeron_dir) as client:
                subscription = client.add_subscription(channel, 1001)
                publication = client.add_publication(f"{channel}|fc=slowest-of-two-fastest,t:2s", 1001)
                deadline = time.monotonic() + 10
                while not publication.is_connected:
                    if time.monotonic() > deadline:
                        raise SystemExit("the publication did not connect within 10 s")
                    time.sleep(0.001)
                sent = received = 0
                deadline = time.monotonic() + 60
                while received < messages:
                    if sent < messages and publication.offer(sent.to_bytes(8, "little")) > 0:
                        sent += 1
                    received += len(subscription.poll_messages())
                    if time.monotonic() > deadline:
                        raise SystemExit(f"only {received} of {messages} messages arrived within 60 s")
    receivers = {sm.receiver_id for sm in seen}
    print(f"{received:,} messages received over UDP; the strategy paced the sender from "
          f"{len(seen)} status messages of {len(receivers)} receiver(s), the last from {seen[-1].source_address}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=100_000)
    args = parser.parse_args()
    show_the_rule()
    stream(args.messages)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM as Ctrl-C: the with blocks close
    try:
        main()
    except KeyboardInterrupt:
        print("stopped by a signal", flush=True)
