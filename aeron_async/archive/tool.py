"""`aeron-async recordings`: an archive directory's recordings from its files, without the archive
running (Aeron's ArchiveTool): list, describe, verify (frames and checksums), migrate (copy or move
recordings into another archive directory), delete-orphaned-segments (files no recording reads:
detached ones, those of deleted recordings), retention --dry-run (what the archive's retention would
remove now).

It reads `archive.catalog` through the native catalog (read-only, so a running archive is not
disturbed; migrate refuses an archive that is running) and checks the segment files
`<recordingId>-<segmentBase>.rec` with the native segment verifier, from the start position to the
stop position (or to the end of the data of an active recording).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from typing import Any

import attrs

from .._closing import ClosedOnExit
from .._ffi import ffi, lib
from ..errors import ConfigurationError, check
from .records import RecordingDescriptor, RecordingState

ACTIVE_WITHIN_MS = 10_000  # Aeron's rule: a mark file updated this recently is a running archive


@attrs.frozen
class CatalogEntry:
    """A catalog entry: its state, the descriptor header's checksum, and the recording."""

    state: RecordingState
    checksum: int
    descriptor: RecordingDescriptor


@attrs.frozen
class SegmentFile:
    base_position: int
    path: str
    size: int


@attrs.frozen
class VerifyReport:
    """What `verify` found for one recording: `problems` is empty when it is sound."""

    recording_id: int
    frames: int
    end_position: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _text(var: Any) -> str:
    length = int(var.length)
    return bytes(ffi.buffer(var.data, length)).decode("ascii", "replace") if length else ""


def _descriptor(d: Any) -> RecordingDescriptor:
    return RecordingDescriptor(
        d.control_session_id, d.correlation_id, d.recording_id, d.start_timestamp, d.stop_timestamp,
        d.start_position, d.stop_position, d.initial_term_id, d.segment_file_length, d.term_buffer_length,
        d.mtu_length, d.session_id, d.stream_id, _text(d.stripped_channel), _text(d.original_channel),
        _text(d.source_identity))


def _state(value: int) -> RecordingState:
    try:
        return RecordingState(value)
    except ValueError:
        return RecordingState.INVALID


class Catalog(ClosedOnExit):
    """An archive directory's catalog, opened through the native catalog (read-only by default)."""

    def __init__(self, archive_dir: str, *, writable: bool = False, create: bool = False) -> None:
        if not create:
            try:
                os.stat(os.path.join(archive_dir, "archive.catalog"))
            except PermissionError as exc:
                raise ConfigurationError(
                    f"no access to the archive directory {archive_dir}: {exc.strerror}; an archive's directory is "
                    "its user's only (docs/security.md, Files): run as that user, or have the archive started with "
                    "AERON_ARCHIVE_DIR_GROUP set to a group of this user") from exc
            except OSError as exc:
                raise ConfigurationError(f"{archive_dir} has no archive.catalog: give the archive directory "
                                         "(the archive's archive_dir, AERON_ARCHIVE_DIR)") from exc
        flags = (0 if writable else lib.AA_ARCHIVE_CATALOG_READ_ONLY) | (lib.AA_ARCHIVE_CATALOG_CREATE if create else 0)
        out = ffi.new("aa_archive_catalog_t **")
        check(lib.aa_archive_catalog_open(out, archive_dir.encode(), 0, 0, lib.AA_ARCHIVE_CHECKSUM_NONE, flags),
              ConfigurationError)
        self._ptr: Any = out[0]
        self.archive_dir = archive_dir

    def _checked(self) -> Any:
        if self._ptr is None:
            raise ConfigurationError("the catalog is closed")
        return self._ptr

    def entries(self) -> list[CatalogEntry]:
        """Every entry in file order, any state."""
        entry = ffi.new("aa_archive_catalog_entry_t *")
        out = []
        index = 0
        while check(lib.aa_archive_catalog_entry(self._checked(), index, entry)) == 1:
            out.append(CatalogEntry(_state(entry.state), entry.checksum, _descriptor(entry.fields)))
            index += 1
        return out

    def find(self, recording_id: int) -> CatalogEntry | None:
        entry = ffi.new("aa_archive_catalog_entry_t *")
        if check(lib.aa_archive_catalog_find(self._checked(), recording_id, entry)) == 0:
            return None
        return CatalogEntry(_state(entry.state), entry.checksum, _descriptor(entry.fields))

    def add(self, descriptor: RecordingDescriptor) -> int:
        """Append a copy of `descriptor` (a new recording id is assigned); returns the id."""
        d = ffi.new("aa_archive_recording_descriptor_t *")
        for name in ("start_timestamp", "stop_timestamp", "start_position", "stop_position", "initial_term_id",
                     "segment_file_length", "term_buffer_length", "mtu_length", "session_id", "stream_id"):
            setattr(d, name, getattr(descriptor, name))
        keep = []
        for name in ("stripped_channel", "original_channel", "source_identity"):
            data = getattr(descriptor, name).encode("ascii")
            buffer = ffi.new("uint8_t[]", data) if data else ffi.NULL
            keep.append(buffer)
            getattr(d, name).data = buffer
            getattr(d, name).length = len(data)
        recording_id = lib.aa_archive_catalog_add(self._checked(), d)
        check(-1 if recording_id < 0 else 0, ConfigurationError)
        if descriptor.stop_position >= 0:
            check(lib.aa_archive_catalog_update_stop(self._checked(), recording_id, descriptor.stop_position,
                                                     descriptor.stop_timestamp), ConfigurationError)
        return int(recording_id)

    def change_state(self, recording_id: int, state: RecordingState) -> None:
        check(lib.aa_archive_catalog_change_state(self._checked(), recording_id, int(state)), ConfigurationError)

    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            lib.aa_archive_catalog_close(ptr)


