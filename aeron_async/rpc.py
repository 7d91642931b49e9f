"""Request/response on Aeron's response channels: one server, many clients, correlated answers.

    async with aeron_async.connect() as aeron:
        async with aeron_async.AsyncRpcServer(aeron, "aeron:ipc", 10) as server:
            async for request in server:
                await request.respond(request.data.upper())

    async with aeron_async.connect() as aeron:
        async with aeron_async.AsyncRpcClient(aeron, "aeron:ipc", 10) as client:
            answer = await client.request(b"hello", timeout=5.0)

The server subscribes to the request channel; each client's request publication names the client's
own response subscription (`response-correlation-id=`), and the server answers each client (each
request image) on a response publication of its own (docs/api.md, "Response channels").
The synchronous API (`RpcServer`, `RpcClient`) is aeron_async/rpc_sync.py.

Framing (docs/api.md, "Request/response"): a request is one Aeron message whose payload is the
request's bytes and whose DATA frame header's reserved value (the 8 bytes at offset 24, little
endian, Aeron's `reservedValueSupplier`) is the request's correlation id, a positive 64-bit integer
unique per client; the answer is one message on the client's response channel with the same reserved
value, or with its negation when the server could not answer (its payload is then the UTF-8 text of
the reason). Nothing is copied in front of the payload, so a message is sent and received as is.

Speed: a client's answers are read a batch per wake-up, woken through the subscription's eventfd
(the one aeron_async/aio.py parks on): on asyncio and uvloop in the loop's callback for that fd, so no
task runs between the wake-up and the waiting request; on trio by a task of the client. On asyncio
and uvloop each request waits on a plain future of the loop; the timeouts of a client's requests
share one timer of the loop armed for the earliest deadline (on trio a task of the client sleeps
until it), so a request costs one future (on trio one Event), one dict entry and one `Message`, and
no cancel scope.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from .aio import AsyncAeron, AsyncPublication, AsyncSubscription, _translate
from .client import Image, Message
from .errors import (
    AeronError,
    InvalidArgumentError,
    InvalidStateError,
    RemoteError,
    RequestTimeoutError,
    ServerUnavailableError,
)

__all__ = ("AsyncRpcClient", "AsyncRpcServer", "RpcRequest", "response_channel_for")

# how long a server keeps trying to deliver one answer (back pressure, a response publication not yet
# connected) before it drops it and counts it in `dropped_responses`
DEFAULT_RESPOND_TIMEOUT = 10.0
# the batch a client's reader or a server takes per poll
BATCH = 4096


def response_channel_for(request_channel: str) -> str:
    """The response channel of a request channel: `aeron:ipc?control-mode=response` for IPC; a UDP
    request channel needs its response channel given (`aeron:udp?control-mode=response|control=HOST:PORT`,
    the server's address that clients subscribe to and the server answers from)."""
    if request_channel.startswith("aeron:ipc"):
        return "aeron:ipc?control-mode=response"
    raise InvalidArgumentError(
        f"no response channel for {request_channel!r}: give response_channel="
        "'aeron:udp?control-mode=response|control=SERVER_HOST:PORT' (the server's address for its answers)")


def _with_param(channel: str, param: str) -> str:
    return f"{channel}{'|' if '?' in channel else '?'}{param}"


class _Channels:
    """The request and response channels and streams of one client or server."""

    __slots__ = ("request_channel", "stream_id", "response_channel", "response_stream_id")

    def __init__(self, request_channel: str, stream_id: int, response_channel: str | None,
                 response_stream_id: int | None) -> None:
        if "control-mode=response" in request_channel or "response-correlation-id" in request_channel:
            raise InvalidArgumentError(
                f"request channel {request_channel!r} must not name control-mode=response or response-correlation-id: "
                "the request/response API adds them")
        self.request_channel = request_channel
        self.stream_id = stream_id
        self.response_channel = response_channel or response_channel_for(request_channel)
        if "control-mode=response" not in self.response_channel:
            raise InvalidArgumentError(
                f"response channel {self.response_channel!r} needs control-mode=response")
        self.response_stream_id = stream_id + 1 if response_stream_id is None else response_stream_id

    def request_publication(self, response_registration_id: int) -> str:
        return _with_param(self.request_channel, f"response-correlation-id={response_registration_id}")

    def response_publication(self, image_correlation_id: int) -> str:
        return _with_param(self.response_channel, f"response-correlation-id={image_correlation_id}")

    def __str__(self) -> str:
        return f"{self.request_channel} stream {self.stream_id}"


def _remote_error(message: Message) -> RemoteError:
    return RemoteError(f"the server could not answer request {-message.reserved_value}: "
                       f"{message.data.decode('utf-8', 'replace')}")


# ---- async ----


class _Slot:
    """A request's answer on trio: what a future of the loop is on asyncio (`done`, `set_result`).
    Trio's own Event: anyio's asks which library runs the task each time it is made, most of its cost."""

    __slots__ = ("event", "value")

    def __init__(self) -> None:
        import trio   # only ever made on trio, anyio's one other backend

        self.event = trio.Event()
        self.value: Any = None

    def done(self) -> bool:
        return self.event.is_set()

    def set_result(self, value: Any) -> None:
        self.value = value
        self.event.set()


# what a waiting request is handed instead of its answer
_RETRY = object()    # the server went away: send again on the next connection
_TIMEOUT = object()
_CLOSED = object()
_NEVER = float("inf")


class AsyncRpcClient:
    """A client of an `AsyncRpcServer` (or of any server speaking the framing of docs/api.md,
    "Request/response"): `await request(data, timeout=...)` returns the answer's bytes.

    Use it as `async with`: a task of its own connects (a response subscription and a request
    publication naming it), reads every answer and, when the server's image goes away (the server
    stopped or restarted), connects again. Requests wait for a connection within their timeout;
    requests in flight when the server went away are sent again on the next connection (`retry`,
    the default: a request may then run twice on the server), or fail with ServerUnavailableError.
    At most `max_in_flight` requests are in flight; more wait for room. A request that times out
    raises RequestTimeoutError; one that is cancelled or times out is forgotten: its answer, if it
    comes, is dropped and counted in `late_replies`. Requests may come from any number of tasks.
    """

    def __init__(self, aeron: AsyncAeron, request_channel: str, stream_id: int, *,
                 response_channel: str | None = None, response_stream_id: int | None = None,
                 max_in_flight: int = 1024, retry: bool = True) -> None:
        if max_in_flight < 1:
            raise InvalidArgumentError(f"max_in_flight must be at least 1, got {max_in_flight}")
        self.aeron = aeron
        self.channels = _Channels(request_channel, stream_id, response_channel, response_stream_id)
        self.max_in_flight = max_in_flight
        self.retry = retry
        self.late_replies = 0      # answers that came after their request was cancelled or timed out
        self.connections = 0       # connections made (1 + reconnections)
        self._pending: dict[int, Any] = {}   # correlation id -> a future of the loop, or a _Slot
        self._next_id = 0
        self._in_flight = 0
        self._room: anyio.Event | None = None
        self._ready = anyio.Event()
        self._closed = False
        self._lost = False
        self._lost_scope: anyio.CancelScope | None = None
        self._reader_error: AeronError | None = None
        self._reader: tuple[asyncio.AbstractEventLoop, int] | None = None
        self._deadlines: dict[int, float] = {}   # asyncio: correlation id -> deadline in loop.time()
        self._sweep_at = _NEVER
        self._sweep_handle: asyncio.TimerHandle | None = None
        self._sweep_wake: Any = None   # trio: the Event that wakes the sweeping task
        self._publication: AsyncPublication | None = None
        self._subscription: AsyncSubscription | None = None
        self._task_group: anyio.abc.TaskGroup | None = None

    @property
    def is_connected(self) -> bool:
        return self._ready.is_set() and not self._closed

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def __aenter__(self) -> AsyncRpcClient:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._run)
        if asyncio._get_running_loop() is None:
            self._task_group.start_soon(self._sweep_trio)
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        self.close()
        assert self._task_group is not None
        return await self._task_group.__aexit__(*exc)

    def close(self) -> None:
        """Stop: waiting requests raise ClosedResourceError; the publication and subscription close."""
        if self._closed:
            return
        self._closed = True
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()
        if self._sweep_handle is not None:
            self._sweep_handle.cancel()
            self._sweep_handle = None
        self._close_links()
        self._wake_pending(_CLOSED)
        self._ready.set()
        if self._room is not None:
            self._room.set()

    async def wait_connected(self, timeout: float | None = None) -> None:
        """Return once connected to a server (raises RequestTimeoutError after `timeout` seconds)."""
        await self._wait_ready(None if timeout is None else time.monotonic() + timeout, timeout)

    # ---- the connection task ----

    async def _run(self) -> None:
        while not self._closed:
            await self._open()
            self.connections += 1
            self._ready.set()
            with anyio.CancelScope() as scope:
                self._lost_scope = scope
                if self._lost:
                    scope.cancel()
                await self._receive()
            self._lost_scope = None
            if self._closed:
                return
            # the server's image went away: what was in flight is sent again on the next connection
            self._ready = anyio.Event()
            self._close_links()
            self._wake_pending(_RETRY)

    async def _open(self) -> None:
        aeron, channels = self.aeron, self.channels
        pause = 0.0005
        while True:
            try:
                self._lost = False
                subscription = await aeron.add_subscription(
                    channels.response_channel, channels.response_stream_id, on_unavailable_image=self._on_lost,
                    max_batch=BATCH)
                try:
                    publication = await aeron.add_exclusive_publication(
                        channels.request_publication(subscription.registration_id), channels.stream_id)
                except BaseException:
                    subscription.close()
                    raise
                break
            except AeronError:
                # the driver refused for now (a channel being closed): try again, slowly
                await anyio.sleep(pause)
                pause = min(pause * 2, 0.1)
        self._subscription, self._publication = subscription, publication
        pause = 0.0002
        while not (publication.is_connected and subscription.is_connected):
            await anyio.sleep(pause)
            pause = min(pause * 2, 0.01)

    def _on_lost(self, image: Image) -> None:
        """The server's response image went away (its publication closed, or its driver stopped)."""
        self._lost = True
        if self._lost_scope is not None:
            self._lost_scope.cancel()

    async def _receive(self) -> None:
        subscription = self._subscription
        assert subscription is not None
        loop = asyncio._get_running_loop()   # None: trio
        if loop is not None:
            await self._receive_in_callbacks(loop, subscription)
            return
        dispatch = self._dispatch
        next_batch = subscription._next_batch
        batches = 0
        try:
            while True:
                dispatch(await next_batch(BATCH))
                batches += 1
                if not batches & 63:
                    await anyio.lowlevel.checkpoint()
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            if not self._closed:
                self._lost = True

    async def _receive_in_callbacks(self, loop: asyncio.AbstractEventLoop, subscription: AsyncSubscription) -> None:
        """asyncio and uvloop: answers are read in the loop's callback for the subscription's eventfd
        (the fd the async facade parks on), no task between the wake-up and the waiting request."""
        fd = subscription._waker.fd
        native = subscription.subscription
        poll, park, dispatch = native.poll_messages, native._park, self._dispatch
        self._reader_error = None

        def on_readable() -> None:
            try:
                os.eventfd_read(fd)
            except BlockingIOError:
                pass
            try:
                for _ in range(16):
                    messages = poll(BATCH)   # image events first: a lost server cancels the scope
                    if not messages:
                        park()
                        messages = poll(BATCH)   # re-check after arming
                        if not messages:
                            return   # parked: the client conductor writes the fd for the next answer
                    dispatch(messages)
            except AeronError as exc:
                self._reader_error = exc
                if self._lost_scope is not None:
                    self._lost_scope.cancel()
                return
            loop.call_soon(on_readable)   # still busy: the rest on the loop's next turn

        loop.add_reader(fd, on_readable)
        self._reader = (loop, fd)
        try:
            on_readable()
            await anyio.sleep_forever()
        finally:
            self._stop_reader()
            native._unpark()
            error, self._reader_error = self._reader_error, None
            if error is not None and not self._closed:
                raise _translate(error)

    def _stop_reader(self) -> None:
        """Take the answers' callback off the loop (before the subscription, and its fd, close)."""
        reader, self._reader = self._reader, None
        if reader is not None and not reader[0].is_closed():
            reader[0].remove_reader(reader[1])

    def _dispatch(self, messages: list[Message]) -> None:
        pending = self._pending
        for message in messages:
            value = message.reserved_value
            waiter = pending.pop(value if value > 0 else -value, None)
            if waiter is None or waiter.done():
                self.late_replies += 1
            else:
                waiter.set_result(message)

    def _close_links(self) -> None:
        self._stop_reader()
        publication, self._publication = self._publication, None
        subscription, self._subscription = self._subscription, None
        if publication is not None:
            publication.close()
        if subscription is not None:
            subscription.close()

    def _wake_pending(self, value: object) -> None:
        pending, self._pending = self._pending, {}
        for waiter in pending.values():
            if not waiter.done():
                waiter.set_result(value)

    # ---- requests ----

    async def request(self, data: Any, timeout: float | None = 10.0) -> bytes:
        """Send `data` (any bytes-like object) and return the server's answer, waiting at most
        `timeout` seconds (None: no bound) for room among the requests in flight, for a connection,
        through back pressure and for the answer. Raises RequestTimeoutError, RemoteError (the server
        could not answer), ServerUnavailableError (the server went away and `retry` is off) or
        ClosedResourceError (the client closed)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._in_flight >= self.max_in_flight:
            await self._wait_room(deadline, timeout)
        self._in_flight += 1
        try:
            self._next_id += 1
            correlation_id = self._next_id
            while True:
                if not self._ready.is_set():
                    await self._wait_ready(deadline, timeout)
                if self._closed:
                    raise anyio.ClosedResourceError("the request/response client is closed")
                reply = await self._exchange(data, correlation_id, deadline)
                if reply is _RETRY:
                    if self._closed:
                        raise anyio.ClosedResourceError("the request/response client is closed")
                    if not self.retry:
                        raise ServerUnavailableError(
                            f"the server on {self.channels} went away before answering request {correlation_id}; "
                            "it may or may not have run it (retry=True sends it again on the next connection)")
                    continue
                if reply is _TIMEOUT:
                    raise RequestTimeoutError(
                        f"no answer to request {correlation_id} within {timeout} s from the server on {self.channels}; "
                        "it is forgotten (a late answer is dropped): raise the timeout or check the server")
                if reply is _CLOSED:
                    raise anyio.ClosedResourceError("the request/response client is closed")
                if reply.reserved_value < 0:
                    raise _remote_error(reply)
                data_out: bytes = reply.data
                return data_out
        finally:
            self._in_flight -= 1
            room = self._room
            if room is not None:
                self._room = None
                room.set()

    async def _exchange(self, data: Any, correlation_id: int, deadline: float | None) -> Any:
        """Offer the request and wait for its answer: the answer's Message, or _RETRY, _TIMEOUT, _CLOSED."""
        loop = asyncio._get_running_loop()   # None: trio
        waiter: Any = loop.create_future() if loop is not None else _Slot()
        pending = self._pending
        pending[correlation_id] = waiter
        try:
            publication = self._publication
            if publication is None:
                return _RETRY
            try:
                result = publication.offer_nowait(data, correlation_id)
            except anyio.ClosedResourceError:
                return _RETRY
            if result <= 0 and not await self._offer_waiting(publication, data, correlation_id, deadline):
                return _RETRY if not waiter.done() else _result(waiter)
            if waiter.done():
                return _result(waiter)
            if deadline is None:
                if loop is not None:
                    return await waiter
                await waiter.event.wait()
                return waiter.value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return _TIMEOUT
            if loop is not None:
                # no timer per request: one sweep of the client's deadlines, armed for the earliest
                deadlines = self._deadlines
                at = deadlines[correlation_id] = loop.time() + remaining
                if at < self._sweep_at:
                    self._arm_sweep(loop, at)
                try:
                    return await waiter
                finally:
                    del deadlines[correlation_id]
            import trio

            deadlines = self._deadlines
            at = deadlines[correlation_id] = trio.current_time() + remaining
            wake = self._sweep_wake
            if at < self._sweep_at and wake is not None:
                self._sweep_at = at
                wake.set()
            try:
                await waiter.event.wait()
            finally:
                del deadlines[correlation_id]
            return waiter.value
        finally:
            if pending.get(correlation_id) is waiter:
                del pending[correlation_id]

    def _arm_sweep(self, loop: asyncio.AbstractEventLoop, at: float) -> None:
        if self._sweep_handle is not None:
            self._sweep_handle.cancel()
        self._sweep_at = at
        self._sweep_handle = loop.call_at(at, self._sweep, loop)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        """asyncio: time out the requests whose deadline has passed; arm for the earliest of the others."""
        self._sweep_handle = None
        self._sweep_at = _NEVER
        earliest = self._expire(loop.time())
        if earliest < _NEVER:
            self._arm_sweep(loop, earliest)

    async def _sweep_trio(self) -> None:
        """trio: the same, as a task of the client that sleeps until the earliest deadline (a request
        with an earlier one wakes it): no cancel scope per request."""
        import trio

        while True:
            wake = self._sweep_wake = trio.Event()
            with trio.move_on_at(self._sweep_at):
                await wake.wait()
            self._sweep_at = self._expire(trio.current_time())

    def _expire(self, now: float) -> float:
        """Hand _TIMEOUT to every request whose deadline is past `now`; the earliest deadline left."""
        earliest, pending = _NEVER, self._pending
        for correlation_id, at in self._deadlines.items():
            if at <= now:
                waiter = pending.get(correlation_id)
                if waiter is not None and not waiter.done():
                    waiter.set_result(_TIMEOUT)
            elif at < earliest:
                earliest = at
        return earliest

    async def _offer_waiting(self, publication: AsyncPublication, data: Any, correlation_id: int,
                             deadline: float | None) -> bool:
        """Back pressure (or a moment not connected): wait for room within the deadline; False when
        the connection went away meanwhile (or the deadline passed: the caller then finds _TIMEOUT)."""
        try:
            if deadline is None:
                await publication.offer(data, correlation_id)
                return True
            with anyio.move_on_after(deadline - time.monotonic()):
                await publication.offer(data, correlation_id)
                return True
        except anyio.ClosedResourceError:
            return False
        raise RequestTimeoutError(
            f"request {correlation_id} could not be sent within its timeout to the server on {self.channels}: "
            "back pressure (the server is not keeping up) or no server connected")

    async def _wait_ready(self, deadline: float | None, timeout: float | None) -> None:
        if deadline is None:
            await self._ready.wait()
            return
        with anyio.move_on_after(deadline - time.monotonic()):
            await self._ready.wait()
            return
        raise RequestTimeoutError(
            f"not connected to a server on {self.channels} within {timeout} s: no server is running there, "
            "or it has not answered the connection yet (the client keeps trying)")

    async def _wait_room(self, deadline: float | None, timeout: float | None) -> None:
        with anyio.move_on_after(None if deadline is None else deadline - time.monotonic()):
            while self._in_flight >= self.max_in_flight and not self._closed:
                if self._room is None:
                    self._room = anyio.Event()
                await self._room.wait()
            return
        raise RequestTimeoutError(
            f"{self._in_flight} requests were in flight (max_in_flight={self.max_in_flight}) for all of the "
            f"{timeout} s timeout: the server on {self.channels} is not keeping up")

    def __repr__(self) -> str:
        return f"<AsyncRpcClient {self.channels} in_flight={self._in_flight} connected={self.is_connected}>"


