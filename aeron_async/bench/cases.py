"""What is measured: the throughput and round-trip cases, ours and the peers', and the targets.

A case names the worker roles of its two processes: the `server` starts first (receiver, pong) and
says READY (with what the other needs), then the `client` (sender, ping). Our cases run once per
channel given (`aeron:ipc` by default; an `aeron:udp?endpoint=127.0.0.1:PORT` channel adds UDP
rows), the peers' once. Each of our cases names the peer it is compared with (`peer`), of the same
kind and message size.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from ..errors import InvalidArgumentError

BACKENDS = ("asyncio", "uvloop", "trio")
# (receiver form, case name, how it receives) of the fragment-handler rows
HANDLER_FORMS = (
    ("handler", "aeron-sync-handler", "sub.poll(handler, 1000), handler(data, header) counts"),
    ("assembler", "aeron-sync-assembler", "sub.poll(FragmentAssembler(handler), 1000), handler counts"),
    ("controlled", "aeron-sync-controlled",
     "sub.controlled_poll(handler, 1000), handler counts and returns CONTINUE"),
)


@attrs.frozen
class Case:
    kind: str  # "throughput" or "latency"
    name: str
    impl: str  # "aeron_async", "pyzmq", "asyncio"
    api: str  # how it sends and receives, in words
    server: str  # worker role started first
    client: str  # worker role started second
    params: dict[str, Any] = attrs.field(factory=dict)
    transport: str = ""  # for ours, the channel; for peers, a label
    peer: str | None = None  # the reference peer's name

    @property
    def ours(self) -> bool:
        return self.impl == "aeron_async"

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.name}/{self.transport}"


def throughput_cases(channels: list[str]) -> tuple[list[Case], list[Case]]:
    ours = []
    for channel in channels:
        ours.append(Case("throughput", "aeron-sync-msg", "aeron_async",
                         "sync: offer(data) loop -> for message in poll_messages()",
                         "aeron-sync-receiver", "aeron-sync-sender", {"form": "msg"}, channel, "zmq-sync-ipc"))
        ours.append(Case("throughput", "aeron-sync-batch", "aeron_async",
                         "sync: offer_batch(4096 messages) -> len(poll_messages(4096)) per batch",
                         "aeron-sync-receiver", "aeron-sync-sender", {"form": "batch"}, channel, "zmq-sync-ipc"))
        if channel.startswith("aeron:ipc"):
            # Aeron's fragment-handler API: a handler that counts, called per fragment from the native loop
            for form, name, api in HANDLER_FORMS:
                ours.append(Case("throughput", name, "aeron_async", f"sync: offer_batch -> {api}",
                                 "aeron-sync-receiver", "aeron-sync-sender", {"form": form}, channel,
                                 "zmq-sync-ipc"))
        for backend in BACKENDS:
            ours.append(Case("throughput", f"aeron-{backend}-msg", "aeron_async",
                             f"{backend}: await offer(data) -> async for message in sub",
                             "aeron-async-receiver", "aeron-async-sender", {"form": "msg", "backend": backend},
                             channel, "zmq-asyncio-ipc"))
            ours.append(Case("throughput", f"aeron-{backend}-batch", "aeron_async",
                             f"{backend}: offer_nowait, await offer if refused -> async for batch in sub.batches(4096)",
                             "aeron-async-receiver", "aeron-async-sender", {"form": "batch", "backend": backend},
                             channel, "zmq-asyncio-ipc"))
    peers = [
        Case("throughput", "zmq-sync-ipc", "pyzmq", "PUSH/PULL, send(data) -> recv() per message",
             "zmq-sync-receiver", "zmq-sync-sender", {"transport": "ipc"}, "ipc://"),
        Case("throughput", "zmq-sync-tcp", "pyzmq", "PUSH/PULL, send(data) -> recv() per message",
             "zmq-sync-receiver", "zmq-sync-sender", {"transport": "tcp"}, "tcp://127.0.0.1"),
        Case("throughput", "zmq-asyncio-ipc", "pyzmq", "zmq.asyncio PUSH/PULL, await send -> await recv per message",
             "zmq-asyncio-receiver", "zmq-asyncio-sender", {"transport": "ipc"}, "ipc://"),
        Case("throughput", "zmq-asyncio-tcp", "pyzmq", "zmq.asyncio PUSH/PULL, await send -> await recv per message",
             "zmq-asyncio-receiver", "zmq-asyncio-sender", {"transport": "tcp"}, "tcp://127.0.0.1"),
        Case("throughput", "udp-asyncio", "asyncio", "DatagramProtocol: sendto -> datagram_received (no flow control)",
             "udp-asyncio-receiver", "udp-asyncio-sender", {}, "udp 127.0.0.1"),
    ]
    return ours, peers


def latency_cases(channels: list[str]) -> tuple[list[Case], list[Case]]:
    ours = []
    for channel in channels:
        ours.append(Case("latency", "aeron-sync", "aeron_async",
                         "sync busy-poll: offer, spin on poll_messages(1); pong echoes",
                         "aeron-sync-pong", "aeron-sync-ping", {}, channel, "zmq-sync-ipc"))
        if channel.startswith("aeron:udp"):
            ours.append(Case("latency", "aeron-sync-backoff", "aeron_async",
                             "sync, default settings: offer, poll_messages(1) with IdleStrategy('backoff') "
                             "between empty polls; pong the same",
                             "aeron-sync-pong", "aeron-sync-ping", {"wait": "backoff"}, channel, "zmq-sync-tcp"))
            ours.append(Case("latency", "aeron-sync-invoker", "aeron_async",
                             "sync busy-poll mode: each process runs its own driver (INVOKER) in its poll loop",
                             "aeron-sync-pong", "aeron-sync-ping",
                             {"driver": "invoker", "request_channel": offset_port(channel, 2),
                              "reply_channel": offset_port(channel, 3)}, channel,
                             "zmq-sync-tcp"))
        for backend in BACKENDS:
            ours.append(Case("latency", f"aeron-{backend}", "aeron_async",
                             f"{backend}: await offer, await receive(); pong: async for + await offer",
                             "aeron-async-pong", "aeron-async-ping", {"backend": backend}, channel,
                             "zmq-asyncio-ipc"))
    peers = [
        Case("latency", "zmq-sync-ipc", "pyzmq", "REQ/REP send/recv", "zmq-sync-pong", "zmq-sync-ping",
             {"transport": "ipc"}, "ipc://"),
        Case("latency", "zmq-sync-tcp", "pyzmq", "REQ/REP send/recv", "zmq-sync-pong", "zmq-sync-ping",
             {"transport": "tcp"}, "tcp://127.0.0.1"),
        Case("latency", "zmq-asyncio-ipc", "pyzmq", "zmq.asyncio REQ/REP await send/recv", "zmq-asyncio-pong",
             "zmq-asyncio-ping", {"transport": "ipc"}, "ipc://"),
        Case("latency", "udp-asyncio", "asyncio", "DatagramProtocol ping, echo pong", "udp-asyncio-pong",
             "udp-asyncio-ping", {}, "udp 127.0.0.1"),
    ]
    return ours, peers


def offset_port(channel: str, offset: int) -> str:
    """The channel with its endpoint's port moved on by `offset` (ping and pong with drivers of their
    own bind ports of their own, apart from those of the run's shared driver)."""
    match = re.search(r"endpoint=([^|:]+):(\d+)", channel)
    if not match:
        raise InvalidArgumentError(f"a UDP benchmark channel needs endpoint=HOST:PORT, got {channel!r}")
    host, port = match.group(1), int(match.group(2))
    return channel[:match.start()] + f"endpoint={host}:{port + offset}" + channel[match.end():]