def segment_files(archive_dir: str, recording_id: int) -> list[SegmentFile]:
    """A recording's segment files, by base position."""
    bases = ffi.new("int64_t[]", 1024)
    count = check(lib.aa_archive_segment_list(archive_dir.encode(), recording_id, bases, 1024))
    if count > 1024:
        bases = ffi.new("int64_t[]", count)
        count = check(lib.aa_archive_segment_list(archive_dir.encode(), recording_id, bases, count))
    out = []
    for i in range(count):
        name = f"{recording_id}-{bases[i]}.rec"
        path = os.path.join(archive_dir, name)
        out.append(SegmentFile(int(bases[i]), path, os.path.getsize(path)))
    return out


def _segment_length(d: RecordingDescriptor) -> int:
    return int(lib.aa_archive_segment_length_for(d.segment_file_length, d.term_buffer_length))


def verify(archive_dir: str, descriptor: RecordingDescriptor, checksum: str | None = None) -> VerifyReport:
    """Check a recording's frames from its start position to its stop position (an active one's:
    to the end of its data, found by the recovery scan) with the native segment verifier: every
    frame's type, term offset, term id, stream id and extent, and with `checksum` ("crc-32c" or
    "crc-32") the checksum the archive stored in each DATA frame's session id field. The report
    names the first problem and its position."""
    d = descriptor
    checksum_type = lib.AA_ARCHIVE_CHECKSUM_NONE
    if checksum:
        checksum_type = lib.aa_archive_checksum_parse(checksum.encode())
        if checksum_type < 0:
            raise ConfigurationError(f"checksum {checksum!r}: give crc-32c or crc-32")
    segment_length = _segment_length(d)
    stop = d.stop_position
    if stop < 0:
        recovery = ffi.new("aa_archive_recovery_t *")
        check(lib.aa_archive_segment_recover(archive_dir.encode(), d.recording_id, d.start_position,
                                             d.initial_term_id, d.term_buffer_length, segment_length, d.stream_id,
                                             checksum_type, False, 0, recovery), ConfigurationError)
        stop = int(recovery.stop_position)
    result = ffi.new("aa_archive_verify_t *")
    rc = check(lib.aa_archive_segment_verify(archive_dir.encode(), d.recording_id, d.start_position, stop,
                                             d.initial_term_id, d.term_buffer_length, segment_length, d.stream_id,
                                             checksum_type, result), ConfigurationError)
    problems: tuple[str, ...] = ()
    if rc == 1:
        problems = (f"position {result.bad_position}: {ffi.string(result.message).decode('utf-8', 'replace')}",)
    end = d.start_position + int(result.bytes)
    return VerifyReport(d.recording_id, int(result.frames), end, problems)


def _archive_running(archive_dir: str) -> bool:
    if not os.path.exists(os.path.join(archive_dir, "archive-mark.dat")):
        return False
    from .service import read_archive_mark

    mark = read_archive_mark(archive_dir)
    return time.time() * 1000 - mark.activity_timestamp_ms < ACTIVE_WITHIN_MS


