"""What the package's closeable objects share: the context-manager protocol (`with x:` closes x on
the way out) and the release of a native resource that a client owns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self


class ClosedOnExit:
    """A base for an object with a `close()`: `with obj:` gives obj and closes it on the way out,
    also after an exception, as `contextlib.closing` does."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def release_owned(resource: Any, close_native: Callable[[Any], object]) -> None:
    """Closes a client's native resource once: `resource._ptr` is taken (set to None) and, while its
    client (`resource._client`) is open, handed to `close_native` and the resource dropped from the
    client's resources. A closed client has freed its resources already."""
    ptr, resource._ptr = resource._ptr, None
    if ptr is not None and resource._client._ptr is not None:
        close_native(ptr)
        try:
            resource._client._resources.remove(resource)
        except ValueError:
            pass
