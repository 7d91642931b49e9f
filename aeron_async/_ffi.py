"""Loads the compiled native core (cffi out-of-line API mode) with an actionable error."""

try:
    from ._aeron_native import ffi, lib
except ImportError as exc:  # pragma: no cover - exercised only on broken installs
    raise ImportError(
        "the aeron_async native core is not built (aeron_async._aeron_native is missing): "
        "install the package with `pip install .` (or `pip install -e .` in a checkout), which compiles it; "
        f"the original error was: {exc}"
    ) from exc

__all__ = ("ffi", "lib")
