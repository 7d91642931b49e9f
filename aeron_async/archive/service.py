"""The archive service: records streams to segment files and replays them (Aeron Archive's files
and control protocol), native agents beside a media driver.

Embedded (in this process, beside a MediaDriver)::

    with aeron_async.MediaDriver.launch(threading_mode="SHARED") as driver:
        with Archive.launch(archive_dir="/var/lib/app/archive", aeron_dir=driver.aeron_dir) as archive:
            ...  # clients connect with aeron_async.archive.AeronArchive

or with a driver of its own: ``Archive.launch(archive_dir=..., embedded_driver=True)``. Standalone:
``aeron-async archive --archive-dir DIR [--embedded-driver]``.

`ArchiveContext` mirrors the native option table one-to-one: every field has an environment
variable (`AERON_ARCHIVE_*`, or `AERON_DIR`) and a default; a field left at None takes the
environment variable if set, else the default (docs/configuration.md lists them).
"""

from __future__ import annotations

import threading
from typing import Any

import attrs

from .._ffi import ffi, lib
from ..context import DriverContext
from ..driver import MediaDriver
from ..errors import ClosedError, ConfigurationError, check

Size = int | str
Duration = float | int | str


def _field(env: str, default_doc: str, doc: str) -> Any:
    return attrs.field(default=None, kw_only=True, metadata={"env": env, "default": default_doc, "doc": doc})


@attrs.define(slots=True)
class ArchiveContext:
    """Settings of an archive. Unset fields use `AERON_ARCHIVE_*` environment variables, then defaults."""

    archive_dir: str | None = _field("AERON_ARCHIVE_DIR", "aeron-archive", "directory of the catalog, segment files and mark file")
    aeron_dir: str | None = _field("AERON_DIR", "/dev/shm/aeron-<user>", "the media driver's directory the archive connects to")
    dir_delete_on_start: bool | None = _field("AERON_ARCHIVE_DIR_DELETE_ON_START", "false", "delete the archive directory's contents on start")
    archive_id: int | None = _field("AERON_ARCHIVE_ID", "-1", "the archive's id; -1: its client id (not stable across restarts)")
    control_channel: str | None = _field("AERON_ARCHIVE_CONTROL_CHANNEL", "", "UDP channel of control requests (none: local control only)")
    control_stream_id: int | None = _field("AERON_ARCHIVE_CONTROL_STREAM_ID", "10", "stream id of the control channel")
    local_control_channel: str | None = _field("AERON_ARCHIVE_LOCAL_CONTROL_CHANNEL", "aeron:ipc?term-length=64k", "IPC channel of local control requests")
    local_control_stream_id: int | None = _field("AERON_ARCHIVE_LOCAL_CONTROL_STREAM_ID", "10", "stream id of the local control channel")
    control_term_buffer_length: Size | None = _field("AERON_ARCHIVE_CONTROL_TERM_BUFFER_LENGTH", "64k", "term length of control response publications")
    control_term_buffer_sparse: bool | None = _field("AERON_ARCHIVE_CONTROL_TERM_BUFFER_SPARSE", "true", "control response logs are sparse files")
    threading_mode: str | None = _field("AERON_ARCHIVE_THREADING_MODE", "DEDICATED", "DEDICATED, SHARED or INVOKER")
    idle_strategy: str | None = _field("AERON_ARCHIVE_IDLE_STRATEGY", "backoff", "idle strategy of the archive's threads")
    segment_file_length: Size | None = _field("AERON_ARCHIVE_SEGMENT_FILE_LENGTH", "128m", "segment file length (power of 2, 64k..1g)")
    file_io_max_length: Size | None = _field("AERON_ARCHIVE_FILE_IO_MAX_LENGTH", "1m", "largest single write or read (power of 2, >= 64k)")
    file_sync_level: int | None = _field("AERON_ARCHIVE_FILE_SYNC_LEVEL", "0", "segments: 0 page cache, 1 force data, 2 data and metadata")
    catalog_file_sync_level: int | None = _field("AERON_ARCHIVE_CATALOG_FILE_SYNC_LEVEL", "0", "the catalog's sync level (>= file_sync_level)")
    record_checksum: str | None = _field("AERON_ARCHIVE_RECORD_CHECKSUM", "", "CRC-32C or CRC-32 of each frame stored on record (empty: none)")
    replay_checksum: str | None = _field("AERON_ARCHIVE_REPLAY_CHECKSUM", "", "verify each frame's checksum on replay (empty: none)")
    max_concurrent_recordings: int | None = _field("AERON_ARCHIVE_MAX_CONCURRENT_RECORDINGS", "20", "recordings at once")
    max_concurrent_replays: int | None = _field("AERON_ARCHIVE_MAX_CONCURRENT_REPLAYS", "20", "replays at once")
    catalog_capacity: Size | None = _field("AERON_ARCHIVE_CATALOG_CAPACITY", "1m", "initial catalog length (grows x1.5)")
    connect_timeout: Duration | None = _field("AERON_ARCHIVE_CONNECT_TIMEOUT", "5s", "timeout of each control session phase and of unsent responses")
    session_liveness_check_interval: Duration | None = _field("AERON_ARCHIVE_SESSION_LIVENESS_CHECK_INTERVAL", "1s", "ping interval of control sessions")
    replay_linger_timeout: Duration | None = _field("AERON_ARCHIVE_REPLAY_LINGER_TIMEOUT", "5s", "linger of a finished replay's publication")
    low_storage_space_threshold: Size | None = _field("AERON_ARCHIVE_LOW_STORAGE_SPACE_THRESHOLD", "128m", "new recordings are refused below this much free space")
    error_buffer_length: Size | None = _field("AERON_ARCHIVE_ERROR_BUFFER_LENGTH", "1m", "length of the error log in archive-mark.dat")
    driver_timeout: Duration | None = _field("AERON_ARCHIVE_DRIVER_TIMEOUT", "10s", "how long the archive waits for the media driver")

    def items(self) -> list[tuple[str, str]]:
        """(environment variable, native value) for every field that is set."""
        out = []
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if value is not None:
                out.append((field.metadata["env"], _native_value(field.name, value)))
        return out

    def _to_native(self) -> Any:
        ctx = lib.aa_archive_context_new()
        if ctx == ffi.NULL:
            check(-1, ConfigurationError)
        try:
            for env, value in self.items():
                check(lib.aa_archive_context_set(ctx, env.encode(), value.encode()), ConfigurationError)
        except BaseException:
            lib.aa_archive_context_free(ctx)
            raise
        return ctx


