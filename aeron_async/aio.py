"""The async facade, on anyio: one API on asyncio, uvloop and trio.

    async with aeron_async.connect(embedded_driver=True) as client:
        async with await client.add_subscription("aeron:ipc", 10) as sub, \\
                await client.add_publication("aeron:ipc", 10) as pub:
            await pub.offer(b"hello")
            async for message in sub:
                ...

Waiting never spins the event loop. A task that must wait (no data, back pressure, not connected)
parks its subscription, image or publication with the native client conductor, re-checks, and
sleeps on an eventfd that the conductor writes once there is something to do. On asyncio (and
uvloop) the fd is registered with the loop once and drained fully on every wake-up; on trio one
waiting task watches it and wakes the others. Under load nothing is signalled: a task finds data
(or room) on its own poll and never parks.

Cancellation: an `offer` cancelled while waiting has published nothing (a message is appended
whole or not at all, and no checkpoint follows a successful append); a `receive` cancelled while
waiting has consumed nothing; a cancelled `async for` leaves the subscription usable.

Errors map onto anyio's exceptions: use after close raises ClosedResourceError, a lost driver (or a
client timed out by it) raises BrokenResourceError, a finished image view raises EndOfStream, and
two tasks receiving from one subscription at once raise BusyResourceError.
"""

from __future__ import annotations

import asyncio
import collections
import os
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel
import anyio.to_thread

from .client import (
    ADMIN_ACTION,
    DEFAULT_WAKE_SPIN,
    MAX_POSITION_EXCEEDED,
    Aeron,
    ExclusivePublication,
    Image,
    Message,
    Publication,
    Subscription,
    check_wake_spin,
)
from .context import DriverContext
from .counters import Counter, CountersReader
from .driver import MediaDriver
from .publication_errors import PublicationErrorFrame
from .errors import (
    AeronError,
    ClientTimeoutError,
    ClosedError,
    DriverNotFoundError,
    DriverTimeoutError,
    InvalidArgumentError,
)

# A task whose operations complete without waiting yields to the loop (and notices cancellation)
# once per this many of them: the await cost is paid per batch, not per message.
CHECKPOINT_INTERVAL = 256
# connect(embedded_driver=True): a driver it finds alive may close before the client connects to
# it; it then launches one, at most this many times in all.
_EMBEDDED_ATTEMPTS = 3

__all__ = (
    "AsyncAeron",
    "AsyncImageView",
    "AsyncPublication",
    "AsyncSubscription",
    "connect",
)


def _translate(exc: AeronError) -> BaseException:
    """Map a native-layer error onto anyio's stream exceptions (others stay AeronErrors)."""
    if isinstance(exc, (DriverTimeoutError, ClientTimeoutError)):
        mapped: BaseException = anyio.BrokenResourceError(str(exc))
    elif isinstance(exc, ClosedError):
        mapped = anyio.ClosedResourceError(str(exc))
    else:
        return exc
    mapped.__cause__ = exc
    return mapped


_T = TypeVar("_T")


async def _await_driver(client: Aeron, start: Callable[[], int], poll: Callable[[int], _T | None]) -> _T:
    """Send a request to the driver and wait for its answer, bounded by the driver timeout."""
    try:
        registration_id = start()
        with anyio.fail_after(client.driver_timeout + 1.0):
            pause = 0.0002
            while True:
                result = poll(registration_id)
                if result is not None:
                    return result
                await anyio.sleep(pause)
                pause = min(pause * 2, 0.016)
    except AeronError as exc:
        raise _translate(exc) from None
    except TimeoutError:
        raise anyio.BrokenResourceError(
            f"no answer from the media driver at {client.aeron_dir} within {client.driver_timeout} s"
        ) from None


