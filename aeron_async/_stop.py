"""The stop flag of the long-running commands (`aeron-async driver`, `archive`, `exporter`), and
`cancel_on_signals`, which ends an async program's work on SIGINT or SIGTERM (the examples, a service).

SIGINT and SIGTERM set a plain attribute. A `threading.Event` set from a signal handler can
deadlock: Python runs the handler in the main thread between two bytecodes, possibly while that
thread holds the Event's lock inside `Event.wait`, and `Event.set` then waits for that same lock
forever (the driver then never stops on Ctrl-C). Setting an attribute takes no lock.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import AsyncIterator
from types import FrameType

import anyio
import anyio.abc


class StopOnSignal:
    """Set by SIGINT or SIGTERM once installed; `wait(t)` sleeps up to t seconds unless already set."""

    def __init__(self) -> None:
        self.stopped = False
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stopped = True

    def is_set(self) -> bool:
        return self.stopped

    def wait(self, timeout: float) -> bool:
        """Sleeps `timeout` seconds (a signal ends the sleep at the latest after it) unless stopped;
        returns whether stopped."""
        if not self.stopped:
            time.sleep(timeout)
        return self.stopped


@contextlib.asynccontextmanager
async def cancel_on_signals(*signums: signal.Signals) -> AsyncIterator[anyio.CancelScope]:
    """Runs the body of `async with` until it ends or SIGINT or SIGTERM (or `signums`) arrives: the
    first signal cancels the body, whose `async with` blocks then close their publications,
    subscriptions, client and embedded driver as on any exit; a further signal while they close
    changes nothing (no KeyboardInterrupt in the middle of the clean-up). The yielded scope's
    `cancelled_caught` says, after the block, whether a signal ended it. For a service that a
    process manager stops (Kubernetes sends SIGTERM, then SIGKILL after the grace period):

        async with aeron_async.connect() as client, aeron_async.cancel_on_signals():
            ...  # runs until done or stopped
    """
    signums = signums or (signal.SIGINT, signal.SIGTERM)
    scope = anyio.CancelScope()

    async def watch(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with anyio.open_signal_receiver(*signums) as signals:
            task_status.started()
            async for _ in signals:
                scope.cancel()

    async with anyio.create_task_group() as group:
        await group.start(watch)
        try:
            with scope:
                yield scope
        finally:
            group.cancel_scope.cancel()
