"""Type stub of the C extension aeron_async._speedups (_native/python/aa_speedups.c): the message
path of publications and subscriptions, and the Message record."""

from collections.abc import Callable, Sequence
from typing import final

from typing_extensions import Buffer, disjoint_base

from ._aeron_native import CData

@final
class Message:
    """A whole (reassembled) message with the stream coordinates of its last fragment."""

    def __new__(
        cls, data: Buffer, session_id: int = 0, stream_id: int = 0, position: int = 0, reserved_value: int = 0
    ) -> Message: ...
    @property
    def data(self) -> bytes: ...
    @property
    def session_id(self) -> int: ...
    @property
    def stream_id(self) -> int: ...
    @property
    def position(self) -> int: ...
    @property
    def reserved_value(self) -> int: ...
    def __reduce__(self) -> tuple[type[Message], tuple[bytes, int, int, int, int]]: ...

@disjoint_base
class PublicationBase:
    """The message path of a publication (base of aeron_async.Publication)."""

    @property
    def _ptr(self) -> CData | None: ...
    @_ptr.setter
    def _ptr(self, value: CData | None) -> None: ...
    def offer(self, data: Buffer, reserved_value: int = 0) -> int: ...
    def offer_batch(self, messages: Sequence[Buffer], reserved_value: int = 0) -> int: ...

@disjoint_base
class SubscriptionBase:
    """The message path of a subscription (base of aeron_async.Subscription)."""

    @property
    def _ptr(self) -> CData | None: ...
    @_ptr.setter
    def _ptr(self, value: CData | None) -> None: ...
    def poll_messages(self, max_messages: int = 256, fragment_limit: int = 1 << 30) -> list[Message]: ...
    def _poll_image_messages(
        self, image_address: int, max_messages: int = 256, fragment_limit: int = 1 << 30
    ) -> list[Message]: ...

def bind(api_address: int, address_of: Callable[[CData], int], raise_last_error: Callable[[], None], /) -> None: ...
