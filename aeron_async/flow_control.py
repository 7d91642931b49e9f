"""Flow-control strategies written in Python (docs/api.md, "Flow-control strategies").

A network publication's flow control decides how far its sender may send ahead of its receivers
(the sender limit, `snd-lmt`). Subclass `FlowControlStrategy`, register the class by name with
`aeron_async.strategies.register_flow_control(name, cls)` and choose it with `fc=<name>[,options]`
on a publication channel (or as a driver's default): each publication gets its own instance.

The native sender never calls Python. A proxy strategy (C) copies every event into a wait-free
queue per publication and reads the answers from atomics; one worker thread per driver, in the
process that hosts the driver, drains the queues, calls these methods and publishes what they
return. Meanwhile the sender keeps the last limit the strategy published (a new publication sends
nothing until the strategy's first answer). A strategy that raises is written to the driver's error
log and its publication goes on with the native "min" strategy.

`MinFlowControl` and `TaggedFlowControl` are the reference's min and tagged strategies written this
way (reusable, and examples of the API).
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from ._ffi import ffi, lib
from ._python_classes import load_class, qualified as _qualified
from .errors import ConfigurationError, check

if TYPE_CHECKING:
    from .driver import MediaDriver

__all__ = (
    "FlowControlParams",
    "FlowControlStrategy",
    "MinFlowControl",
    "StatusMessage",
    "TaggedFlowControl",
    "load_factory",
    "register",
    "registered",
)

#: The SM flag a receiver sets when its image is going away (reference 1.6).
END_OF_STREAM_FLAG = 0x40


@attrs.frozen
class FlowControlParams:
    """What one publication's strategy is created with.

    `options` is the text after the name in `fc=<name>,<options>` ("" when none); the reference
    options it was allowed to take are parsed: `group_tag` (from `g:<tag>`, else the driver's
    default, -1), `group_min_size` (from `g:[<tag>]/<n>`, else 0) and `receiver_timeout_ns` (from
    `t:<duration>`, else 5 s)."""

    name: str
    options: str
    registration_id: int
    stream_id: int
    initial_term_id: int
    term_length: int
    group_tag: int
    group_min_size: int
    receiver_timeout_ns: int


class StatusMessage:
    """One status message from a receiver, as the sender got it (reference 1.6)."""

    __slots__ = ("receiver_id", "position", "window", "group_tag", "source_address", "flags")

    def __init__(
        self, receiver_id: int, position: int, window: int, group_tag: int | None, source_address: str, flags: int
    ) -> None:
        #: The receiver's id (random per receive channel endpoint).
        self.receiver_id = receiver_id
        #: The consumption position: the slowest subscriber of the receiver's image.
        self.position = position
        #: How many bytes beyond `position` the receiver accepts.
        self.window = window
        #: The receiver's group tag (`gtag=`), None when its SM carries none.
        self.group_tag = group_tag
        #: "ip:port" ("[ip6]:port") the SM came from.
        self.source_address = source_address
        #: The SM's flags (0x40: end of stream, the receiver is going away).
        self.flags = flags

    @property
    def is_end_of_stream(self) -> bool:
        return bool(self.flags & END_OF_STREAM_FLAG)

    def __repr__(self) -> str:
        return (
            f"StatusMessage(receiver_id={self.receiver_id}, position={self.position}, window={self.window}, "
            f"group_tag={self.group_tag}, source_address={self.source_address!r}, flags={self.flags:#x})"
        )


class FlowControlStrategy:
    """Base of flow-control strategies written in Python; one instance per publication.

    Every method runs on the driver's flow-control worker thread, never on the sender, one call at a
    time per driver. `sender_limit` is the limit the sender uses: this strategy's last answer, or
    before its first one the publication's current limit. Methods that return a limit return the new
    sender limit (an int; the sender sends up to it and no further; it may be lower than before).
    Anything a method raises (including a non-int limit) replaces the strategy with the native min
    for that publication and is written to the driver's error log.

    Class attributes, read when the class is registered:

    - `retransmit_multiple`: one retransmission resends at most this many receiver windows (16 as
      the reference's min and tagged, 4 as max);
    - `accepted_options`: which reference options `fc=<name>,...` may give: "g" (`g:<tag>[/<n>]`),
      "t" (`t:<duration>`); any other option is refused when the publication is created;
    - `requires_group_tag`: whether `g:<tag>` must be given.
    """

    retransmit_multiple: ClassVar[int] = 16
    accepted_options: ClassVar[frozenset[str]] = frozenset()
    requires_group_tag: ClassVar[bool] = False

    def __init__(self, params: FlowControlParams) -> None:
        self.params = params

    def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
        """A status message (not a SETUP request) arrived; return the new sender limit."""
        raise NotImplementedError(f"{type(self).__name__} must implement on_status_message")

    def on_idle(self, now_ns: int, sender_limit: int, sender_position: int, is_end_of_stream: bool) -> int:
        """A periodic tick (every 10 ms while the publication exists); return the new sender limit."""
        return sender_limit

    def on_setup(self, now_ns: int, sender_limit: int, sender_position: int) -> int:
        """The sender sent a SETUP; return the new sender limit."""
        return sender_limit

    def on_error(self, receiver_id: int, group_tag: int | None, error_code: int, now_ns: int) -> None:
        """A receiver sent an ERR frame (it rejected the image): it is going away."""

    def on_trigger_send_setup(self, receiver_id: int, group_tag: int | None, source_address: str, now_ns: int) -> None:
        """A receiver asked for a SETUP (an SM with the SEND_SETUP flag): it is about to join."""

    def has_required_receivers(self) -> bool:
        """Whether the receivers the strategy needs are present; the publication is connected only
        while this holds (asked after every batch of events)."""
        return True

    def receiver_count(self) -> int | None:
        """How many receivers the strategy tracks, for the publication's fc-receivers counter (asked
        after every batch of events). A class that overrides this gets the counter (and so does the
        native min that replaces it if it fails); the base returns None: no counter."""
        return None

    def close(self) -> None:
        """The publication is gone."""


# ---- the reference's min and tagged strategies, in Python ----


@attrs.define(slots=True)
class _Receiver:
    position: int
    limit: int
    time_of_last_sm_ns: int
    eos: bool = False


class MinFlowControl(FlowControlStrategy):
    """The reference's min strategy (`fc=<name>[,g:/<n>][,t:<timeout>]`): the slowest receiver paces
    the sender.

    Receivers are tracked by receiver id: a newcomer is admitted unless its SM carries EOS or it is
    more than a window behind the current minimum; one is dropped on idle after `t:` (5 s) without
    an SM, or after an SM with EOS or an ERR. An SM never lowers the limit: it is
    `max(sender_limit, min(position + window))` over the tracked receivers (with no receivers, the
    SM's own `position + window`); an idle tick sets it to that minimum. With fewer than `g:/<n>`
    receivers the limit stays where it is and the publication is not connected. After a receiver
    asked for a SETUP while others are tracked, the limit is capped where it was for one timeout or
    until a receiver is admitted, so the newcomer is not overrun."""

    accepted_options: ClassVar[frozenset[str]] = frozenset({"g", "t"})

    def __init__(self, params: FlowControlParams) -> None:
        super().__init__(params)
        self.receivers: dict[int, _Receiver] = {}
        self._cap: int | None = None
        self._cap_until_ns = 0
        self._last_limit: int | None = None

    def matches(self, group_tag: int | None) -> bool:
        """Whether a receiver with this tag is tracked (min: every one)."""
        return True

    def _minimum(self) -> int | None:
        live = [r.limit for r in self.receivers.values()]
        return min(live) if live else None

    def _capped(self, limit: int, now_ns: int) -> int:
        if self._cap is not None:
            if now_ns >= self._cap_until_ns:
                self._cap = None
            else:
                limit = min(limit, self._cap)
        self._last_limit = limit
        return limit

    def on_status_message(self, sm: StatusMessage, sender_limit: int, now_ns: int) -> int:
        limit = sm.position + sm.window
        receiver = self.receivers.get(sm.receiver_id)
        if receiver is not None:
            receiver.position = sm.position
            receiver.limit = limit
            receiver.time_of_last_sm_ns = now_ns
            receiver.eos = receiver.eos or sm.is_end_of_stream
        elif not sm.is_end_of_stream and self.matches(sm.group_tag):
            current = self._minimum()
            if current is None or limit >= current - sm.window:
                self.receivers[sm.receiver_id] = _Receiver(sm.position, limit, now_ns)
                self._cap = None
        if len(self.receivers) < self.params.group_min_size:
            return self._capped(sender_limit, now_ns)
        current = self._minimum()
        if current is None:
            return self._capped(max(sender_limit, limit), now_ns)
        return self._capped(max(sender_limit, current), now_ns)

    def on_idle(self, now_ns: int, sender_limit: int, sender_position: int, is_end_of_stream: bool) -> int:
        timeout = self.params.receiver_timeout_ns
        for receiver_id in [
            rid for rid, r in self.receivers.items() if r.eos or now_ns - r.time_of_last_sm_ns > timeout
        ]:
            del self.receivers[receiver_id]
        current = self._minimum()
        if current is None or len(self.receivers) < self.params.group_min_size:
            return self._capped(sender_limit, now_ns)
        return self._capped(current, now_ns)

    def on_error(self, receiver_id: int, group_tag: int | None, error_code: int, now_ns: int) -> None:
        receiver = self.receivers.get(receiver_id)
        if receiver is not None:
            receiver.eos = True

    def on_trigger_send_setup(self, receiver_id: int, group_tag: int | None, source_address: str, now_ns: int) -> None:
        if self.receivers and self.matches(group_tag) and self._last_limit is not None:
            self._cap = self._last_limit
            self._cap_until_ns = now_ns + self.params.receiver_timeout_ns

    def has_required_receivers(self) -> bool:
        return len(self.receivers) >= self.params.group_min_size

    def receiver_count(self) -> int | None:
        return len(self.receivers)


class TaggedFlowControl(MinFlowControl):
    """The reference's tagged strategy (`fc=<name>,g:<tag>[/<n>][,t:<timeout>]`): as min, but only
    receivers whose SMs carry the group tag `g:<tag>` (a subscription's `gtag=`) are tracked, so only
    they hold the sender back, and the publication is connected once `<n>` of them are present."""

    requires_group_tag: ClassVar[bool] = True

    def matches(self, group_tag: int | None) -> bool:
        return group_tag is not None and group_tag == self.params.group_tag


# ---- registration ----


Factory = Callable[[FlowControlParams], FlowControlStrategy]

_OPTION_FLAGS = {"g": lib.AA_FLOW_CONTROL_PROXY_OPTION_GROUP, "t": lib.AA_FLOW_CONTROL_PROXY_OPTION_TIMEOUT}
_registered: dict[str, Any] = {}
_registered_lock = threading.Lock()


def registered() -> dict[str, Any]:
    """The strategies written in Python registered in this process: name -> class (or factory)."""
    with _registered_lock:
        return dict(_registered)


def load_factory(spec: str) -> Any:
    """The class named by "module:Class" (or "module.Class"), for `--flow-control NAME=module:Class`."""
    return load_class(spec, "flow control", "mypkg.fc:Slowest")


def register(name: str, factory: Factory, *, description: str = "") -> None:
    """Registers a strategy written in Python as `name` (see `strategies.register_flow_control`)."""
    if not callable(factory):
        raise ConfigurationError(f"flow control {name!r}: {factory!r} is not a class or factory (params -> strategy)")
    options = frozenset(getattr(factory, "accepted_options", frozenset()))
    unknown = options - set(_OPTION_FLAGS)
    if unknown:
        raise ConfigurationError(
            f"flow control {name!r}: accepted_options may hold 'g' and 't' only, got {sorted(unknown)}"
        )
    flags = 0
    for option in options:
        flags |= _OPTION_FLAGS[option]
    if getattr(factory, "requires_group_tag", False):
        if "g" not in options:
            raise ConfigurationError(f"flow control {name!r}: requires_group_tag needs 'g' in accepted_options")
        flags |= lib.AA_FLOW_CONTROL_PROXY_OPTION_GROUP_TAG_REQUIRED
    counts = getattr(factory, "receiver_count", FlowControlStrategy.receiver_count)
    if counts is not FlowControlStrategy.receiver_count:
        flags |= lib.AA_FLOW_CONTROL_PROXY_OPTION_TRACKS_RECEIVERS
    multiple = getattr(factory, "retransmit_multiple", 16)
    if isinstance(multiple, bool) or not isinstance(multiple, int):
        raise ConfigurationError(f"flow control {name!r}: retransmit_multiple must be an int, got {multiple!r}")
    if not description:
        description = f"written in Python: {getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', factory)!s}"
    with _registered_lock:
        if _registered.get(name) is factory:
            return  # the same class again: nothing to do
        check(lib.aa_flow_control_proxy_register(name.encode(), multiple, flags, description.encode()), ConfigurationError)
        _registered[name] = factory
    from .driver import _live_drivers

    for driver in list(_live_drivers):
        driver._start_flow_control_worker()


# ---- the worker: one thread per driver ----


class _Instance:
    __slots__ = ("strategy", "limit", "where", "what")

    def __init__(self, strategy: FlowControlStrategy) -> None:
        self.strategy = strategy
        self.limit: int = lib.AA_FLOW_CONTROL_PROXY_NO_ANSWER
        self.where = ""  # the method being called, for the error log
        self.what = ""  # the class, when not the strategy's (a factory that failed)


_BATCH = 256
_IDLE_WAIT_NS = 100_000_000  # bounded sleep: the doorbell wakes the worker at once when events come


class FlowControlWorker:
    """Drains one driver's flow-control host on a thread of its own (daemon; stopped before the
    driver closes)."""

    def __init__(self, driver: MediaDriver, host: Any) -> None:
        self._host = host
        self._stopping = False
        self._instances: dict[int, _Instance] = {}
        self._thread = threading.Thread(
            target=self._run, name=f"aeron-async-flow-control {driver.aeron_dir}", daemon=True
        )
        lib.aa_flow_control_proxy_host_attach(host, True)
        self._thread.start()

    def stop(self) -> None:
        lib.aa_flow_control_proxy_host_attach(self._host, False)
        self._stopping = True
        lib.aa_flow_control_proxy_host_wake(self._host)
        if threading.current_thread() is not self._thread:
            self._thread.join()
        for instance in self._instances.values():
            try:
                instance.strategy.close()
            except Exception:
                pass
        self._instances.clear()

    def _run(self) -> None:
        host = self._host
        events = ffi.new("aa_flow_control_proxy_event_t[]", _BATCH)
        while not self._stopping:
            count = lib.aa_flow_control_proxy_host_poll(host, events, _BATCH)
            if count == 0:
                lib.aa_flow_control_proxy_host_wait(host, _IDLE_WAIT_NS)
                continue
            touched: dict[int, _Instance] = {}
            for index in range(count):
                self._dispatch(events[index], touched)
            for instance_id, instance in touched.items():
                self._answer(instance_id, instance)

    def _answer(self, instance_id: int, instance: _Instance) -> None:
        instance.where = "has_required_receivers"
        try:
            required = instance.strategy.has_required_receivers()
            if not isinstance(required, bool):
                raise TypeError(f"has_required_receivers returned {required!r}, not a bool")
            instance.where = "receiver_count"
            count = instance.strategy.receiver_count()
            if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
                raise TypeError(f"receiver_count returned {count!r}, not a count (int >= 0) or None")
        except BaseException as exc:
            self._fail(instance_id, instance, exc)
            return
        lib.aa_flow_control_proxy_host_answer(
            self._host, instance_id, instance.limit, required, -1 if count is None else count)

    def _limit(self, instance: _Instance, value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{instance.where} returned {value!r}, not a sender limit (int)")
        instance.limit = value

    def _dispatch(self, event: Any, touched: dict[int, _Instance]) -> None:
        kind = event.type
        instance_id = event.instance_id
        if kind == lib.AA_FLOW_CONTROL_PROXY_EVENT_CREATE:
            self._create(instance_id, touched)
            return
        instance = self._instances.get(instance_id)
        if instance is None:
            return  # failed already (its events are dropped) or never created
        if kind == lib.AA_FLOW_CONTROL_PROXY_EVENT_CLOSE:
            del self._instances[instance_id]
            touched.pop(instance_id, None)
            instance.where = "close"
            try:
                instance.strategy.close()
            except BaseException as exc:
                self._report(instance_id, instance, exc)
            return
        strategy = instance.strategy
        sender_limit = event.sender_limit if instance.limit == lib.AA_FLOW_CONTROL_PROXY_NO_ANSWER else instance.limit
        try:
            if kind == lib.AA_FLOW_CONTROL_PROXY_EVENT_STATUS_MESSAGE:
                instance.where = "on_status_message"
                sm = StatusMessage(
                    event.receiver_id,
                    event.position,
                    event.window,
                    event.group_tag if event.has_group_tag else None,
                    ffi.string(event.source).decode(),
                    event.flags,
                )
                self._limit(instance, strategy.on_status_message(sm, sender_limit, event.now_ns))
            elif kind == lib.AA_FLOW_CONTROL_PROXY_EVENT_IDLE:
                instance.where = "on_idle"
                self._limit(
                    instance, strategy.on_idle(event.now_ns, sender_limit, event.position, bool(event.flags & 1))
                )
            elif kind == lib.AA_FLOW_CONTROL_PROXY_EVENT_SETUP:
                instance.where = "on_setup"
                self._limit(instance, strategy.on_setup(event.now_ns, sender_limit, event.position))
            elif kind == lib.AA_FLOW_CONTROL_PROXY_EVENT_ERROR:
                instance.where = "on_error"
                strategy.on_error(
                    event.receiver_id, event.group_tag if event.has_group_tag else None, event.window, event.now_ns
                )
            elif kind == lib.AA_FLOW_CONTROL_PROXY_EVENT_TRIGGER_SEND_SETUP:
                instance.where = "on_trigger_send_setup"
                strategy.on_trigger_send_setup(
                    event.receiver_id,
                    event.group_tag if event.has_group_tag else None,
                    ffi.string(event.source).decode(),
                    event.now_ns,
                )
            else:
                return
        except BaseException as exc:
            touched.pop(instance_id, None)
            self._fail(instance_id, instance, exc)
            return
        touched[instance_id] = instance

    def _create(self, instance_id: int, touched: dict[int, _Instance]) -> None:
        info = ffi.new("aa_flow_control_proxy_info_t *")
        if lib.aa_flow_control_proxy_host_describe(self._host, instance_id, info) < 0:
            return  # closed before the worker saw it
        name = ffi.string(info.name).decode()
        params = FlowControlParams(
            name=name,
            options=ffi.string(info.options).decode(),
            registration_id=info.registration_id,
            stream_id=info.stream_id,
            initial_term_id=info.initial_term_id,
            term_length=info.term_length,
            group_tag=info.group_tag,
            group_min_size=info.group_min_size,
            receiver_timeout_ns=info.receiver_timeout_ns,
        )
        factory = registered().get(name)
        placeholder = _Instance(FlowControlStrategy(params))
        placeholder.where = "creating it"
        placeholder.what = _qualified(factory) if factory is not None else name
        try:
            if factory is None:
                raise ConfigurationError(f"no Python class is registered as {name!r} in this process")
            strategy = factory(params)
            if not isinstance(strategy, FlowControlStrategy):
                raise TypeError(f"{factory!r} made {strategy!r}, which is not a FlowControlStrategy")
        except BaseException as exc:
            self._fail(instance_id, placeholder, exc)
            return
        instance = _Instance(strategy)
        self._instances[instance_id] = instance
        touched[instance_id] = instance

    @staticmethod
    def _describe(instance: _Instance, exc: BaseException) -> str:
        frames = traceback.extract_tb(exc.__traceback__)
        at = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        what = instance.what or _qualified(type(instance.strategy))
        return f"{what} raised {type(exc).__name__}: {exc} in {instance.where}{at}"

    def _report(self, instance_id: int, instance: _Instance, exc: BaseException) -> None:
        lib.aa_flow_control_proxy_host_log_error(self._host, self._describe(instance, exc).encode())

    def _fail(self, instance_id: int, instance: _Instance, exc: BaseException) -> None:
        self._instances.pop(instance_id, None)
        lib.aa_flow_control_proxy_host_fail(self._host, instance_id, self._describe(instance, exc).encode())
        try:
            instance.strategy.close()
        except Exception:
            pass
