"""The native option tables (docs/configuration.md; `_native/src/util/aa_options.h`): the name,
environment variable, Aeron property name, type, default and description of every option of the
media driver and of the archive, read from the native library, so each is written once, in C.

`DriverContext` and `ArchiveContext` declare their fields (names and Python types) and take the
rest from here through `context_fields`: a field's metadata holds its option's `env`, `property`,
`type`, `default` (as the environment would give it) and `doc`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, cast

import attrs

from ._ffi import ffi, lib
from .errors import ConfigurationError, check

DRIVER: int = lib.AA_OPTIONS_DRIVER
ARCHIVE: int = lib.AA_OPTIONS_ARCHIVE

_Context = TypeVar("_Context")


@attrs.frozen
class NativeOption:
    """One option of a native table (aa_option_describe)."""

    name: str           # the keyword of the Python context
    env: str            # AERON_...
    property: str       # aeron....
    type: int           # lib.AA_OPTION_*
    default: str        # as the environment would give it; "" may stand for one worked out at start
    description: str


@functools.cache
def native_table(kind: int) -> tuple[NativeOption, ...]:
    """Every option of the driver's (DRIVER) or the archive's (ARCHIVE) table, in its order."""
    count = check(lib.aa_options_count(kind))
    info = ffi.new("aa_option_info_t *")
    out = []
    for index in range(count):
        check(lib.aa_option_describe(kind, index, info))
        out.append(NativeOption(
            name=ffi.string(info.name).decode(), env=ffi.string(info.env_name).decode(),
            property=ffi.string(info.property_name).decode(), type=info.type,
            default=ffi.string(info.default_value).decode(), description=ffi.string(info.description).decode()))
    return tuple(out)


def context_fields(kind: int) -> Callable[[type, list[attrs.Attribute[Any]]], list[attrs.Attribute[Any]]]:
    """An attrs field transformer: each field gets the metadata of the native option of its name."""

    def transform(cls: type, fields: list[attrs.Attribute[Any]]) -> list[attrs.Attribute[Any]]:
        by_name = {option.name: option for option in native_table(kind)}
        out = []
        for field in fields:
            option = by_name.get(field.name)
            if option is None:
                raise TypeError(f"{cls.__name__}.{field.name} has no option in the native table")
            out.append(field.evolve(metadata={
                "env": option.env, "property": option.property, "type": option.type,
                "default": option.default, "doc": option.description}))
        return out

    return transform


def field_name(kind: int, name: str) -> str:
    """The context's keyword for an option given by environment name (AERON_TERM_BUFFER_LENGTH),
    property name (aeron.term.buffer.length), either without its aeron. or aeron.archive. prefix, or
    keyword (any case); the name in lower case, dots as underscores, when no option has it."""
    normalised = name.strip().upper().replace(".", "_")
    envs = (normalised, "AERON_" + normalised, "AERON_ARCHIVE_" + normalised)
    table = native_table(kind)
    for candidate in envs:
        for option in table:
            if option.env == candidate:
                return option.name
    for option in table:
        if option.name == normalised.lower():
            return option.name
    return normalised.lower()


def native_value(field: attrs.Attribute[Any], value: object) -> str:
    """A field's value as the native option takes it: booleans as true/false, durations given as
    seconds (int or float) in nanoseconds, the rest as text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if field.metadata["type"] == lib.AA_OPTION_DURATION and isinstance(value, int | float):
        if value < 0:
            raise ConfigurationError(f"{field.name}={value!r} must not be negative (seconds, or a string like '500ms')")
        return f"{int(round(value * 1_000_000_000))}ns"
    return str(value)


def items(context: Any) -> list[tuple[str, str]]:
    """(environment variable, native value) for every field of a context that is set."""
    out = []
    for field in attrs.fields(type(context)):
        value = getattr(context, field.name)
        if value is not None:
            out.append((field.metadata["env"], native_value(field, value)))
    return out


def evolve(context: _Context, overrides: dict[str, Any], kind: str, see: str) -> _Context:
    """`context` with the fields of `overrides` set; ConfigurationError names an unknown one (an
    option of the `kind` settings, documented by `see`)."""
    if not overrides:
        return context
    try:
        evolved: _Context = attrs.evolve(cast(Any, context), **overrides)  # an attrs context
        return evolved
    except TypeError as exc:
        raise ConfigurationError(f"unknown {kind} option: {exc}; see {see}") from exc


def to_native(context: Any, new: Callable[[], Any], set_option: Callable[[Any, bytes, bytes], int],
              free: Callable[[Any], None]) -> Any:
    """A native context with the defaults, the environment, then every field of `context` that is set."""
    ctx = new()
    if ctx == ffi.NULL:
        check(-1, ConfigurationError)
    try:
        for env, value in items(context):
            check(set_option(ctx, env.encode(), value.encode()), ConfigurationError)
    except BaseException:
        free(ctx)
        raise
    return ctx


class NativeContext:
    """What DriverContext and ArchiveContext share: the fields that are set, and the native context
    made from them by the functions <_NATIVE_PREFIX>_new, _set and _free."""

    __slots__ = ()
    _NATIVE_PREFIX: ClassVar[str]   # aa_driver_context, aa_archive_context

    def items(self) -> list[tuple[str, str]]:
        """(environment variable, native value) for every field that is set."""
        return items(self)

    def _to_native(self) -> Any:
        prefix = self._NATIVE_PREFIX
        return to_native(self, getattr(lib, f"{prefix}_new"), getattr(lib, f"{prefix}_set"),
                         getattr(lib, f"{prefix}_free"))


def listing(kind: int) -> list[tuple[str, str, str, str]]:
    """(env name, property name, default, description) for every option of a table."""
    return [(o.env, o.property, o.default, o.description) for o in native_table(kind)]