def migrate(source_dir: str, destination_dir: str, recording_ids: list[int] | None = None, *,
            move: bool = False) -> dict[int, int]:
    """Copy (or move) stopped recordings from one archive directory into another (created if
    needed): each gets a new id in the destination's catalog, its segment files copied under that
    id, at the same positions. Returns {old id: new id}. Neither archive may be running."""
    for directory in (source_dir, destination_dir):
        if _archive_running(directory):
            raise ConfigurationError(f"the archive in {directory} is running (its mark file was updated in the last "
                                     f"{ACTIVE_WITHIN_MS // 1000} s): stop it before migrating")
    # owner only when created, an existing one checked as the archive checks its own (docs/security.md, "Files")
    check(lib.aa_archive_dir_prepare(destination_dir.encode()), ConfigurationError)
    moved: dict[int, int] = {}
    with Catalog(source_dir, writable=move) as source, Catalog(destination_dir, writable=True, create=True) as dest:
        entries = {e.descriptor.recording_id: e for e in source.entries()}
        wanted = sorted(e for e, v in entries.items() if v.state == RecordingState.VALID) \
            if recording_ids is None else recording_ids
        for recording_id in wanted:
            entry = entries.get(recording_id)
            if entry is None or entry.state != RecordingState.VALID:
                raise ConfigurationError(f"recording {recording_id} is not a valid recording of {source_dir}: "
                                         "`aeron-async recordings list` shows them")
            if entry.descriptor.stop_position < 0:
                raise ConfigurationError(f"recording {recording_id} has no stop position (it was active when its "
                                         "archive stopped): run `aeron-async recordings verify` or start the "
                                         "archive once so it recovers it")
        for recording_id in wanted:
            descriptor = entries[recording_id].descriptor
            new_id = dest.add(descriptor)
            for segment in segment_files(source_dir, recording_id):
                # created natively: the destination directory's mode and group, never through a link
                fd = check(lib.aa_archive_segment_open(
                    destination_dir.encode(), new_id, segment.base_position, _segment_length(descriptor),
                    lib.AA_ARCHIVE_SEGMENT_CREATE, 0), ConfigurationError)
                with os.fdopen(fd, "r+b") as copy, open(segment.path, "rb") as original:
                    shutil.copyfileobj(original, copy, 1 << 20)
                    copy.truncate(segment.size)
                    copy.flush()
                    os.fsync(copy.fileno())
            moved[recording_id] = new_id
        dest_fd = os.open(destination_dir, os.O_RDONLY)
        try:
            os.fsync(dest_fd)
        finally:
            os.close(dest_fd)
        if move:
            for recording_id in wanted:
                source.change_state(recording_id, RecordingState.DELETED)
                for segment in segment_files(source_dir, recording_id):
                    os.unlink(segment.path)
    return moved


@attrs.frozen
class RetentionPlan:
    """What retention would remove from one recording: the whole recording (`purge`), or its
    segment files before `new_start` (the start moving from `start`)."""

    recording_id: int
    start: int
    new_start: int
    purge: bool
    segments: tuple[SegmentFile, ...]

    @property
    def size(self) -> int:
        return sum(segment.size for segment in self.segments)


def _option(value: str | None, env: str, parse: Any, what: str) -> int:
    """A retention setting: the argument, else the archive's environment variable, else 0 (off)."""
    text = value if value is not None else os.environ.get(env, "0")
    parsed = int(parse(text.encode()))
    if parsed < 0:
        form = "a size (64m, 1g)" if "BYTES" in env else "a duration (500ms, 3600s)"
        raise ConfigurationError(f"{what}={text!r} is not valid; give {form}")
    return parsed


def retention_plan(archive_dir: str, *, max_bytes: int = 0, max_age_ms: int = 0, max_recording_age_ms: int = 0,
                   now_ms: int | None = None) -> list[RetentionPlan]:
    """What the archive's retention (AERON_ARCHIVE_RETENTION_*) would remove now, computed by the
    archive's own plan (`aa_archive_retention_new_start`) from the catalog and the segment files.
    An active recording's end is taken as its last segment file (the archive also keeps a segment
    a replay reads, which a tool cannot see)."""
    policy = ffi.new("aa_archive_retention_policy_t *")
    policy.max_bytes, policy.max_age_ms, policy.max_recording_age_ms = max_bytes, max_age_ms, max_recording_age_ms
    now = int(time.time() * 1000) if now_ms is None else now_ms
    plans = []
    with _catalog(archive_dir) as catalog:
        entries = [e for e in catalog.entries() if e.state == RecordingState.VALID]
    for entry in entries:
        d = entry.descriptor
        files = segment_files(archive_dir, d.recording_id)
        if lib.aa_archive_retention_recording_expired(policy, d.stop_position, d.stop_timestamp, now):
            plans.append(RetentionPlan(d.recording_id, d.start_position, d.start_position, True, tuple(files)))
            continue
        end = d.stop_position if d.stop_position >= 0 else (files[-1].base_position if files else d.start_position)
        bases = ffi.new("int64_t[]", [f.base_position for f in files] or [0])
        mtimes = ffi.new("int64_t[]", [int(os.stat(f.path).st_mtime * 1000) for f in files] or [0])
        new_start = int(lib.aa_archive_retention_new_start(
            policy, d.start_position, end, d.term_buffer_length, _segment_length(d), bases, mtimes, len(files), now))
        if new_start > d.start_position:
            going = tuple(f for f in files if f.base_position < new_start)
            plans.append(RetentionPlan(d.recording_id, d.start_position, new_start, False, going))
    return plans


