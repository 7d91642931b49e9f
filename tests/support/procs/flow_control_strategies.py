"""Flow-control strategies written in Python that tests hand to a standalone driver
(`aeron-async driver --flow-control NAME=tests.support.procs.flow_control_strategies:Class`)."""

from __future__ import annotations

from aeron_async import MinFlowControl, StatusMessage


class RaisesOnThirdStatusMessage(MinFlowControl):
    """Min, until its third status message: then it raises (the driver logs it and uses min)."""

    def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
        self.count = getattr(self, "count", 0) + 1
        if self.count == 3:
            raise RuntimeError(f"strategy failed on purpose at {sm.position}")
        return super().on_status_message(sm, sender_limit, now_ns)
