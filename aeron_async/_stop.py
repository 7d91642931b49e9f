"""The stop flag of the long-running commands (`aeron-async driver`, `archive`, `exporter`).

SIGINT and SIGTERM set a plain attribute. A `threading.Event` set from a signal handler can
deadlock: Python runs the handler in the main thread between two bytecodes, possibly while that
thread holds the Event's lock inside `Event.wait`, and `Event.set` then waits for that same lock
forever (the driver then never stops on Ctrl-C). Setting an attribute takes no lock.
"""

from __future__ import annotations

import signal
import time
from types import FrameType


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
