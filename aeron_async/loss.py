"""The loss report: every loss a media driver's receiver detected, per image (Aeron's LossReport).

The driver keeps `<aeron_dir>/loss-report.dat` (length `AERON_LOSS_REPORT_BUFFER_LENGTH`, 1 MiB by
default). Each image that lost data has one entry, created at its first loss observation: a gap the
receiver NAKs (or, on a `reliable=false` stream, fills with padding) when the NAK delay has passed
is one observation, and each retry NAK of a gap still open is another, its bytes counted again, as
in Aeron. So on a driver whose images are all reliable, the sum of `observation_count` is the
number of NAKs its receiver decided to send, which is its "NAKs sent" counter unless a send failed.

`read_loss_report(aeron_dir)` reads it from any process, while the driver runs or after it stopped
(until its directory is deleted); `aeron-async loss` prints it as Aeron's LossStat does. Aeron's own
tools read the same file.
"""

from __future__ import annotations

import datetime
import json
import mmap
import os
import struct
import sys
from typing import Any, TextIO

import attrs

from ._ffi import ffi, lib
from .errors import DriverNotFoundError

# The layout's one source is _native/src/concurrent/aa_loss_reporter.h (through the cdef).
_ALIGNMENT: int = lib.AA_LOSS_REPORT_ENTRY_ALIGNMENT
_COUNT: int = lib.AA_LOSS_REPORT_OBSERVATION_COUNT_OFFSET
_BYTES: int = lib.AA_LOSS_REPORT_TOTAL_BYTES_LOST_OFFSET
_FIRST: int = lib.AA_LOSS_REPORT_FIRST_OBSERVATION_OFFSET
_LAST: int = lib.AA_LOSS_REPORT_LAST_OBSERVATION_OFFSET
_SESSION: int = lib.AA_LOSS_REPORT_SESSION_ID_OFFSET
_STREAM: int = lib.AA_LOSS_REPORT_STREAM_ID_OFFSET
_CHANNEL: int = lib.AA_LOSS_REPORT_CHANNEL_OFFSET
FILE_NAME: str = ffi.string(lib.aa_loss_report_file_name()).decode()

_I64 = struct.Struct("<q")
_I32 = struct.Struct("<i")


@attrs.frozen
class LossEntry:
    """The loss of one image: observations, bytes lost over all of them (a gap NAKed twice counts
    twice), the first and last observation times (ms since the epoch), and the stream."""

    observation_count: int
    total_bytes_lost: int
    first_observation_timestamp: int
    last_observation_timestamp: int
    session_id: int
    stream_id: int
    channel: str
    source: str

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def loss_report_path(aeron_dir: str | None = None) -> str:
    """`<aeron_dir>/loss-report.dat`; the directory defaults to `$AERON_DIR` or /dev/shm/aeron-<user>."""
    if aeron_dir is None:
        buf = ffi.new("char[]", 4096)
        lib.aa_default_aeron_dir(buf, 4096)
        aeron_dir = ffi.string(buf).decode()
    return os.path.join(aeron_dir, FILE_NAME)


def _source_at(view: memoryview, at: int, room: int) -> tuple[int, int] | None:
    """(where the source's bytes start, its length) for a source length field at `at`, if it fits."""
    length: int = _I32.unpack_from(view, at)[0]
    return (at + _I32.size, length) if 0 <= length <= room else None