def interleave(ours: list[Case], peers: list[Case]) -> list[Case]:
    """One round's order: ours and the peers' alternate, so each pair runs close in time."""
    out: list[Case] = []
    for i in range(max(len(ours), len(peers))):
        if i < len(ours):
            out.append(ours[i])
        if i < len(peers):
            out.append(peers[i])
    return out


# ---- targets (32-byte messages over aeron:ipc unless said) ----


@attrs.frozen
class Target:
    label: str
    goal: str
    metric: str  # "throughput", "ratio", "latency", "idle", "flow-control", "rpc" (bench/rpc.py's rows)
    case: str = ""
    size: int = 32
    field: str = ""
    threshold: float = 0.0
    higher_is_better: bool = True
    peer: str = ""
    transport: str = "aeron:ipc"  # the prefix of the row's channel


TARGETS = (
    Target("IPC throughput, sync per-message offer loop -> poll", ">= 3 M msgs/s", "throughput",
           "aeron-sync-msg", 32, "msgs_per_s", 3e6),
    Target("IPC throughput, batch offer and batch poll, 32 B", ">= 10 M msgs/s", "throughput",
           "aeron-sync-batch", 32, "msgs_per_s", 10e6),
    Target("IPC throughput, batch offer and batch poll, 256 B", ">= 6 M msgs/s", "throughput",
           "aeron-sync-batch", 256, "msgs_per_s", 6e6),
    Target("IPC throughput, sync poll(handler), per-message handler", ">= 8 M msgs/s", "throughput",
           "aeron-sync-handler", 32, "msgs_per_s", 8e6),
    Target("IPC throughput, sync poll(FragmentAssembler(handler))", ">= 6 M msgs/s", "throughput",
           "aeron-sync-assembler", 32, "msgs_per_s", 6e6),
    Target("IPC throughput, sync controlled_poll(handler)", ">= 6 M msgs/s", "throughput",
           "aeron-sync-controlled", 32, "msgs_per_s", 6e6),
    Target("IPC throughput, asyncio per-message await offer -> async for", ">= 1 M msgs/s", "throughput",
           "aeron-asyncio-msg", 32, "msgs_per_s", 1e6),
    Target("IPC throughput, asyncio per-message vs zmq.asyncio per-message (ipc://)", ">= 15x", "ratio",
           "aeron-asyncio-msg", 32, "msgs_per_s", 15.0, peer="zmq-asyncio-ipc"),
    Target("IPC throughput, sync per-message vs pyzmq sync ipc://", ">= 5x", "ratio",
           "aeron-sync-msg", 32, "msgs_per_s", 5.0, peer="zmq-sync-ipc"),
    Target("IPC round trip, sync busy-poll, p50", "<= 3 us", "latency", "aeron-sync", 32, "p50_us", 3.0, False),
    Target("IPC round trip, sync busy-poll, p99", "<= 20 us", "latency", "aeron-sync", 32, "p99_us", 20.0, False),
    Target("IPC round trip, asyncio, p50", "<= 100 us", "latency", "aeron-asyncio", 32, "p50_us", 100.0, False),
    Target("UDP loopback throughput, default driver settings, sync per-message", ">= 2 M msgs/s", "throughput",
           "aeron-sync-msg", 32, "msgs_per_s", 2e6, transport="aeron:udp"),
    Target("UDP loopback throughput vs pyzmq sync tcp://", ">= 1.5x", "ratio",
           "aeron-sync-msg", 32, "msgs_per_s", 1.5, peer="zmq-sync-tcp", transport="aeron:udp"),
    Target("UDP loopback round trip, default settings (backoff idle), p50", "<= 50 us", "latency",
           "aeron-sync-backoff", 32, "p50_us", 50.0, False, transport="aeron:udp"),
    Target("UDP loopback round trip, busy-poll mode (INVOKER drivers), p50", "<= 15 us", "latency",
           "aeron-sync-invoker", 32, "p50_us", 15.0, False, transport="aeron:udp"),
    Target("idle async subscriber + embedded driver", "<= 2% of a core", "idle", field="cpu_percent",
           threshold=2.0, higher_is_better=False),
    Target("IPC request/response round trip, AsyncRpcClient on asyncio, p50", "<= 20 us", "rpc",
           "aeron-rpc-asyncio", 32, "p50_us", 20.0, False),
    Target("IPC request/response round trip, AsyncRpcClient on uvloop, p50", "<= 10 us", "rpc",
           "aeron-rpc-uvloop", 32, "p50_us", 10.0, False),
    Target("IPC request/response, 10 clients x 10 in flight, asyncio, requests/s vs the best pyzmq row", ">= 10x",
           "rpc", "aeron-rpc-asyncio", 32, "vs_best_zmq", 10.0),
    Target("flow control written in Python (fc=pymin) vs native fc=min, 3 multicast receivers, 32 B", ">= 0.9x",
           "flow-control", field="ratio", threshold=0.9, transport="aeron:udp"),
)
