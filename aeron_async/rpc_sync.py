"""The synchronous request/response API: `RpcServer` and `RpcClient`, on the framing and channels of
aeron_async/rpc.py (docs/api.md, "Request/response"), for one thread each: the client has one request
in flight at a time, the server answers in its `poll`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio

from .client import Aeron, Image, Publication, Subscription
from .errors import AeronError, RequestTimeoutError, ServerUnavailableError
from .idle import IdleStrategy
from .rpc import BATCH, DEFAULT_RESPOND_TIMEOUT, _Channels, _remote_error

__all__ = ("RpcClient", "RpcServer")


def _deadline_passed(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


class RpcClient:
    """The synchronous client: `request(data, timeout=...)`, one request at a time (one thread).

    As `AsyncRpcClient`: it connects on the first request, reconnects when the server's image goes
    away and sends a request in flight again (`retry`), drops and counts late answers."""

    def __init__(self, aeron: Aeron, request_channel: str, stream_id: int, *,
                 response_channel: str | None = None, response_stream_id: int | None = None,
                 retry: bool = True, idle: str = "backoff") -> None:
        self.aeron = aeron
        self.channels = _Channels(request_channel, stream_id, response_channel, response_stream_id)
        self.retry = retry
        self.late_replies = 0
        self.connections = 0
        self._idle = IdleStrategy(idle)
        self._next_id = 0
        self._lost = False
        self._subscription: Subscription | None = None
        self._publication: Publication | None = None

    @property
    def is_connected(self) -> bool:
        return self._publication is not None and not self._lost and self._publication.is_connected

    def _on_lost(self, image: Image) -> None:
        self._lost = True

    def _close_links(self) -> None:
        publication, self._publication = self._publication, None
        subscription, self._subscription = self._subscription, None
        if publication is not None:
            publication.close()
        if subscription is not None:
            subscription.close()

    def _connect(self, deadline: float | None, timeout: float | None) -> None:
        self._close_links()
        channels, aeron = self.channels, self.aeron
        self._lost = False
        subscription = aeron.add_subscription(channels.response_channel, channels.response_stream_id,
                                              on_unavailable_image=self._on_lost)
        self._subscription = subscription
        self._publication = aeron.add_exclusive_publication(
            channels.request_publication(subscription.registration_id), channels.stream_id)
        idle = self._idle
        idle.reset()
        while not (self._publication.is_connected and subscription.is_connected):
            if _deadline_passed(deadline):
                raise RequestTimeoutError(
                    f"not connected to a server on {channels} within {timeout} s: no server is running there, "
                    "or it has not answered the connection yet")
            idle.idle(0)
        self.connections += 1

    def wait_connected(self, timeout: float | None = 10.0) -> None:
        if not self.is_connected:
            self._connect(None if timeout is None else time.monotonic() + timeout, timeout)

    def request(self, data: Any, timeout: float | None = 10.0) -> bytes:
        """Send `data` and return the answer, within `timeout` seconds (None: no bound); raises as
        `AsyncRpcClient.request` does."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self._next_id += 1
        correlation_id = self._next_id
        idle = self._idle
        while True:
            if self._publication is None or self._lost:
                self._connect(deadline, timeout)
            publication, subscription = self._publication, self._subscription
            assert publication is not None and subscription is not None
            idle.reset()
            sent = False
            while not self._lost:
                if publication.offer(data, correlation_id) > 0:
                    sent = True
                    break
                # a poll dispatches the image events that tell a lost server; what it takes is late
                self.late_replies += len(subscription.poll_messages(BATCH))
                if _deadline_passed(deadline):
                    raise RequestTimeoutError(
                        f"request {correlation_id} could not be sent within {timeout} s to the server on "
                        f"{self.channels}: back pressure or no server connected")
                idle.idle(0)
            if sent:
                idle.reset()
                while not self._lost:
                    for message in subscription.poll_messages(BATCH):
                        value = message.reserved_value
                        if value == correlation_id:
                            data_out: bytes = message.data
                            return data_out
                        if value == -correlation_id:
                            raise _remote_error(message)
                        self.late_replies += 1
                    if _deadline_passed(deadline):
                        raise RequestTimeoutError(
                            f"no answer to request {correlation_id} within {timeout} s from the server on "
                            f"{self.channels}; it is forgotten (a late answer is dropped)")
                    idle.idle(0)
            # the server went away
            if not self.retry:
                self._close_links()
                raise ServerUnavailableError(
                    f"the server on {self.channels} went away before answering request {correlation_id}; "
                    "it may or may not have run it (retry=True sends it again on the next connection)")

    def close(self) -> None:
        self._close_links()

    def __enter__(self) -> RpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RpcServer:
    """The synchronous server: `poll(handler)` answers the requests that are there with
    `handler(data)` (bytes-like; one that raises answers with the error), `serve(handler, stop)`
    polls until `stop()` is true. Response publications are added without blocking the poll."""

    def __init__(self, aeron: Aeron, request_channel: str, stream_id: int, *,
                 response_channel: str | None = None, response_stream_id: int | None = None,
                 respond_timeout: float = DEFAULT_RESPOND_TIMEOUT, idle: str = "backoff") -> None:
        self.aeron = aeron
        self.channels = _Channels(request_channel, stream_id, response_channel, response_stream_id)
        self.respond_timeout = respond_timeout
        self.requests_received = 0
        self.dropped_responses = 0
        self.errors: list[str] = []
        self._idle = IdleStrategy(idle)
        self._responses: dict[int, Publication] = {}
        self._opening: dict[int, int] = {}   # session id -> registration id of its response publication
        self._subscription: Subscription | None = aeron.add_subscription(
            self.channels.request_channel, stream_id, on_available_image=self._on_image,
            on_unavailable_image=self._on_image_gone)

    @property
    def clients(self) -> int:
        self._settle()
        return len(self._responses)

    def _on_image(self, image: Image) -> None:
        self._opening[image.session_id] = self.aeron.async_add_publication(
            self.channels.response_publication(image.correlation_id), self.channels.response_stream_id, False)

    def _on_image_gone(self, image: Image) -> None:
        self._opening.pop(image.session_id, None)
        publication = self._responses.pop(image.session_id, None)
        if publication is not None:
            publication.close()

    def _settle(self) -> None:
        """Take the response publications the driver has added since."""
        for session_id, registration_id in list(self._opening.items()):
            try:
                publication = self.aeron.poll_add_publication(registration_id)
            except AeronError as exc:
                self.errors.append(f"no response publication for session {session_id}: {exc}")
                del self._opening[session_id]
                continue
            if publication is not None:
                del self._opening[session_id]
                self._responses[session_id] = publication

    def poll(self, handler: Callable[[bytes], Any], max_requests: int = 256) -> int:
        """Answer the requests there (at most `max_requests`); returns how many."""
        subscription = self._subscription
        if subscription is None:
            raise anyio.ClosedResourceError("the request/response server is closed")
        if self._opening:
            self._settle()
        messages = subscription.poll_messages(max_requests)
        for message in messages:
            value = message.reserved_value
            try:
                answer = handler(message.data)
            except Exception as exc:
                answer, value = f"{type(exc).__name__}: {exc}".encode(), -value
            self._send(message.session_id, b"" if answer is None else answer, value)
        self.requests_received += len(messages)
        return len(messages)

    def _send(self, session_id: int, data: Any, value: int) -> None:
        deadline = time.monotonic() + self.respond_timeout
        idle = self._idle
        idle.reset()
        while True:
            publication = self._responses.get(session_id)
            if publication is None:
                if session_id not in self._opening:
                    break
                self._settle()
            elif publication.offer(data, value) > 0:
                return
            if time.monotonic() >= deadline:
                break
            idle.idle(0)
        self.dropped_responses += 1

    def serve(self, handler: Callable[[bytes], Any], stop: Callable[[], bool]) -> None:
        """Poll and answer until `stop()` returns true (checked between polls)."""
        idle = self._idle
        while not stop():
            idle.idle(self.poll(handler))

    def close(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            subscription.close()
        responses, self._responses = self._responses, {}
        for publication in responses.values():
            publication.close()
        self._opening.clear()

    def __enter__(self) -> RpcServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