_DURATION_FIELDS = {f.name for f in attrs.fields(ArchiveContext) if f.type is not None and "Duration" in str(f.type)}


def _native_value(name: str, value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if name in _DURATION_FIELDS and isinstance(value, int | float):
        if value < 0:
            raise ConfigurationError(f"{name}={value!r} must not be negative (seconds, or a string like '500ms')")
        return f"{int(round(value * 1_000_000_000))}ns"
    return str(value)


def archive_options() -> list[tuple[str, str, str, str]]:
    """(env name, property name, default, description) for every option of the native archive."""
    out = []
    index = 0
    env = ffi.new("const char **")
    prop = ffi.new("const char **")
    default = ffi.new("const char **")
    desc = ffi.new("const char **")
    while lib.aa_archive_option(index, env, prop, default, desc) == 0:
        out.append(tuple(ffi.string(p[0]).decode() for p in (env, prop, default, desc)))
        index += 1
    return out  # type: ignore[return-value]


@attrs.frozen
class ArchiveErrorRecord:
    """One distinct error of an archive's error log (archive-mark.dat)."""

    observation_count: int
    first_observation_ms: int
    last_observation_ms: int
    text: str


@attrs.frozen
class ArchiveMark:
    """The header of an archive's mark file: who runs (ran) the archive, and its errors."""

    version: int
    activity_timestamp_ms: int
    start_timestamp_ms: int
    pid: int
    archive_id: int
    control_stream_id: int
    local_control_stream_id: int
    errors: tuple[ArchiveErrorRecord, ...]


def read_archive_mark(archive_dir: str) -> ArchiveMark:
    """Read `archive_dir`/archive-mark.dat (from any process, the archive running or not)."""
    info = ffi.new("aa_archive_mark_info_t *")
    reader_out = ffi.new("aa_archive_mark_reader_t **")
    check(lib.aa_archive_mark_reader_open(reader_out, archive_dir.encode(), info), ConfigurationError)
    errors: list[ArchiveErrorRecord] = []
    try:
        offset = ffi.new("size_t *")
        record = ffi.new("aa_error_record_t *")
        while lib.aa_archive_mark_reader_next_error(reader_out[0], offset, record) == 1:
            text = ffi.string(record.text, record.text_length).decode(errors="replace")
            errors.append(ArchiveErrorRecord(record.observation_count, record.first_observation_ms,
                                             record.last_observation_ms, text))
    finally:
        lib.aa_archive_mark_reader_close(reader_out[0])
    return ArchiveMark(
        version=info.version,
        activity_timestamp_ms=info.activity_timestamp_ms,
        start_timestamp_ms=info.start_timestamp_ms,
        pid=info.pid,
        archive_id=info.archive_id,
        control_stream_id=info.control_stream_id,
        local_control_stream_id=info.local_control_stream_id,
        errors=tuple(errors),
    )


class Archive:
    """A running archive whose agents are native threads (or `do_work` calls in INVOKER mode).

    Use as a context manager; `close` stops its recordings (writing their stop positions) and
    replays. With `embedded_driver`, it also owns (and closes) a media driver of its own."""

    __slots__ = ("_ptr", "_lock", "context", "archive_dir", "aeron_dir", "archive_id", "driver")

    def __init__(self, ptr: Any, context: ArchiveContext, archive_dir: str, aeron_dir: str,
                 driver: MediaDriver | None) -> None:
        self._ptr = ptr
        self._lock = threading.Lock()
        self.context = context
        self.archive_dir = archive_dir
        self.aeron_dir = aeron_dir
        self.archive_id: int = lib.aa_archive_id(ptr)
        self.driver = driver

    @classmethod
    def launch(cls, context: ArchiveContext | None = None, *,
               embedded_driver: bool | DriverContext = False, **overrides: Any) -> Archive:
        """Start an archive. Keyword arguments override fields of `context` (see ArchiveContext).

        `embedded_driver`: True (or a DriverContext) launches a media driver for this archive in
        this process first, in the context's aeron_dir, with spies simulating a connection so
        that local recordings of unconnected UDP publications advance. Refuses
        (ConfigurationError) when another archive is active on the archive directory."""
        if context is None:
            context = ArchiveContext()
        if overrides:
            try:
                context = attrs.evolve(context, **overrides)
            except TypeError as exc:
                raise ConfigurationError(f"unknown archive option: {exc}; see aeron_async.archive.ArchiveContext") from exc
        driver: MediaDriver | None = None
        if embedded_driver is not False:
            driver_context = embedded_driver if isinstance(embedded_driver, DriverContext) else DriverContext()
            if driver_context.aeron_dir is None and context.aeron_dir is not None:
                driver_context = attrs.evolve(driver_context, aeron_dir=context.aeron_dir)
            if driver_context.spies_simulate_connection is None:
                driver_context = attrs.evolve(driver_context, spies_simulate_connection=True)
            driver = MediaDriver.launch(driver_context)
            context = attrs.evolve(context, aeron_dir=driver.aeron_dir)
        try:
            native_ctx = context._to_native()
            try:
                archive_dir = ffi.string(lib.aa_archive_context_archive_dir(native_ctx)).decode()
                out = ffi.new("aa_archive_t **")
                check(lib.aa_archive_launch(out, native_ctx), ConfigurationError)
            finally:
                lib.aa_archive_context_free(native_ctx)
        except BaseException:
            if driver is not None:
                driver.close()
            raise
        aeron_dir = driver.aeron_dir if driver is not None else (context.aeron_dir or _default_aeron_dir())
        return cls(out[0], context, archive_dir, aeron_dir, driver)

    @property
    def is_closed(self) -> bool:
        return self._ptr is None

    def do_work(self) -> int:
        """One duty cycle of every agent (INVOKER threading mode); returns the work count."""
        ptr = self._ptr
        if ptr is None:
            raise ClosedError("the archive is closed")
        return check(lib.aa_archive_do_work(ptr))

    def mark(self) -> ArchiveMark:
        """The mark file's header and the archive's error log."""
        return read_archive_mark(self.archive_dir)

    def errors(self) -> list[ArchiveErrorRecord]:
        """The distinct errors the archive logged (archive-mark.dat), oldest first."""
        return list(read_archive_mark(self.archive_dir).errors)

    def close(self) -> None:
        with self._lock:
            ptr, self._ptr = self._ptr, None
        if ptr is not None:
            lib.aa_archive_close(ptr)
        if self.driver is not None:
            self.driver.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._ptr is None else "running"
        return f"<Archive {state} archive_dir={self.archive_dir!r} aeron_dir={self.aeron_dir!r} id={self.archive_id}>"


def _default_aeron_dir() -> str:
    buf = ffi.new("char[]", 4096)
    lib.aa_default_aeron_dir(buf, 4096)
    return ffi.string(buf).decode()