def _result(waiter: Any) -> Any:
    return waiter.value if isinstance(waiter, _Slot) else waiter.result()


class RpcRequest:
    """One request a server received: `data`, and `respond(answer)` (or `fail(reason)`) once."""

    __slots__ = ("_server", "message", "answered")

    def __init__(self, server: AsyncRpcServer, message: Message) -> None:
        self._server = server
        self.message = message
        self.answered = False

    @property
    def data(self) -> bytes:
        data: bytes = self.message.data
        return data

    @property
    def correlation_id(self) -> int:
        return self.message.reserved_value

    @property
    def session_id(self) -> int:
        """The client's: the session id of its request publication."""
        return self.message.session_id

    async def respond(self, data: Any) -> None:
        """Answer the request (any bytes-like object). If the client has gone, or does not take the
        answer within the server's `respond_timeout`, the answer is dropped and counted."""
        if self.answered:
            raise InvalidStateError(f"request {self.message.reserved_value} was already answered")
        message, server = self.message, self._server
        publication = server._responses.get(message.session_id)
        if publication is not None:
            # the common case, with no await: one offer into the client's response log
            try:
                sent = publication.publication.offer(data, message.reserved_value) > 0
            except AeronError:
                sent = False   # closed meanwhile, or too long for the log: _send drops or raises
            if sent:
                self.answered = True
                server._release()
                return
        await self._answer(data, message.reserved_value)

    async def fail(self, reason: str) -> None:
        """Answer that the request could not be served: the client's request raises RemoteError."""
        await self._answer(reason.encode(), -self.message.reserved_value)

    async def _answer(self, data: Any, value: int) -> None:
        if self.answered:
            raise InvalidStateError(f"request {self.message.reserved_value} was already answered")
        self.answered = True
        server = self._server
        try:
            await server._send(self.message.session_id, data, value)
        finally:
            server._release()

    def __repr__(self) -> str:
        return f"<RpcRequest {self.correlation_id} from session {self.session_id}, {len(self.data)} bytes>"


