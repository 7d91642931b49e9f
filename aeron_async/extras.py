"""Optional features and the extra that installs what each needs.

The package itself needs only its declared dependencies (cffi, attrs, anyio). Tools that need more
live behind an extra: `pip install 'aeron_async[bench]'` for `aeron-async bench`. A tool whose extra
is missing stops with one line naming the extra (`MissingExtraError`), before it imports anything
that would fail halfway through.
"""

from __future__ import annotations

import importlib.util

from .errors import AeronError

# extra -> (module imported at run time, the distribution on PyPI that provides it)
EXTRAS: dict[str, tuple[tuple[str, str], ...]] = {
    "bench": (("rich", "rich"), ("zmq", "pyzmq"), ("hdrh", "hdrhistogram"), ("matplotlib", "matplotlib")),
    "monitor": (("rich", "rich"), ("prometheus_client", "prometheus-client")),
    "spark": (("pyspark", "pyspark"), ("pyarrow", "pyarrow"), ("numpy", "numpy")),
}


class MissingExtraError(AeronError, ImportError):
    """A feature needs an extra that is not installed; the message is one line saying which.
    `name`, as ImportError's, is the module that could not be imported, where known."""

    def __init__(self, message: str, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


def missing(extra: str) -> list[str]:
    """The distributions of `extra` whose modules cannot be imported here."""
    return [dist for module, dist in EXTRAS[extra] if importlib.util.find_spec(module) is None]


def require(extra: str, feature: str) -> None:
    """Raise MissingExtraError unless every module of `extra` can be imported."""
    absent = missing(extra)
    if absent:
        raise MissingExtraError(
            f"{feature} needs the '{extra}' extra: pip install 'aeron_async[{extra}]' "
            f"(missing: {', '.join(absent)})")


def extra_of_module(module: str) -> str | None:
    """The extra whose distributions provide top-level `module`, or None if none does."""
    top = module.partition(".")[0]
    for extra, modules in EXTRAS.items():
        if any(top == name for name, _ in modules):
            return extra
    return None
