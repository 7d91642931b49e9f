"""Type stub of the C extension aeron_async._speedups (_native/python/aa_speedups.c and aa_poll.c):
the message path of publications and subscriptions, the Message record, and Aeron's
fragment-handler polls with Header and the fragment assemblers."""

from collections.abc import Callable, Sequence
from typing import Generic, Literal, TypeVar, final

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

ABORT: Literal[1]
BREAK: Literal[2]
COMMIT: Literal[3]
CONTINUE: Literal[4]

@final
class Header:
    """The DATA frame header of the fragment (or reassembled message) being handled."""

    def __new__(cls) -> Header: ...
    @property
    def frame_length(self) -> int: ...
    @property
    def version(self) -> int: ...
    @property
    def flags(self) -> int: ...
    @property
    def type(self) -> int: ...
    @property
    def term_offset(self) -> int: ...
    @property
    def session_id(self) -> int: ...
    @property
    def stream_id(self) -> int: ...
    @property
    def term_id(self) -> int: ...
    @property
    def reserved_value(self) -> int: ...
    @property
    def position(self) -> int: ...
    @property
    def initial_term_id(self) -> int: ...
    @property
    def position_bits_to_shift(self) -> int: ...
    @property
    def next_term_offset(self) -> int: ...
    @property
    def image(self) -> object: ...

_FragmentHandler = Callable[[memoryview, Header], object]
_ControlledFragmentHandler = Callable[[memoryview, Header], int]
_BlockHandler = Callable[[memoryview, int, int, int, int], object]
_Handler = TypeVar("_Handler")
_Result = TypeVar("_Result")

class _Assembler(Generic[_Handler, _Result]):
    """What both assemblers offer (a stub-only base: at run time each is its own class)."""

    def __call__(self, data: Buffer, header: Header, /) -> _Result: ...
    @property
    def delegate(self) -> _Handler: ...
    def reset(self) -> None: ...
    def free_session_buffer(self, session_id: int, /) -> bool: ...

@final
class FragmentAssembler(_Assembler[_FragmentHandler, None]):
    """Reassembles fragmented messages per session for a poll's handler."""

    def __new__(cls, handler: _FragmentHandler, initial_buffer_length: int = 0) -> FragmentAssembler: ...

@final
class ControlledFragmentAssembler(_Assembler[_ControlledFragmentHandler, int]):
    """FragmentAssembler for controlled_poll: the handler returns a ControlledPollAction."""

    def __new__(
        cls, handler: _ControlledFragmentHandler, initial_buffer_length: int = 0
    ) -> ControlledFragmentAssembler: ...

class _NativeHandle:
    """The client object's pointer both message-path bases hold (a stub-only base, as _Assembler)."""

    @property
    def _ptr(self) -> CData | None: ...
    @_ptr.setter
    def _ptr(self, value: CData | None) -> None: ...

@disjoint_base
class PublicationBase(_NativeHandle):
    """The message path of a publication (base of aeron_async.Publication)."""

    def offer(self, data: Buffer, reserved_value: int = 0) -> int: ...
    def offer_batch(self, messages: Sequence[Buffer], reserved_value: int = 0) -> int: ...

@disjoint_base
class SubscriptionBase(_NativeHandle):
    """The message path of a subscription (base of aeron_async.Subscription)."""

    def poll_messages(self, max_messages: int = 256, fragment_limit: int = 1 << 30) -> list[Message]: ...
    def _poll_image_messages(
        self, image_address: int, max_messages: int = 256, fragment_limit: int = 1 << 30
    ) -> list[Message]: ...
    def poll(self, handler: _FragmentHandler, fragment_limit: int = 10) -> int: ...
    def controlled_poll(self, handler: _ControlledFragmentHandler, fragment_limit: int = 10) -> int: ...
    def block_poll(self, handler: _BlockHandler, block_length_limit: int) -> int: ...
    def _image_poll(
        self,
        image_address: int,
        handler: _FragmentHandler | _ControlledFragmentHandler,
        limit_position: int,
        fragment_limit: int,
        controlled: bool,
    ) -> int: ...
    def _image_block_poll(self, image_address: int, handler: _BlockHandler, block_length_limit: int) -> int: ...

def bind(api_address: int, address_of: Callable[[CData], int], raise_last_error: Callable[[], None], /) -> None: ...
