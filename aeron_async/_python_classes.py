"""What the strategies written in Python (flow control, name resolvers) share: loading the class a
command line names ("module:Class") and naming a class in messages and the error log."""

from __future__ import annotations

import importlib
from typing import Any

from .errors import ConfigurationError


def qualified(obj: Any) -> str:
    """"module.QualifiedName" of a class or function (for messages and descriptions)."""
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def load_class(spec: str, kind: str, example: str) -> Any:
    """The class (or factory) named by "module:Class" (or "module.Class"); ConfigurationError, naming
    the `kind` ("flow control") and how to write it (`example`), when it cannot be had."""
    module_name, sep, attr = spec.partition(":")
    if not sep:
        module_name, _, attr = spec.rpartition(".")
    if not module_name or not attr:
        raise ConfigurationError(f"{kind} class {spec!r}: give it as module:Class (e.g. {example})")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"{kind} class {spec!r}: cannot import {module_name}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigurationError(f"{kind} class {spec!r}: {module_name} has no {attr}") from None
    if not callable(obj):
        raise ConfigurationError(f"{kind} class {spec!r} is not a class or factory")
    return obj