def orphaned_segments(archive_dir: str) -> list[str]:
    """Segment files no recording reads (Aeron's ArchiveTool delete-orphaned-segments): those of a
    recording that is not VALID in the catalog (deleted, invalid, unknown), and a VALID recording's
    detached ones, below its start position's segment (docs/architecture.md, "Segments and
    retention"). Paths, sorted."""
    with _catalog(archive_dir) as catalog:
        valid = {e.descriptor.recording_id: e.descriptor for e in catalog.entries()
                 if e.state == RecordingState.VALID}
    recording_id, base = ffi.new("int64_t *"), ffi.new("int64_t *")
    found = []
    for name in sorted(os.listdir(archive_dir)):
        if lib.aa_archive_segment_parse_file_name(name.encode(), recording_id, base) != 1:
            continue
        d = valid.get(int(recording_id[0]))
        if d is not None and base[0] >= lib.aa_archive_segment_base_position(
                d.start_position, d.start_position, d.term_buffer_length, _segment_length(d)):
            continue
        found.append(os.path.join(archive_dir, name))
    return found


@contextlib.contextmanager
def _catalog(archive_dir: str) -> Iterator[Catalog]:
    catalog = Catalog(archive_dir)
    try:
        yield catalog
    finally:
        catalog.close()


def _format_time(ms: int) -> str:
    return "-" if ms < 0 else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def command(args: Any) -> int:
    """The `aeron-async recordings` subcommands (see cli.py)."""
    if args.action == "list":
        with _catalog(args.archive_dir) as catalog:
            print(f"{'id':>6} {'state':7} {'start':>14} {'stop':>14} {'stream':>7} {'session':>11}  channel")
            for entry in catalog.entries():
                d = entry.descriptor
                if entry.state != RecordingState.VALID and not args.all:
                    continue
                stop = "active" if d.stop_position < 0 else str(d.stop_position)
                print(f"{d.recording_id:>6} {entry.state.name:7} {d.start_position:>14} {stop:>14} {d.stream_id:>7} "
                      f"{d.session_id:>11}  {d.original_channel}")
        return 0
    if args.action == "describe":
        with _catalog(args.archive_dir) as catalog:
            found = catalog.find(args.recording_id)
        if found is None:
            print(f"aeron-async recordings: no recording {args.recording_id} in {args.archive_dir}")
            return 1
        d = found.descriptor
        print(f"recording {d.recording_id} ({found.state.name}, descriptor checksum {found.checksum})")
        for field in attrs.fields(RecordingDescriptor):
            if field.name in ("control_session_id", "correlation_id", "recording_id"):
                continue
            value = getattr(d, field.name)
            if field.name.endswith("timestamp"):
                value = f"{value} ({_format_time(value)})"
            print(f"  {field.name:20} {value}")
        for segment in segment_files(args.archive_dir, d.recording_id):
            print(f"  segment {os.path.basename(segment.path)} ({segment.size} bytes)")
        return 0
    if args.action == "verify":
        failed = 0
        with _catalog(args.archive_dir) as catalog:
            entries = [e for e in catalog.entries() if e.state == RecordingState.VALID
                       and (args.recording_id is None or e.descriptor.recording_id == args.recording_id)]
        if args.recording_id is not None and not entries:
            print(f"aeron-async recordings: no valid recording {args.recording_id} in {args.archive_dir}")
            return 1
        for entry in entries:
            report = verify(args.archive_dir, entry.descriptor, args.checksum)
            if report.ok:
                print(f"recording {report.recording_id}: OK, {report.frames} frames up to {report.end_position}")
            else:
                failed += 1
                print(f"recording {report.recording_id}: {len(report.problems)} problem(s) after {report.frames} "
                      f"frames:")
                for problem in report.problems:
                    print(f"  {problem}")
        return 1 if failed else 0
    if args.action == "migrate":
        moved = migrate(args.archive_dir, args.destination, args.recording_ids or None, move=args.move)
        for old, new in moved.items():
            print(f"recording {old} -> {args.destination} recording {new}")
        return 0
    if args.action == "delete-orphaned-segments":
        if not args.dry_run and _archive_running(args.archive_dir):
            raise ConfigurationError(f"the archive in {args.archive_dir} is running (its mark file was updated in the "
                                     f"last {ACTIVE_WITHIN_MS // 1000} s): stop it first, or ask it "
                                     "(delete_detached_segments)")
        orphans = orphaned_segments(args.archive_dir)
        for path in orphans:
            if not args.dry_run:
                os.unlink(path)
            print(f"{'would delete' if args.dry_run else 'deleted'} {os.path.basename(path)}")
        if not orphans:
            print("no orphaned segment files")
        return 0
    if args.action == "retention":
        if not args.dry_run:
            print("aeron-async recordings retention: the running archive applies retention itself "
                  "(AERON_ARCHIVE_RETENTION_*); add --dry-run to see what it would remove now")
            return 2
        plans = retention_plan(
            args.archive_dir,
            max_bytes=_option(args.max_bytes, "AERON_ARCHIVE_RETENTION_MAX_BYTES", lib.aa_parse_size, "--max-bytes"),
            max_age_ms=_option(args.max_age, "AERON_ARCHIVE_RETENTION_MAX_AGE", lib.aa_parse_duration_ns,
                               "--max-age") // 1_000_000,
            max_recording_age_ms=_option(args.recording_max_age, "AERON_ARCHIVE_RETENTION_RECORDING_MAX_AGE",
                                         lib.aa_parse_duration_ns, "--recording-max-age") // 1_000_000)
        if not plans:
            print("retention would remove nothing")
        for plan in plans:
            if plan.purge:
                print(f"recording {plan.recording_id}: would purge the whole recording ({len(plan.segments)} segment "
                      f"file(s), {plan.size} bytes)")
            else:
                print(f"recording {plan.recording_id}: would move its start {plan.start} -> {plan.new_start} and "
                      f"delete {len(plan.segments)} segment file(s), {plan.size} bytes")
            for segment in plan.segments:
                print(f"  {os.path.basename(segment.path)}")
        return 0
    raise AssertionError(args.action)


def add_arguments(parser: Any) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    p = actions.add_parser("list", help="the catalog's recordings")
    p.add_argument("--archive-dir", required=True)
    p.add_argument("--all", action="store_true", help="also invalid and deleted entries")
    p = actions.add_parser("describe", help="one recording's descriptor and segment files")
    p.add_argument("--archive-dir", required=True)
    p.add_argument("recording_id", type=int)
    p = actions.add_parser("verify", help="check every frame (position, term, stream; checksums with --checksum)")
    p.add_argument("--archive-dir", required=True)
    p.add_argument("recording_id", type=int, nargs="?", help="one recording (default: every valid one)")
    p.add_argument("--checksum", help="crc-32c or crc-32: verify the checksums the archive recorded with")
    p = actions.add_parser("migrate", help="copy (or --move) stopped recordings into another archive directory")
    p.add_argument("--archive-dir", required=True, help="the source archive directory")
    p.add_argument("destination", help="the destination archive directory (created if needed)")
    p.add_argument("recording_ids", type=int, nargs="*", help="which (default: every valid one)")
    p.add_argument("--move", action="store_true", help="delete them from the source afterwards")
    p = actions.add_parser("delete-orphaned-segments",
                           help="delete segment files no recording reads: of recordings not valid in the catalog, "
                                "and detached ones below a recording's start (the archive must be stopped)")
    p.add_argument("--archive-dir", required=True)
    p.add_argument("--dry-run", action="store_true", help="show what would be deleted, delete nothing")
    p = actions.add_parser("retention", help="what the archive's retention would remove now (--dry-run)")
    p.add_argument("--archive-dir", required=True)
    p.add_argument("--dry-run", action="store_true", help="show what would be removed, remove nothing")
    p.add_argument("--max-bytes",
                   help="keep each recording's newest N bytes (default AERON_ARCHIVE_RETENTION_MAX_BYTES)")
    p.add_argument("--max-age", help="segments last written longer ago go (default AERON_ARCHIVE_RETENTION_MAX_AGE)")
    p.add_argument("--recording-max-age", help="stopped recordings that stopped longer ago go "
                                                "(default AERON_ARCHIVE_RETENTION_RECORDING_MAX_AGE)")
