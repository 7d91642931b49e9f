"""Monitoring: read a driver's counters and error log from its CnC file, from any process."""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from ._ffi import ffi, lib
from .errors import DriverNotFoundError, check

# Counter type ids (reference section 3).
TYPE_SYSTEM = 0
TYPE_PUBLISHER_LIMIT = 1
TYPE_SENDER_POSITION = 2
TYPE_RECEIVER_HWM = 3
TYPE_SUBSCRIBER_POSITION = 4
TYPE_RECEIVER_POSITION = 5
TYPE_SEND_CHANNEL_STATUS = 6
TYPE_RECEIVE_CHANNEL_STATUS = 7
TYPE_SENDER_LIMIT = 9
TYPE_CLIENT_HEARTBEAT = 11
TYPE_PUBLISHER_POSITION = 12
TYPE_SENDER_BPE = 13

# Counters whose key is not (registration id, session id, stream id, channel).
_NOT_STREAM_TYPES = (TYPE_SYSTEM, TYPE_CLIENT_HEARTBEAT, TYPE_SEND_CHANNEL_STATUS, TYPE_RECEIVE_CHANNEL_STATUS)


@dataclass(frozen=True, slots=True)
class Counter:
    id: int
    type_id: int
    value: int
    registration_id: int
    label: str
    key: bytes

    @property
    def session_id(self) -> int | None:
        if self.type_id in _NOT_STREAM_TYPES:
            return None
        session_id: int = struct.unpack_from("<i", self.key, 8)[0]
        return session_id

    @property
    def stream_id(self) -> int | None:
        if self.type_id in _NOT_STREAM_TYPES:
            return None
        stream_id: int = struct.unpack_from("<i", self.key, 12)[0]
        return stream_id


@dataclass(frozen=True, slots=True)
class ErrorObservation:
    count: int
    first_ms: int
    last_ms: int
    text: str


class CncReader:
    """A read-only view of a running driver's CnC file."""

    def __init__(self, aeron_dir: str | None = None) -> None:
        out = ffi.new("aa_cnc_reader_t **")
        check(lib.aa_cnc_reader_open(out, aeron_dir.encode() if aeron_dir else ffi.NULL), DriverNotFoundError)
        self._ptr: Any = out[0]
        self._info = ffi.new("aa_cnc_info_t *")
        self._counter = ffi.new("aa_counter_info_t *")

    def info(self) -> dict[str, int]:
        lib.aa_cnc_reader_info(self._ptr, self._info)
        i = self._info
        return {
            "cnc_version": i.cnc_version,
            "pid": i.pid,
            "start_timestamp_ms": i.start_timestamp_ms,
            "client_liveness_timeout_ns": i.client_liveness_timeout_ns,
            "driver_heartbeat_age_ms": i.driver_heartbeat_age_ms,
        }

    def counters(self) -> Iterator[Counter]:
        c = self._counter
        next_id = 0
        while True:
            found = lib.aa_cnc_reader_next_counter(self._ptr, next_id, c)
            if found < 0:
                return
            yield Counter(
                id=c.id,
                type_id=c.type_id,
                value=c.value,
                registration_id=c.registration_id,
                label=ffi.string(c.label, c.label_length).decode("utf-8", "replace"),
                key=bytes(ffi.buffer(c.key, 112)),
            )
            next_id = found + 1

    def errors(self) -> list[ErrorObservation]:
        offset = ffi.new("size_t *", 0)
        record = ffi.new("aa_error_record_t *")
        out = []
        while lib.aa_cnc_reader_next_error(self._ptr, offset, record) == 1:
            text = ffi.string(record.text, record.text_length).decode("utf-8", "replace")
            out.append(ErrorObservation(record.observation_count, record.first_observation_ms,
                                        record.last_observation_ms, text))
        return out

    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            lib.aa_cnc_reader_close(ptr)

    def __enter__(self) -> CncReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def render(reader: CncReader) -> str:
    info = reader.info()
    lines = [
        f"{time.strftime('%H:%M:%S')} - aeron_async driver pid {info['pid']}, "
        f"heartbeat {info['driver_heartbeat_age_ms']} ms ago",
        "=" * 72,
    ]
    for c in reader.counters():
        lines.append(f"{c.id:3d}: {c.value:20,d} - {c.label}")
    return "\n".join(lines)


def run_stat(aeron_dir: str | None, interval: float, count: int | None, out: TextIO) -> int:
    with CncReader(aeron_dir) as reader:
        shown = 0
        while count is None or shown < count:
            if shown and out.isatty():
                out.write("\x1b[H\x1b[2J")
            out.write(render(reader) + "\n\n")
            out.flush()
            shown += 1
            if count is None or shown < count:
                time.sleep(interval)
    return 0
