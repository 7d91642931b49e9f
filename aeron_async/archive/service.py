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
environment variable if set, else the default (docs/configuration.md lists them). The native table
(`_native/src/archive/aa_archive_context.c`) is the one source of the names, defaults and
descriptions: the fields' metadata come from it (aeron_async/_options.py).
"""

from __future__ import annotations

import threading
from typing import Any

import attrs

from .. import _options
from .._ffi import ffi, lib
from ..context import DriverContext, Duration, Size
from ..driver import MediaDriver, _default_aeron_dir, _NativeService
from ..errors import ConfigurationError, check
from .auth import PYTHON_PREFIX, AuthenticatorWorker, load_authenticator


@_options.accepting_option_names(_options.ARCHIVE)
@attrs.define(slots=True, kw_only=True, field_transformer=_options.context_fields(_options.ARCHIVE))
class ArchiveContext(_options.NativeContext):
    """Settings of an archive. Unset fields use `AERON_ARCHIVE_*` environment variables, then defaults."""

    _NATIVE_PREFIX = "aa_archive_context"
    _KIND = _options.ARCHIVE

    archive_dir: str | None = None
    aeron_dir: str | None = None
    dir_delete_on_start: bool | None = None
    dir_group: str | int | None = None
    archive_id: int | None = None
    control_channel: str | None = None
    control_stream_id: int | None = None
    replication_channel: str | None = None
    local_control_channel: str | None = None
    local_control_stream_id: int | None = None
    control_term_buffer_length: Size | None = None
    control_term_buffer_sparse: bool | None = None
    threading_mode: str | None = None
    idle_strategy: str | None = None
    segment_file_length: Size | None = None
    file_io_max_length: Size | None = None
    file_sync_level: int | None = None
    catalog_file_sync_level: int | None = None
    record_checksum: str | None = None
    replay_checksum: str | None = None
    max_concurrent_recordings: int | None = None
    max_concurrent_replays: int | None = None
    catalog_capacity: Size | None = None
    connect_timeout: Duration | None = None
    session_liveness_check_interval: Duration | None = None
    replay_linger_timeout: Duration | None = None
    low_storage_space_threshold: Size | None = None
    error_buffer_length: Size | None = None
    driver_timeout: Duration | None = None
    authenticator: str | None = None
    credentials_file: str | None = None
    credentials: str | None = attrs.field(default=None, repr=False)
    max_control_sessions: int | None = None
    max_response_term_length: Size | None = None
    max_replays_per_session: int | None = None
    retention_max_bytes: Size | None = None
    retention_max_age: Duration | None = None
    retention_recording_max_age: Duration | None = None
    retention_check_interval: Duration | None = None


def archive_options() -> list[tuple[str, str, str, str]]:
    """(env name, property name, default, description) for every option of the native archive."""
    return _options.listing(_options.ARCHIVE)


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
    # every field but the errors is the header's field of the same name (aa_archive_mark_info_t)
    header = {field.name: getattr(info, field.name) for field in attrs.fields(ArchiveMark) if field.name != "errors"}
    return ArchiveMark(**header, errors=tuple(errors))


class Archive(_NativeService):
    """A running archive whose agents are native threads (or `do_work` calls in INVOKER mode).

    Use as a context manager; `close` stops its recordings (writing their stop positions) and
    replays. With `embedded_driver`, it also owns (and closes) a media driver of its own."""

    __slots__ = ("_ptr", "_lock", "context", "archive_dir", "aeron_dir", "archive_id", "driver", "_authenticator")
    _NAME = "archive"

    def __init__(self, ptr: Any, context: ArchiveContext, archive_dir: str, aeron_dir: str,
                 driver: MediaDriver | None) -> None:
        self._ptr = ptr
        self._lock = threading.Lock()
        self.context = context
        self.archive_dir = archive_dir
        self.aeron_dir = aeron_dir
        self.archive_id: int = lib.aa_archive_id(ptr)
        self.driver = driver
        self._authenticator: AuthenticatorWorker | None = None

    @classmethod
    def launch(cls, context: ArchiveContext | None = None, *,
               embedded_driver: bool | DriverContext = False, **overrides: Any) -> Archive:
        """Start an archive. Keyword arguments override fields of `context` (see ArchiveContext).

        `embedded_driver`: True (or a DriverContext) launches a media driver for this archive in
        this process first, in the context's aeron_dir, with spies simulating a connection so
        that local recordings of unconnected UDP publications advance. Refuses
        (ConfigurationError) when another archive is active on the archive directory."""
        context = _options.evolve(ArchiveContext() if context is None else context, overrides, _options.ARCHIVE)
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
                value = ffi.new("char[]", 1024)
                check(lib.aa_archive_context_get(native_ctx, b"AERON_ARCHIVE_AUTHENTICATOR", value, 1024), ConfigurationError)
                chosen = ffi.string(value).decode()
                # a Python authenticator is loaded before the archive starts, so a bad name fails the launch
                python_authenticator = load_authenticator(chosen) if chosen.startswith(PYTHON_PREFIX) else None
                out = ffi.new("aa_archive_t **")
                check(lib.aa_archive_launch(out, native_ctx), ConfigurationError)
            finally:
                lib.aa_archive_context_free(native_ctx)
        except BaseException:
            if driver is not None:
                driver.close()
            raise
        aeron_dir = driver.aeron_dir if driver is not None else (context.aeron_dir or _default_aeron_dir())
        archive = cls(out[0], context, archive_dir, aeron_dir, driver)
        if python_authenticator is not None:
            archive._authenticator = AuthenticatorWorker(out[0], python_authenticator)
            archive._authenticator.start()
        return archive

    def do_work(self) -> int:
        """One duty cycle of every agent (INVOKER threading mode); returns the work count."""
        return check(lib.aa_archive_do_work(self._live_ptr()))

    def mark(self) -> ArchiveMark:
        """The mark file's header and the archive's error log."""
        return read_archive_mark(self.archive_dir)

    def errors(self) -> list[ArchiveErrorRecord]:
        """The distinct errors the archive logged (archive-mark.dat), oldest first."""
        return list(read_archive_mark(self.archive_dir).errors)

    def close(self) -> None:
        worker, self._authenticator = self._authenticator, None
        if worker is not None:
            worker.stop()  # before the archive (and the queue it polls) goes
        with self._lock:
            ptr, self._ptr = self._ptr, None
        if ptr is not None:
            lib.aa_archive_close(ptr)
        if self.driver is not None:
            self.driver.close()

    def __repr__(self) -> str:
        return f"<Archive {self._state()} archive_dir={self.archive_dir!r} aeron_dir={self.aeron_dir!r} id={self.archive_id}>"
