"""The media driver: embedded in this process (`MediaDriver.launch`) or standalone (`aeron-async driver`)."""

from __future__ import annotations

import os
import threading
import time
import weakref
from typing import Any, ClassVar

from ._closing import ClosedOnExit
from ._ffi import ffi, lib
from . import _options, flow_control
from .context import DriverContext
from .flow_control import FlowControlWorker
from .errors import ClosedError, ConfigurationError, check, used_after_fork_error

# Embedded drivers alive in this process: a child made by fork() detaches its copies (their agent
# threads exist only in the parent), so that using one there raises UsedAfterForkError.
_live_drivers: weakref.WeakSet[MediaDriver] = weakref.WeakSet()


def _detach_drivers_after_fork() -> None:
    for driver in list(_live_drivers):
        driver._forked_from = os.getppid()
        driver._lock = threading.Lock()
        driver._ptr = None
        driver._fc_worker = None  # its thread exists only in the parent
    _live_drivers.clear()


os.register_at_fork(after_in_child=_detach_drivers_after_fork)


class _NativeService(ClosedOnExit):
    """What the media driver and the archive share: a native handle (`_ptr`, None once closed) and
    the context-manager protocol (leaving the block closes it)."""

    __slots__ = ()
    _ptr: Any
    _NAME: ClassVar[str]  # in errors: "the <name> is closed"

    @property
    def is_closed(self) -> bool:
        return self._ptr is None

    def _closed_error(self) -> Exception:
        return ClosedError(f"the {self._NAME} is closed")

    def _live_ptr(self) -> Any:
        """The native handle; raises `_closed_error()` once closed."""
        ptr = self._ptr
        if ptr is None:
            raise self._closed_error()
        return ptr

    def _state(self) -> str:
        return "closed" if self._ptr is None else "running"


def _default_aeron_dir() -> str:
    """The default driver directory (AERON_DIR, else Aeron's default for this user)."""
    buf = ffi.new("char[]", 4096)
    lib.aa_default_aeron_dir(buf, 4096)
    return ffi.string(buf).decode()


class MediaDriver(_NativeService):
    """A running media driver whose agents are native threads (or, in INVOKER mode, `do_work` calls).

    Use as a context manager::

        with aeron_async.MediaDriver.launch(threading_mode="SHARED") as driver:
            with aeron_async.Aeron.connect(driver.aeron_dir) as client:
                ...

    A driver runs in the process that launched it: in a child made by fork() its agents do not
    exist, so using it there raises UsedAfterForkError (`close` only forgets it); the child
    connects a new client to the parent's driver through `aeron_dir`.
    """

    __slots__ = ("_ptr", "_lock", "aeron_dir", "context", "_forked_from", "_fc_worker", "__weakref__")
    _NAME = "media driver"

    def __init__(self, ptr: Any, aeron_dir: str, context: DriverContext) -> None:
        self._ptr = ptr
        self._lock = threading.Lock()
        self.aeron_dir = aeron_dir
        self.context = context
        self._forked_from = 0
        self._fc_worker: FlowControlWorker | None = None
        _live_drivers.add(self)
        if flow_control.registered():
            self._start_flow_control_worker()

    def _start_flow_control_worker(self) -> None:
        """Starts the thread that runs this driver's flow-control strategies written in Python
        (aeron_async.flow_control), once a strategy is registered in the process."""
        with self._lock:
            if self._ptr is not None and self._fc_worker is None:
                self._fc_worker = FlowControlWorker(self, lib.aa_driver_flow_control_proxy_host(self._ptr))

    @classmethod
    def launch(cls, context: DriverContext | None = None, **overrides: Any) -> MediaDriver:
        """Start a driver. Keyword arguments override fields of `context` (see DriverContext).

        Refuses (ConfigurationError) when a live driver owns the directory; a driver that has
        closed, or whose process is gone, is no obstacle."""
        driver = cls._launch(context, overrides, join=False)
        assert driver is not None
        return driver

    @classmethod
    def launch_unless_running(cls, context: DriverContext | None = None, **overrides: Any) -> MediaDriver | None:
        """Start a driver unless a live one owns the directory: then return None (connect to that
        one). Launchers racing on one directory, in threads or processes, end with exactly one
        driver: the check and the start are one step under a lock on the directory."""
        return cls._launch(context, overrides, join=True)

    @classmethod
    def _launch(cls, context: DriverContext | None, overrides: dict[str, Any], join: bool) -> MediaDriver | None:
        context = _options.evolve(DriverContext() if context is None else context, overrides, _options.DRIVER)
        native_ctx = context._to_native()
        try:
            aeron_dir = ffi.string(lib.aa_driver_context_aeron_dir(native_ctx)).decode()
            out = ffi.new("aa_driver_t **")
            launch = lib.aa_driver_launch_or_join if join else lib.aa_driver_launch
            check(launch(out, native_ctx), ConfigurationError)
        finally:
            lib.aa_driver_context_free(native_ctx)
        if out[0] == ffi.NULL:
            return None
        return cls(out[0], aeron_dir, context)

    def _closed_error(self) -> Exception:
        if self._forked_from:
            return used_after_fork_error(f"the embedded media driver of {self.aeron_dir}", self._forked_from)
        return super()._closed_error()

    def do_work(self) -> int:
        """One duty cycle of every agent (INVOKER threading mode); returns the work count."""
        return lib.aa_driver_do_work(self._live_ptr())

    @property
    def termination_requested(self) -> bool:
        """Whether the driver accepted a TERMINATE_DRIVER request (`aeron-async driver --terminate`,
        allowed by `driver_termination_validator`): its owner should then close it, as the standalone
        `aeron-async driver` does (see `wait_for_termination`). False once closed."""
        ptr = self._ptr
        return ptr is not None and bool(lib.aa_driver_termination_requested(ptr))

    def wait_for_termination(self, timeout: float | None = None, poll_interval: float = 0.05) -> bool:
        """Wait until the driver accepts a TERMINATE_DRIVER request (True) or `timeout` seconds pass
        (False); polls the flag every `poll_interval` seconds. The caller then closes the driver."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.termination_requested:
            if self._ptr is None:
                return False
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(poll_interval if deadline is None else max(0.0, min(poll_interval, deadline - time.monotonic())))
        return True

    @property
    def is_closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        with self._lock:
            ptr, self._ptr = self._ptr, None
            worker, self._fc_worker = self._fc_worker, None
        if worker is not None:
            worker.stop()  # before the driver frees what the worker reads
        if ptr is not None:
            lib.aa_driver_close(ptr)

    def __repr__(self) -> str:
        return f"<MediaDriver {self._state()} aeron_dir={self.aeron_dir!r}>"


def is_driver_active(aeron_dir: str | None = None, driver_timeout: float = 10.0) -> bool:
    """Whether a live driver owns `aeron_dir`: not when it has closed or its process is gone (in
    this pid namespace), else when its heartbeat is at most `driver_timeout` seconds old."""
    if aeron_dir is None:
        aeron_dir = _default_aeron_dir()
    rc = lib.aa_driver_is_active(aeron_dir.encode(), int(driver_timeout * 1000), ffi.NULL, ffi.NULL)
    return rc == 1
