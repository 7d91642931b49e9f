"""Benchmarks of aeron_async against its peers, in one run: `aeron-async bench` (see
docs/benchmarks.md).

Throughput and round trips run in separate processes (one standalone media driver shared by ours),
over aeron:ipc (and UDP channels once the driver carries them), through the sync client and the
async facade on asyncio, uvloop and trio; pyzmq and plain asyncio UDP are measured the same way in
the same run, alternating with ours round by round. The memory benchmark checks that the batch
receive path stays flat over millions of messages and that the native message path allocates
nothing per message; the idle benchmark measures what a waiting async subscriber costs; the
flow-control benchmark compares a flow-control strategy written in Python (MinFlowControl) with the
native min on a multicast group of three receiving processes (`flow_control`).

Modules: `harness` (options, processes, rounds, summaries, targets), `cases` (what is measured),
`report` (progress and tables), `worker` (a benchmark process) and the roles it runs:
`aeron_roles`, `peer_roles`, `memory_roles`; `multicast` (its rows) on hosts from `netns` (network
namespaces, which the multi-host tests use too).
"""

from __future__ import annotations

from .harness import add_arguments, command, main

__all__ = ("add_arguments", "command", "main")