class _Waker:
    """An eventfd the native client conductor writes to when a parked waiter has something to do.

    Any number of tasks may wait; each wake-up ends the current round for all of them (they
    re-check their own condition). On asyncio the fd is registered with the loop once; on trio
    the first waiting task watches the fd and the others wait on the round's event.
    """

    __slots__ = ("fd", "_loop", "_event", "_futures", "_watching", "_closing")

    def __init__(self) -> None:
        self.fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: anyio.Event | None = None
        self._futures: list[asyncio.Future[None]] = []  # the round's waiting tasks', on asyncio
        self._watching = False
        self._closing = False

    def _drain(self) -> None:
        try:
            os.eventfd_read(self.fd)  # not a semaphore eventfd: one read empties it
        except BlockingIOError:
            pass

    def fire(self) -> None:
        """End the current round: every waiting task returns from `wait`."""
        event, self._event = self._event, None
        if event is not None:
            event.set()
        if self._futures:
            futures, self._futures = self._futures, []
            for future in futures:
                if not future.done():
                    future.set_result(None)

    def _on_readable(self) -> None:
        self._drain()
        self.fire()

    async def wait(self) -> None:
        if self._closing:
            raise anyio.ClosedResourceError("closed while waiting")
        loop = asyncio._get_running_loop()  # None: trio (anyio's only other backend)
        if loop is not None and loop is not self._loop:
            # ask anyio which library runs this task (an asyncio loop may host trio as a guest);
            # once a loop is ours, the cheap check above is enough
            token = anyio.lowlevel.current_token().native_token  # asyncio's token is its running loop
            loop = token if isinstance(token, asyncio.AbstractEventLoop) else None
            if loop is not None:
                self._unregister()
                loop.add_reader(self.fd, self._on_readable)
                self._loop = loop
        if loop is not None:
            # a future of the loop's own per waiting task: the wake-up resumes the task directly
            # (cancelling one task cancels its own future only)
            future = loop.create_future()
            self._futures.append(future)
            try:
                await future
            finally:
                if not future.done() or future.cancelled():
                    try:
                        self._futures.remove(future)
                    except ValueError:
                        pass
            return
        event = self._event
        if event is None:
            event = self._event = anyio.Event()
        if self._watching:
            await event.wait()
        else:
            self._watching = True
            try:
                await anyio.wait_readable(self.fd)
                self._drain()
            finally:
                self._watching = False
                if self._closing:
                    self._close_fd()
                self.fire()

    def _unregister(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            try:
                loop.remove_reader(self.fd)
            except (RuntimeError, ValueError):
                pass

    def _close_fd(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def close(self) -> None:
        """Wake every waiter and close the fd (the native side must no longer hold it). A trio task
        watching the fd is woken through it and closes it on its way out."""
        if self._closing:
            return
        self._closing = True
        self._unregister()
        if self._watching:
            os.eventfd_write(self.fd, 1)
        else:
            self._close_fd()
        self.fire()


class AsyncPublication(anyio.abc.ObjectSendStream[bytes]):
    """A publication for async code: `await offer(data)` waits (without spinning) through back
    pressure and not-connected; `offer_nowait` never waits. Use `aeron_async.connect` to get one."""

    def __init__(self, publication: Publication) -> None:
        self.publication = publication
        self._waker = _Waker()
        publication._notify(self._waker.fd)
        self._waiters = 0
        self._count = 0
        self._offer = publication.offer  # the native offer, bound once

    # ---- properties of the underlying publication ----

    @property
    def registration_id(self) -> int:
        return self.publication.registration_id

    @property
    def session_id(self) -> int:
        return self.publication.session_id

    @property
    def stream_id(self) -> int:
        return self.publication.stream_id

    @property
    def max_message_length(self) -> int:
        return self.publication.max_message_length

    @property
    def is_connected(self) -> bool:
        return self.publication.is_connected

    @property
    def is_closed(self) -> bool:
        return self.publication.is_closed

    @property
    def position(self) -> int:
        try:
            return self.publication.position
        except AeronError as exc:
            raise _translate(exc) from None

    # ---- multi-destination-cast ----

    async def add_destination(self, destination: str) -> None:
        """Send this manual multi-destination-cast publication to `destination` too (see
        `Publication.add_destination`); returns once the driver applied it."""
        publication = self.publication
        await _await_driver(publication._client, lambda: publication.async_add_destination(destination),
                            publication._client.poll_destination)

    async def remove_destination(self, destination: str) -> None:
        """Stop sending to a destination `add_destination` added (see `Publication.remove_destination`)."""
        publication = self.publication
        await _await_driver(publication._client, lambda: publication.async_remove_destination(destination),
                            publication._client.poll_destination)

    # ---- offering ----

    def offer_nowait(self, data: Any, reserved_value: int = 0) -> int:
        """One attempt: the new stream position, or a negative OfferResult (NOT_CONNECTED,
        BACK_PRESSURED, ADMIN_ACTION, MAX_POSITION_EXCEEDED). Never waits."""
        try:
            return self.publication.offer(data, reserved_value)
        except AeronError as exc:
            raise _translate(exc) from None

    async def offer(self, data: Any, reserved_value: int = 0) -> int:
        """Append one message (any bytes-like object), waiting while back-pressured, not connected
        or during admin actions; returns its stream position.

        Bound the wait with anyio.fail_after / move_on_after: if cancelled, nothing was published.
        Raises ClosedResourceError once closed, BrokenResourceError if the driver is lost, and
        MessageTooLongError for a message over `max_message_length`.
        """
        self._count += 1
        if self._count < CHECKPOINT_INTERVAL:
            try:
                result = self._offer(data, reserved_value)
            except AeronError as exc:
                raise _translate(exc) from None
            if result > 0:
                return result
        else:
            self._count = 0
            await anyio.lowlevel.checkpoint_if_cancelled()
            result = self.offer_nowait(data, reserved_value)
            if result > 0:
                await anyio.lowlevel.cancel_shielded_checkpoint()
                return result
        return await self._offer_waiting(data, reserved_value, result)

    async def _offer_waiting(self, data: Any, reserved_value: int, result: int) -> int:
        while result <= 0:
            if result == MAX_POSITION_EXCEEDED:
                raise AeronError(
                    f"publication {self.registration_id} (stream {self.stream_id}) reached its maximum position "
                    "(2^31 terms); close it and add a new one"
                )
            if result == ADMIN_ACTION:
                await anyio.lowlevel.checkpoint()
            else:
                await self._wait_for_limit()
            result = self.offer_nowait(data, reserved_value)
        return result

    async def _wait_for_limit(self) -> None:
        """Park until the publisher limit passes the current position (or the publication closes)."""
        publication = self.publication
        if publication._released:
            raise anyio.ClosedResourceError(f"publication {self.registration_id} is closed")
        self._waiters += 1
        try:
            if publication._park():
                await self._waker.wait()
            else:
                await anyio.lowlevel.checkpoint()
        finally:
            self._waiters -= 1
            if self._waiters == 0:
                publication._unpark()

    async def send(self, item: bytes) -> None:
        """ObjectSendStream: `await offer(item)`."""
        await self.offer(item)

    # ---- lifecycle ----

    def close(self) -> None:
        """Close the publication and wake any task waiting to offer (it raises ClosedResourceError)."""
        self.publication.close()
        self._waker.close()

    def revoke(self) -> None:
        """Close an exclusive publication, revoking it (see `ExclusivePublication.revoke`): the stream ends
        at once for every subscriber. Raises InvalidArgumentError for a concurrent publication."""
        self.revoke_on_close()
        self.close()

    def revoke_on_close(self) -> None:
        """Make `close` revoke this exclusive publication (see `ExclusivePublication.revoke_on_close`)."""
        publication = self.publication
        if not isinstance(publication, ExclusivePublication):
            raise InvalidArgumentError(
                f"publication {self.registration_id} is not exclusive: only an exclusive publication can be "
                "revoked (add it with add_exclusive_publication)")
        publication.revoke_on_close()

    async def aclose(self) -> None:
        self.close()
        await anyio.lowlevel.checkpoint()

    def __repr__(self) -> str:
        return f"<AsyncPublication stream={self.stream_id} session={self.session_id} reg={self.registration_id}>"


class _Receiver:
    """What a subscription and a per-image view share: pending messages and waiting on the
    subscription's waker."""

    _owner: AsyncSubscription

    def __init__(self) -> None:
        self._pending: collections.deque[Message] = collections.deque()
        self._receiving = False
        self._count = 0

    def _poll(self, max_messages: int) -> list[Message]:
        raise NotImplementedError

    def _park(self) -> None:
        raise NotImplementedError

    def _unpark(self) -> None:
        raise NotImplementedError

    def _nothing_more(self) -> None:
        """Raise when no message can come any more (closed, or end of stream); called before waiting."""

    def _poll_or_raise(self, max_messages: int) -> list[Message]:
        try:
            return self._poll(max_messages)
        except AeronError as exc:
            raise _translate(exc) from None

    async def _next_batch(self, max_messages: int) -> list[Message]:
        """At least one message, waiting for it without spinning; consumes nothing if cancelled."""
        if self._receiving:
            raise anyio.BusyResourceError("receiving from")
        self._receiving = True
        try:
            messages = self._poll_or_raise(max_messages)
            while not messages:
                self._nothing_more()
                owner = self._owner
                owner._waiters += 1
                try:
                    self._park()
                    messages = self._poll_or_raise(max_messages)  # re-check after arming
                    if messages:
                        break
                    self._nothing_more()
                    await owner._waker.wait()
                finally:
                    owner._waiters -= 1
                    self._unpark()
                messages = self._poll_or_raise(max_messages)
            return messages
        finally:
            self._receiving = False

    def receive_nowait(self) -> Message:
        """The next message if one is already there; raises anyio.WouldBlock otherwise."""
        if not self._pending:
            self._pending.extend(self._poll_or_raise(self._owner.max_batch))
            if not self._pending:
                self._nothing_more()
                raise anyio.WouldBlock
        return self._pending.popleft()

    async def receive(self) -> Message:
        """The next whole message, waiting for it; if cancelled, no message is lost."""
        self._count += 1
        if self._count >= CHECKPOINT_INTERVAL:
            self._count = 0
            await anyio.lowlevel.checkpoint()
        pending = self._pending
        if pending:
            return pending.popleft()
        pending.extend(await self._next_batch(self._owner.max_batch))
        return pending.popleft()

    async def receive_batch(self, max_messages: int = 1024) -> list[Message]:
        """Up to max_messages whole messages (at least one), with one await for the batch."""
        await anyio.lowlevel.checkpoint()
        pending = self._pending
        if pending:
            n = min(max_messages, len(pending))
            return [pending.popleft() for _ in range(n)]
        return await self._next_batch(max_messages)

    def batches(self, max_messages: int = 1024) -> _Batches:
        """`async for batch in sub.batches(...)`: lists of messages, one await per batch."""
        return _Batches(self, max_messages)


class _Batches:
    __slots__ = ("_receiver", "_max")

    def __init__(self, receiver: _Receiver, max_messages: int) -> None:
        self._receiver = receiver
        self._max = max_messages

    def __aiter__(self) -> _Batches:
        return self

    async def __anext__(self) -> list[Message]:
        try:
            return await self._receiver.receive_batch(self._max)
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            raise StopAsyncIteration from None


class AsyncSubscription(_Receiver, anyio.abc.ObjectReceiveStream[Message]):
    """A subscription for async code: `async for message in sub`, `await sub.receive()`, or
    `async for batch in sub.batches()` for one await per batch. Messages are whole (reassembled)
    and come from every image (publisher) of the subscription; `image_view(image)` gives one's."""

    def __init__(self, subscription: Subscription, max_batch: int = 1024) -> None:
        super().__init__()
        self._owner = self
        self.subscription = subscription
        self.max_batch = max_batch
        self._waker = _Waker()
        self._waiters = 0
        subscription._notify(self._waker.fd)

    @property
    def registration_id(self) -> int:
        return self.subscription.registration_id

    async def add_destination(self, destination: str) -> None:
        """Receive over `destination` too (see `Subscription.add_destination`)."""
        subscription = self.subscription
        await _await_driver(subscription._client, lambda: subscription.async_add_destination(destination),
                            subscription._client.poll_destination)

    async def remove_destination(self, destination: str) -> None:
        """Stop receiving over a destination `add_destination` added."""
        subscription = self.subscription
        await _await_driver(subscription._client, lambda: subscription.async_remove_destination(destination),
                            subscription._client.poll_destination)

    @property
    def images(self) -> list[Image]:
        try:
            return self.subscription.images
        except AeronError as exc:
            raise _translate(exc) from None

    @property
    def is_connected(self) -> bool:
        return self.subscription.is_connected

    @property
    def is_closed(self) -> bool:
        return self.subscription.is_closed

    def _poll(self, max_messages: int) -> list[Message]:
        return self.subscription.poll_messages(max_messages)

    def _park(self) -> None:
        self.subscription._park()

    def _unpark(self) -> None:
        if self._waiters == 0:
            self.subscription._unpark()

    async def __anext__(self) -> Message:
        try:
            return await self.receive()
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            raise StopAsyncIteration from None

    def image_view(self, image: Image) -> AsyncImageView:
        """The messages of one image (one publisher's session) only; ends with EndOfStream."""
        return AsyncImageView(self, image)

    async def image_views(self) -> list[AsyncImageView]:
        """A view per image currently connected."""
        await anyio.lowlevel.checkpoint()
        return [AsyncImageView(self, image) for image in self.images]

    def close(self) -> None:
        """Close the subscription; tasks waiting in it wake and see it closed."""
        self._pending.clear()
        self.subscription.close()
        self._waker.close()

    async def aclose(self) -> None:
        self.close()
        await anyio.lowlevel.checkpoint()

    def __repr__(self) -> str:
        return f"<AsyncSubscription reg={self.registration_id} stream={self.subscription.stream_id}>"


class AsyncImageView(_Receiver, anyio.abc.ObjectReceiveStream[Message]):
    """The messages of one image of a subscription; raises EndOfStream (ends `async for`) once the
    publisher has closed and everything it sent was received, or the image went away."""

    def __init__(self, owner: AsyncSubscription, image: Image) -> None:
        super().__init__()
        self._owner = owner
        self.image = image

    @property
    def session_id(self) -> int:
        return self.image.session_id

    @property
    def is_publication_revoked(self) -> bool:
        return self.image.is_publication_revoked

    async def reject(self, reason: str) -> None:
        """Reject this image (see `Image.reject`); returns once the driver applied it."""
        image = self.image
        client = self._owner.subscription._client
        await _await_driver(client, lambda: image.async_reject(reason), client.poll_destination)

    @property
    def correlation_id(self) -> int:
        """The image's correlation id: what a response publication names in response-correlation-id=
        (docs/api.md, "Response channels")."""
        return self.image.correlation_id

    def _poll(self, max_messages: int) -> list[Message]:
        return self.image.poll_messages(max_messages)

    def _nothing_more(self) -> None:
        if self._owner.subscription._released:
            raise anyio.ClosedResourceError(f"subscription {self._owner.registration_id} is closed")
        if self.image.is_end_of_stream:
            raise anyio.EndOfStream

    def _park(self) -> None:
        self.image._park()

    def _unpark(self) -> None:
        self.image._unpark()

    async def __anext__(self) -> Message:
        try:
            return await self.receive()
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._pending.clear()
        await anyio.lowlevel.checkpoint()

    def __repr__(self) -> str:
        return f"<AsyncImageView session={self.image.session_id} stream={self.image.stream_id}>"


_R = TypeVar("_R", AsyncPublication, AsyncSubscription)


class AsyncAeron:
    """An async client: add publications and subscriptions. Made by `aeron_async.connect()`,
    whose `async with` owns it (and an embedded driver, if it launched one)."""

    def __init__(self, client: Aeron, driver: MediaDriver | None) -> None:
        self.client = client
        self.driver = driver
        self._resources: list[AsyncPublication | AsyncSubscription] = []

    @property
    def aeron_dir(self) -> str:
        return self.client.aeron_dir

    @property
    def client_id(self) -> int:
        return self.client.client_id

    async def _register(self, start: Callable[[], int], poll: Callable[[int], _T | None]) -> _T:
        """Send a registration to the driver and wait for its answer, bounded by the driver timeout."""
        return await _await_driver(self.client, start, poll)

    async def add_publication(self, channel: str, stream_id: int) -> AsyncPublication:
        """Add (or join) the concurrent publication for channel + stream."""
        client = self.client
        publication = await self._register(
            lambda: client.async_add_publication(channel, stream_id, False), client.poll_add_publication
        )
        return self._track(AsyncPublication(publication))

    async def add_exclusive_publication(self, channel: str, stream_id: int) -> AsyncPublication:
        """Add a publication with its own session id (one writer task)."""
        client = self.client
        publication = await self._register(
            lambda: client.async_add_publication(channel, stream_id, True),
            lambda registration_id: client.poll_add_publication(registration_id, True),
        )
        return self._track(AsyncPublication(publication))

    async def add_subscription(
        self,
        channel: str,
        stream_id: int,
        *,
        on_available_image: Callable[[Image], None] | None = None,
        on_unavailable_image: Callable[[Image], None] | None = None,
        max_batch: int = 1024,
    ) -> AsyncSubscription:
        """Subscribe to channel + stream; image callbacks run in the receiving task."""
        client = self.client
        subscription = await self._register(
            lambda: client.async_add_subscription(channel, stream_id),
            lambda registration_id: client.poll_add_subscription(
                registration_id, on_available_image, on_unavailable_image
            ),
        )
        return self._track(AsyncSubscription(subscription, max_batch))

    async def add_counter(self, type_id: int, key: bytes = b"", label: str = "") -> Counter:
        """Allocate a counter owned by this client (see `Aeron.add_counter`); its value is read and
        updated without awaiting. The driver frees it when it is closed or this client closes or dies."""
        client = self.client
        counter: Counter = await self._register(
            lambda: client.async_add_counter(type_id, key, label), client.poll_add_counter
        )
        return counter

    async def add_static_counter(
        self, type_id: int, registration_id: int, key: bytes = b"", label: str = ""
    ) -> Counter:
        """The driver's static counter of `type_id` and `registration_id`, allocated by the first
        caller of any client (see `Aeron.add_static_counter`); it outlives this client."""
        client = self.client
        counter: Counter = await self._register(
            lambda: client.async_add_static_counter(type_id, registration_id, key, label), client.poll_add_counter
        )
        return counter

    async def next_session_id(self, stream_id: int) -> int:
        """A session id no publication of `stream_id` holds on the driver (see `Aeron.next_session_id`)."""
        client = self.client
        session_id: int = await self._register(
            lambda: client.async_next_session_id(stream_id), client.poll_next_session_id
        )
        return session_id

    @property
    def counters_reader(self) -> CountersReader:
        """A reader of the driver's counters (see `Aeron.counters_reader`)."""
        return self.client.counters_reader

    @property
    def on_publication_error(self) -> Callable[[PublicationErrorFrame], None] | None:
        """Called with each `PublicationErrorFrame` by `poll_publication_errors` (see `Aeron`)."""
        return self.client.on_publication_error

    @on_publication_error.setter
    def on_publication_error(self, handler: Callable[[PublicationErrorFrame], None] | None) -> None:
        self.client.on_publication_error = handler

    def poll_publication_errors(self) -> list[PublicationErrorFrame]:
        """The publication errors since the last call, each handed to `on_publication_error` too
        (see `Aeron.poll_publication_errors`); never waits."""
        return self.client.poll_publication_errors()

    async def reject_image(self, image: Image, reason: str) -> None:
        """Reject an image of one of this client's subscriptions (see `Image.reject`)."""
        await _await_driver(self.client, lambda: image.async_reject(reason), self.client.poll_destination)

    def _track(self, resource: _R) -> _R:
        self._resources = [r for r in self._resources if not r.is_closed]
        self._resources.append(resource)
        return resource

    def close(self) -> None:
        """Close every publication and subscription, the client, then an embedded driver."""
        resources, self._resources = self._resources, []
        for resource in resources:
            resource.close()
        self.client.close()
        if self.driver is not None:
            self.driver.close()

    async def aclose(self) -> None:
        self.close()
        await anyio.lowlevel.cancel_shielded_checkpoint()

    async def __aenter__(self) -> AsyncAeron:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<AsyncAeron aeron_dir={self.aeron_dir!r}{' embedded driver' if self.driver else ''}>"


class connect:  # noqa: N801 - used as `async with aeron_async.connect(...)`
    """`async with aeron_async.connect(...) as client:` an AsyncAeron connected to the driver at
    `aeron_dir` (default `$AERON_DIR` or /dev/shm/aeron-<user>).

    With `embedded_driver=True` and no live driver at the directory, a media driver is launched in
    this process (configured by `driver_context` and keyword overrides of its fields, SHARED
    threading by default) and closed when the block exits, after the client's publications and
    subscriptions. Without a driver to connect to it raises DriverNotFoundError. Processes or
    threads that do this on one directory at the same moment end with exactly one driver (the
    decision is taken under a lock on the directory); the others connect to it, and their clients
    hear at once when it closes (BrokenResourceError), so its owner should leave last.

    `wake_spin` (seconds; 0 turns it off) bounds how long the client conductor stays awake after
    waking a waiting task, so request/response round trips do not wait for a halted CPU to wake;
    the window adapts down to nothing for sparse traffic (see `Aeron.connect`).
    """

    def __init__(
        self,
        aeron_dir: str | None = None,
        *,
        embedded_driver: bool = False,
        driver_context: DriverContext | None = None,
        driver_timeout: float = 10.0,
        wake_spin: float = DEFAULT_WAKE_SPIN,
        **driver_overrides: Any,
    ) -> None:
        if driver_overrides and not embedded_driver:
            raise TypeError(
                f"driver options {sorted(driver_overrides)} apply only with embedded_driver=True"
            )
        self._aeron_dir = aeron_dir
        self._embedded = embedded_driver
        self._context = driver_context
        self._timeout = driver_timeout
        check_wake_spin(wake_spin)
        self._wake_spin = wake_spin
        self._overrides = driver_overrides
        self._client: AsyncAeron | None = None

    def _open(self) -> AsyncAeron:
        if not self._embedded:
            return AsyncAeron(self._connect(self._aeron_dir), None)
        overrides = {"threading_mode": "SHARED", **self._overrides}
        if self._aeron_dir is not None:
            overrides["aeron_dir"] = self._aeron_dir
        for attempt in range(_EMBEDDED_ATTEMPTS):
            # None: a live driver is there (or one launched at the same moment won the directory).
            driver = MediaDriver.launch_unless_running(self._context, **overrides)
            aeron_dir = self._aeron_dir if driver is None else driver.aeron_dir
            try:
                return AsyncAeron(self._connect(aeron_dir), driver)
            except DriverNotFoundError:
                if driver is None and attempt + 1 < _EMBEDDED_ATTEMPTS:
                    continue  # the driver it was to join closed in between: launch one
                if driver is not None:
                    driver.close()
                raise
            except BaseException:
                if driver is not None:
                    driver.close()
                raise
        raise AssertionError("unreachable")

    def _connect(self, aeron_dir: str | None) -> Aeron:
        return Aeron.connect(aeron_dir, driver_timeout=self._timeout, wake_spin=self._wake_spin)

    async def __aenter__(self) -> AsyncAeron:
        # Launching a driver creates files and connecting waits for the driver: off the loop.
        self._client = await anyio.to_thread.run_sync(self._open)
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()
