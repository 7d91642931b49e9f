"""An Image: one publisher's stream as a subscription sees it (one session id), with its own polls,
position and `reject` (aeron-wave3.md 4.2); its Subscription (client.py) makes and polls it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._ffi import ffi, lib
from .errors import ClosedError, InvalidArgumentError, InvalidPositionError, check, last_error

if TYPE_CHECKING:
    from ._speedups import Message
    from .client import BlockHandler, ControlledFragmentHandler, FragmentHandler, Subscription

__all__ = ("Image",)

_UNBOUNDED = (1 << 63) - 1


class Image:
    """One publisher's stream as seen by a subscription (one session id)."""

    __slots__ = ("_ptr", "_address", "_subscription", "correlation_id", "session_id", "stream_id", "term_length",
                 "mtu_length", "initial_term_id", "join_position", "source_identity", "__weakref__")

    def __init__(self, subscription: Subscription, ptr: Any) -> None:
        self._ptr = ptr
        self._address = int(ffi.cast("uintptr_t", ptr))
        self._subscription = subscription
        info = ffi.new("aa_image_info_t *")
        lib.aa_image_describe(ptr, info)
        self.correlation_id: int = info.correlation_id
        self.session_id: int = info.session_id
        self.stream_id: int = info.stream_id
        self.term_length: int = info.term_length
        self.mtu_length: int = info.mtu_length
        self.initial_term_id: int = info.initial_term_id
        self.join_position: int = info.join_position
        self.source_identity = ffi.string(info.source_identity).decode()

    def _checked(self) -> Any:
        if self._subscription._ptr is None:
            raise self._subscription._client._closed_error(
                "the subscription of this image is closed", f"image (session {self.session_id}) of a subscription")
        return self._ptr

    @property
    def position(self) -> int:
        return lib.aa_image_position(self._checked())

    @position.setter
    def position(self, position: int) -> None:
        """Move the subscriber position: forward to a frame boundary within the data received in the
        current term, or back to a frame boundary the log still holds (at most a term behind the
        furthest position read, not before the join position). Raises InvalidPositionError (a
        ValueError) naming the valid range otherwise."""
        ptr = self._checked()
        if isinstance(position, bool) or not isinstance(position, int):
            raise TypeError(f"position must be an int, not {type(position).__name__}")
        if lib.aa_image_set_position(ptr, position) < 0:
            error = last_error()
            if isinstance(error, ClosedError):
                raise error
            raise InvalidPositionError(str(error), error.code)

    @property
    def is_closed(self) -> bool:
        return self._subscription._ptr is None or bool(lib.aa_image_is_closed(self._ptr))

    @property
    def is_end_of_stream(self) -> bool:
        return self._subscription._ptr is None or bool(lib.aa_image_is_end_of_stream(self._ptr))

    @property
    def end_of_stream_position(self) -> int:
        return lib.aa_image_end_of_stream_position(self._checked())

    @property
    def is_publication_revoked(self) -> bool:
        """Its publication was revoked (`ExclusivePublication.revoke`): the stream ended early."""
        return bool(lib.aa_image_is_publication_revoked(self._checked()))

    def async_reject(self, reason: str) -> int:
        """Start rejecting this image (see `reject`); returns a correlation id for `Aeron.poll_destination`."""
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a str, not {type(reason).__name__}")
        return check(lib.aa_image_async_reject(self._checked(), reason.encode()), InvalidArgumentError)

    def reject(self, reason: str) -> None:
        """Reject this image (Aeron's `Image.reject`, aeron-wave3.md 4.2): the driver drops its data from
        now on and tells the publisher (its `on_publication_error`, with `reason`); the image goes
        unavailable at its liveness timeout (IPC: at once, for every subscriber, for an image liveness
        timeout). Not permanent: the publication may come back as a new image. Returns once the driver
        applied it. Raises InvalidArgumentError for a spy's image ("spies can not reject images") and a
        reason over 1023 bytes, RegistrationError when the driver no longer has the image."""
        correlation_id = self.async_reject(reason)
        client = self._subscription._client
        client._await_registration(lambda: client.poll_destination(correlation_id))

    def _park(self) -> None:
        """Have the subscription's notify fd (aeron_async.aio) written when this image has data."""
        if self._subscription._ptr is not None:
            lib.aa_image_park(self._ptr)

    def _unpark(self) -> None:
        if self._subscription._ptr is not None:
            lib.aa_image_unpark(self._ptr)

    def poll(self, handler: FragmentHandler, fragment_limit: int = 10) -> int:
        """Call handler(data, header) for up to fragment_limit fragments of this image; returns how
        many. As Subscription.poll, for this image only."""
        self._checked()
        return self._subscription._image_poll(self._address, handler, _UNBOUNDED, fragment_limit, False)

    def controlled_poll(self, handler: ControlledFragmentHandler, fragment_limit: int = 10) -> int:
        """As Subscription.controlled_poll, for this image only."""
        self._checked()
        return self._subscription._image_poll(self._address, handler, _UNBOUNDED, fragment_limit, True)

    def bounded_poll(self, handler: FragmentHandler, limit_position: int, fragment_limit: int = 10) -> int:
        """As poll, reading no fragment that starts at or past limit_position."""
        self._checked()
        return self._subscription._image_poll(self._address, handler, limit_position, fragment_limit, False)

    def bounded_controlled_poll(
        self, handler: ControlledFragmentHandler, limit_position: int, fragment_limit: int = 10
    ) -> int:
        """As controlled_poll, reading no fragment that starts at or past limit_position."""
        self._checked()
        return self._subscription._image_poll(self._address, handler, limit_position, fragment_limit, True)

    def block_poll(self, handler: BlockHandler, block_length_limit: int) -> int:
        """Hand handler(buffer, offset, length, session_id, term_id) the run of whole frames (headers
        included) from the position, at most block_length_limit bytes and within one term, in one call:
        `buffer` is the term (a read-only memoryview valid only during the call) and the block is
        buffer[offset:offset + length]. A padding frame comes alone. Returns the bytes consumed (the
        position moves by them, even when the handler raises). A frame longer than the limit is never
        delivered: give at least the MTU."""
        self._checked()
        return self._subscription._image_block_poll(self._address, handler, block_length_limit)

    def poll_messages(self, max_messages: int = 256, fragment_limit: int = 1 << 30) -> list[Message]:
        """Whole messages of this image only, in one native call; returns a list, possibly empty."""
        self._checked()
        return self._subscription._poll_image_messages(self._address, max_messages, fragment_limit)

    def __repr__(self) -> str:
        return f"<Image session={self.session_id} stream={self.stream_id} source={self.source_identity!r}>"