class AsyncRpcServer:
    """Serves many clients over one request channel and a response channel per client.

    `async for request in server: await request.respond(answer)` takes requests in order; at most
    `max_concurrent` may be taken and not yet answered (the next waits for an answer), so handlers
    started per request run concurrently within that bound. `await serve(handler)` does that for you.
    Use it as `async with`; leaving it closes the request subscription (ending `async for`) and every
    response publication.
    """

    def __init__(self, aeron: AsyncAeron, request_channel: str, stream_id: int, *,
                 response_channel: str | None = None, response_stream_id: int | None = None,
                 max_concurrent: int = 64, respond_timeout: float = DEFAULT_RESPOND_TIMEOUT) -> None:
        if max_concurrent < 1:
            raise InvalidArgumentError(f"max_concurrent must be at least 1, got {max_concurrent}")
        self.aeron = aeron
        self.channels = _Channels(request_channel, stream_id, response_channel, response_stream_id)
        self.max_concurrent = max_concurrent
        self.respond_timeout = respond_timeout
        self.requests_received = 0
        self.dropped_responses = 0   # answers to clients gone, or not taken within respond_timeout
        self.errors: list[str] = []  # why a client's response publication could not be added
        self._outstanding = 0
        self._room: anyio.Event | None = None
        self._responses: dict[int, AsyncPublication] = {}   # by the client's session id
        self._opening: dict[int, anyio.Event] = {}
        self._subscription: AsyncSubscription | None = None
        self._task_group: anyio.abc.TaskGroup | None = None

    @property
    def clients(self) -> int:
        """Clients connected (request images with a response publication)."""
        return len(self._responses)

    @property
    def outstanding(self) -> int:
        """Requests taken and not yet answered."""
        return self._outstanding

    async def __aenter__(self) -> AsyncRpcServer:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        try:
            self._subscription = await self.aeron.add_subscription(
                self.channels.request_channel, self.channels.stream_id, on_available_image=self._on_image,
                on_unavailable_image=self._on_image_gone, max_batch=BATCH)
        except BaseException as exc:
            self._task_group.cancel_scope.cancel()
            await self._task_group.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        self.close()
        assert self._task_group is not None
        return await self._task_group.__aexit__(*exc)

    def close(self) -> None:
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            subscription.close()
        responses, self._responses = self._responses, {}
        for publication in responses.values():
            publication.close()
        opening, self._opening = self._opening, {}
        for event in opening.values():
            event.set()
        if self._room is not None:
            self._room.set()

    # ---- clients ----

    def _on_image(self, image: Image) -> None:
        """A new client: add its response publication (in a task of the server)."""
        event = anyio.Event()
        self._opening[image.session_id] = event
        assert self._task_group is not None
        self._task_group.start_soon(self._open_response, image.session_id, image.correlation_id, event)

    async def _open_response(self, session_id: int, correlation_id: int, event: anyio.Event) -> None:
        try:
            publication = await self.aeron.add_publication(
                self.channels.response_publication(correlation_id), self.channels.response_stream_id)
        except AeronError as exc:
            self.errors.append(f"no response publication for session {session_id}: {exc}")
            publication = None
        if publication is not None:
            if self._opening.get(session_id) is event:
                self._responses[session_id] = publication
            else:
                publication.close()   # the client went away meanwhile
        if self._opening.get(session_id) is event:
            del self._opening[session_id]
        event.set()

    def _on_image_gone(self, image: Image) -> None:
        session_id = image.session_id
        publication = self._responses.pop(session_id, None)
        if publication is not None:
            publication.close()
        event = self._opening.pop(session_id, None)
        if event is not None:
            event.set()

    async def _send(self, session_id: int, data: Any, value: int) -> None:
        publication = self._responses.get(session_id)
        if publication is None:
            event = self._opening.get(session_id)
            if event is not None:
                await event.wait()
                publication = self._responses.get(session_id)
            if publication is None:
                self.dropped_responses += 1
                return
        try:
            if publication.offer_nowait(data, value) > 0:
                return
            with anyio.move_on_after(self.respond_timeout):
                await publication.offer(data, value)
                return
        except anyio.ClosedResourceError:
            pass
        self.dropped_responses += 1

    def _release(self) -> None:
        self._outstanding -= 1
        room = self._room
        if room is not None:
            self._room = None
            room.set()

    # ---- requests ----

    def __aiter__(self) -> AsyncRpcServer:
        return self

    async def __anext__(self) -> RpcRequest:
        while self._outstanding >= self.max_concurrent:
            if self._subscription is None:
                raise StopAsyncIteration
            if self._room is None:
                self._room = anyio.Event()
            await self._room.wait()
        subscription = self._subscription
        if subscription is None:
            raise StopAsyncIteration
        try:
            message = await subscription.receive()
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            raise StopAsyncIteration from None
        self._outstanding += 1
        self.requests_received += 1
        return RpcRequest(self, message)

    async def serve(self, handler: Callable[[bytes], Awaitable[Any]]) -> None:
        """Answer every request with `await handler(data)` (bytes-like), up to `max_concurrent` handlers
        at once, until the server closes; a handler that raises answers with `fail` (the client's
        request raises RemoteError naming the exception)."""
        async with anyio.create_task_group() as task_group:
            async for request in self:
                task_group.start_soon(self._handle, handler, request)

    async def _handle(self, handler: Callable[[bytes], Awaitable[Any]], request: RpcRequest) -> None:
        try:
            answer = await handler(request.message.data)
        except Exception as exc:
            if not request.answered:
                await request.fail(f"{type(exc).__name__}: {exc}")
            return
        if not request.answered:
            await request.respond(b"" if answer is None else answer)

    def __repr__(self) -> str:
        return f"<AsyncRpcServer {self.channels} clients={self.clients} outstanding={self._outstanding}>"
