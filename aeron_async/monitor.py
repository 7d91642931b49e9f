"""Monitoring: read a driver's counters and error log from its CnC file, from any process."""

from __future__ import annotations

import time
from typing import Any

import attrs

from . import counters as _counters
from ._ffi import ffi, lib
from .counters import CounterRecord, CountersReader


def __getattr__(name: str) -> Any:
    """The counter type ids (TYPE_*) tools have read from here: aeron_async.counters' (PEP 562)."""
    if name.startswith("TYPE_") and hasattr(_counters, name):
        return getattr(_counters, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Counter = CounterRecord  # the name this module gave counter records before aeron_async.counters


@attrs.frozen
class ErrorObservation:
    count: int
    first_ms: int
    last_ms: int
    text: str


class CncReader(CountersReader):
    """A read-only view of a running driver's CnC file: its counters (those of a CountersReader), its
    header (`info`) and its error log (`errors`)."""

    __slots__ = ("_cnc_info",)

    def __init__(self, aeron_dir: str | None = None) -> None:
        super().__init__(aeron_dir)
        self._cnc_info = ffi.new("aa_cnc_info_t *")

    def info(self) -> dict[str, int]:
        i = self._cnc_info
        lib.aa_cnc_reader_info(self._checked(), i)
        return {
            "cnc_version": i.cnc_version,
            "pid": i.pid,
            "start_timestamp_ms": i.start_timestamp_ms,
            "client_liveness_timeout_ns": i.client_liveness_timeout_ns,
            "driver_heartbeat_age_ms": i.driver_heartbeat_age_ms,
        }

    def errors(self) -> list[ErrorObservation]:
        offset = ffi.new("size_t *", 0)
        record = ffi.new("aa_error_record_t *")
        out = []
        ptr = self._checked()
        while lib.aa_cnc_reader_next_error(ptr, offset, record) == 1:
            text = ffi.string(record.text, record.text_length).decode("utf-8", "replace")
            out.append(ErrorObservation(record.observation_count, record.first_observation_ms,
                                        record.last_observation_ms, text))
        return out


def render(reader: CncReader) -> str:
    """Every counter as `aeron-async stat --once` prints it (aeron_async.stat has the command)."""
    info = reader.info()
    age = info["driver_heartbeat_age_ms"]
    lines = [
        f"{time.strftime('%H:%M:%S')} - aeron_async driver pid {info['pid']}, "
        + (f"heartbeat {age} ms ago" if age >= 0 else "closed"),
        "=" * 72,
    ]
    for c in reader.counters():
        lines.append(f"{c.id:3d}: {c.value:20,d} - {c.label}")
    return "\n".join(lines)