def parse_loss_report(buffer: bytes | memoryview | mmap.mmap) -> list[LossEntry]:
    """The entries of a loss report's bytes, in order, up to the first empty one. An entry whose
    lengths run past the buffer ends the list (a file cut short).

    The source's length field is 4-byte aligned after the channel (Aeron's LossReport); entries of
    files aeron_async wrote before it aligned it (the field right after the channel's bytes) are
    read too: the aligned place is tried first, and holds no fitting length in such an entry
    (_native/src/concurrent/aa_loss_reporter.h)."""
    with memoryview(buffer) as view:
        capacity = len(view)
        fixed = _CHANNEL + 2 * _I32.size
        entries: list[LossEntry] = []
        offset = 0
        while capacity - offset >= fixed:
            count = _I64.unpack_from(view, offset + _COUNT)[0]
            if count <= 0:
                break
            room = capacity - offset - fixed
            channel_length = _I32.unpack_from(view, offset + _CHANNEL)[0]
            if not 0 <= channel_length <= room:
                break
            at = offset + _CHANNEL + _I32.size
            channel = bytes(view[at:at + channel_length]).decode("ascii", "replace")
            padded = (channel_length + 3) & ~3
            found = _source_at(view, at + padded, room - padded) if padded <= room else None
            if found is None:  # the unaligned layout
                padded = channel_length
                found = _source_at(view, at + padded, room - padded)
                if found is None:
                    break
            source_at, source_length = found
            source = bytes(view[source_at:source_at + source_length]).decode("ascii", "replace")
            entries.append(LossEntry(
                observation_count=count,
                total_bytes_lost=_I64.unpack_from(view, offset + _BYTES)[0],
                first_observation_timestamp=_I64.unpack_from(view, offset + _FIRST)[0],
                last_observation_timestamp=_I64.unpack_from(view, offset + _LAST)[0],
                session_id=_I32.unpack_from(view, offset + _SESSION)[0],
                stream_id=_I32.unpack_from(view, offset + _STREAM)[0],
                channel=channel,
                source=source,
            ))
            length = fixed + padded + source_length
            offset += (length + _ALIGNMENT - 1) // _ALIGNMENT * _ALIGNMENT
    return entries


def read_loss_report(aeron_dir: str | None = None) -> list[LossEntry]:
    """The loss report of the driver at `aeron_dir` (default `$AERON_DIR` or /dev/shm/aeron-<user>).

    Raises DriverNotFoundError when the directory has no loss report (no driver has run there, or it
    was deleted)."""
    path = loss_report_path(aeron_dir)
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return []
            with mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as mapped:
                return parse_loss_report(mapped)
    except FileNotFoundError:
        raise DriverNotFoundError(
            f"no loss report at {path}: no media driver has run in {os.path.dirname(path)} "
            "(start one, or pass the directory it runs in with --aeron-dir or AERON_DIR)") from None


def _timestamp(ms: int) -> str:
    """As LossStat prints it: yyyy-MM-dd HH:mm:ss.SSS+zzzz, local time."""
    moment = datetime.datetime.fromtimestamp(ms / 1000).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}" + moment.strftime("%z")


HEADER = ("#OBSERVATION_COUNT, TOTAL_BYTES_LOST, FIRST_OBSERVATION, LAST_OBSERVATION, SESSION_ID, STREAM_ID, "
          "CHANNEL, SOURCE")


def print_loss_report(entries: list[LossEntry], out: TextIO, as_json: bool = False) -> None:
    """LossStat's output (a header line, a line per entry, the number of entries), or JSON."""
    if as_json:
        json.dump([e.as_dict() for e in entries], out, indent=1)
        out.write("\n")
        return
    out.write(HEADER + "\n")
    for e in entries:
        out.write(f"{e.observation_count},{e.total_bytes_lost},{_timestamp(e.first_observation_timestamp)},"
                  f"{_timestamp(e.last_observation_timestamp)},{e.session_id},{e.stream_id},{e.channel},"
                  f"{e.source}\n")
    out.write(f"{len(entries)} entries read\n")


def command(aeron_dir: str | None, as_json: bool, out: TextIO | None = None) -> int:
    """`aeron-async loss [--aeron-dir DIR] [--json]`."""
    try:
        entries = read_loss_report(aeron_dir)
    except DriverNotFoundError as exc:
        print(f"aeron-async loss: {exc}", file=sys.stderr)
        return 1
    print_loss_report(entries, sys.stdout if out is None else out, as_json)
    return 0
