"""aeron_async: Aeron-class messaging for Python services.

Publications and subscriptions over shared-memory IPC (and, with the UDP transport, the network),
a native media driver, a synchronous client and an async one on anyio (`aeron_async.connect`);
see docs/architecture.md for the map.
"""

from .client import (
    ADMIN_ACTION,
    BACK_PRESSURED,
    CLOSED,
    MAX_POSITION_EXCEEDED,
    NOT_CONNECTED,
    Aeron,
    BufferClaim,
    ControlledFragmentAssembler,
    ControlledPollAction,
    ExclusivePublication,
    FragmentAssembler,
    Header,
    Image,
    Message,
    OfferResult,
    Publication,
    Subscription,
)
from .publication_errors import PublicationErrorFrame
from .aio import AsyncAeron, AsyncImageView, AsyncPublication, AsyncSubscription, connect
from ._stop import cancel_on_signals
from .rpc import AsyncRpcClient, AsyncRpcServer, RpcRequest
from .rpc_sync import RpcClient, RpcServer
from .context import DriverContext
from .counters import ChannelStatus, Counter, CounterRecord, CountersReader
from .driver import MediaDriver, is_driver_active
from .idle import IdleStrategy
from .flow_control import FlowControlParams, FlowControlStrategy, MinFlowControl, StatusMessage, TaggedFlowControl
from .name_resolver import NameResolver, NameResolverParams
from . import strategies
from .errors import (
    AeronError,
    ClientTimeoutError,
    ClosedError,
    ConfigurationError,
    DriverCorruptError,
    DriverNotFoundError,
    DriverTimeoutError,
    InvalidArgumentError,
    InvalidStateError,
    InvalidChannelError,
    InvalidPositionError,
    MessageTooLongError,
    RegistrationError,
    RemoteError,
    RequestError,
    RequestTimeoutError,
    ServerUnavailableError,
    StorageSpaceError,
    UsedAfterForkError,
)

from . import _ffi

# The submodules the documentation names (`aeron_async.loss.read_loss_report(...)`) are attributes of
# the package after a plain `import aeron_async`: imported on first use, so that importing the package
# stays quick and the optional extras (spark, monitor) load only when asked for.
_LAZY_SUBMODULES = frozenset({
    "archive", "bench", "channel_params", "cli", "driver_control", "exporter", "extras", "loss", "monitor", "ready",
    "resolve", "spark", "stat",
})


def __getattr__(name: str) -> object:
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_SUBMODULES)

# The native core's version (AA_VERSION_STRING of _native/src/util/aa_version.h, which setup.py also
# puts in the package metadata): one source, so the two cannot disagree.
__version__: str = _ffi.ffi.string(_ffi.lib.aa_version()).decode()

__all__ = (
    "ADMIN_ACTION",
    "BACK_PRESSURED",
    "CLOSED",
    "MAX_POSITION_EXCEEDED",
    "NOT_CONNECTED",
    "Aeron",
    "AeronError",
    "AsyncAeron",
    "AsyncImageView",
    "AsyncPublication",
    "AsyncRpcClient",
    "AsyncRpcServer",
    "AsyncSubscription",
    "BufferClaim",
    "ChannelStatus",
    "ClientTimeoutError",
    "ClosedError",
    "ConfigurationError",
    "ControlledFragmentAssembler",
    "ControlledPollAction",
    "Counter",
    "CounterRecord",
    "CountersReader",
    "DriverContext",
    "DriverCorruptError",
    "DriverNotFoundError",
    "DriverTimeoutError",
    "ExclusivePublication",
    "FlowControlParams",
    "FlowControlStrategy",
    "FragmentAssembler",
    "Header",
    "IdleStrategy",
    "Image",
    "InvalidArgumentError",
    "InvalidStateError",
    "InvalidChannelError",
    "InvalidPositionError",
    "MediaDriver",
    "Message",
    "MessageTooLongError",
    "MinFlowControl",
    "NameResolver",
    "NameResolverParams",
    "OfferResult",
    "Publication",
    "PublicationErrorFrame",
    "RegistrationError",
    "RemoteError",
    "RequestError",
    "RequestTimeoutError",
    "RpcClient",
    "RpcRequest",
    "RpcServer",
    "ServerUnavailableError",
    "StatusMessage",
    "StorageSpaceError",
    "Subscription",
    "TaggedFlowControl",
    "UsedAfterForkError",
    "cancel_on_signals",
    "connect",
    "is_driver_active",
)
