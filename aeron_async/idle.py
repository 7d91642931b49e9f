"""Idle strategies for the application's own duty-cycle loops (a synchronous publisher retrying a
refused offer, a subscriber polling an empty image).

On a small machine a loop that spins on a refused `offer` or an empty `poll` takes the core the
media driver needs to move the data, so the loop slows itself down. Give the strategy the work
count of each pass: it spins, then yields, then parks for longer and longer while there is none.

    idle = aeron_async.IdleStrategy("backoff")
    while running:
        messages = sub.poll_messages()
        ...
        idle.idle(len(messages))

The strategies are the media driver's own, by the same names: "backoff" (optionally
"backoff:SPINS-YIELDS-MINPARK-MAXPARK", e.g. "backoff:10-20-1us-1ms"), "spin", "yield",
"sleeping[:DURATION]" and "noop", and any registered in `aeron_async.strategies` (kind IDLE).

A backoff strategy that parks sets its thread's Linux timer slack to 1 us the first time it parks
(the default 50 us would turn every 1 us park into 50), and leaves it so: other timed sleeps of that
thread wake closer to their deadline from then on.
"""

from __future__ import annotations

from ._ffi import ffi, lib
from .errors import ConfigurationError, last_error


class IdleStrategy:
    """A native idle strategy for one loop (one thread at a time)."""

    __slots__ = ("_ptr", "_apply", "name")

    def __init__(self, spec: str = "backoff") -> None:
        ptr = lib.aa_idle_strategy_new(spec.encode())
        if ptr == ffi.NULL:
            raise last_error(ConfigurationError)
        self._ptr = ffi.gc(ptr, lib.aa_idle_strategy_free)
        self._apply = lib.aa_idle_strategy_apply
        self.name: str = ffi.string(lib.aa_idle_strategy_name(ptr)).decode()

    def idle(self, work_count: int = 0) -> None:
        """After a pass of the loop that did `work_count` units of work: nothing when there was
        work (the strategy resets), otherwise spin, yield or park as the strategy says."""
        self._apply(self._ptr, work_count)

    def reset(self) -> None:
        """Start backing off from the beginning, as after a pass with work."""
        self._apply(self._ptr, 1)

    def __repr__(self) -> str:
        return f"IdleStrategy({self.name!r})"
