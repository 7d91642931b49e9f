"""The native option tables (docs/configuration.md; `_native/src/util/aa_options.h`): the name,
environment variable, Aeron property name, type, default and description of every option of the
media driver and of the archive, read from the native library, so each is written once, in C.

`DriverContext` and `ArchiveContext` declare their fields (names and Python types) and take the
rest from here through `context_fields`: a field's metadata holds its option's `env`, `property`,
`type`, `default` (as the environment would give it) and `doc`.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar, cast

import attrs

from ._ffi import ffi, lib
from .errors import ConfigurationError, check

DRIVER: int = lib.AA_OPTIONS_DRIVER
ARCHIVE: int = lib.AA_OPTIONS_ARCHIVE

_Context = TypeVar("_Context")
_Self = TypeVar("_Self", bound="NativeContext")


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


_KIND_NAMES = {DRIVER: ("driver", "aeron_async.DriverContext", "aeron-async driver --help-options"),
               ARCHIVE: ("archive", "aeron_async.archive.ArchiveContext", "aeron-async archive --help-options")}


def _normalised(name: str) -> str:
    return name.strip().lower().replace(".", "_").replace("-", "_")


@functools.cache
def spellings(kind: int) -> dict[str, str]:
    """Every accepted spelling of every option of a table, normalised (lower case, dots and dashes as
    underscores), to the context's keyword: the keyword, the environment name, the property name,
    and either of those two without its `aeron.` or `aeron.archive.` prefix (docs/configuration.md)."""
    table = native_table(kind)
    out: dict[str, str] = {}
    for option in table:      # the full names first: a shortened one never hides another option
        for name in (option.name, option.env, option.property):
            out.setdefault(_normalised(name), option.name)
    for option in table:
        for full in (_normalised(option.env), _normalised(option.property)):
            for prefix in ("aeron_archive_", "aeron_"):
                if full.startswith(prefix):
                    out.setdefault(full[len(prefix):], option.name)
    return out


def unknown_option(kind: int, name: str) -> ConfigurationError:
    """The error for an option no table has: the closest valid names, spelt as `name` is (a
    property name, an environment name or a keyword), and where every option is listed."""
    what, context, listing_command = _KIND_NAMES[kind]
    table = native_table(kind)
    if "." in name:
        candidates = {option.property: option for option in table}
    elif name.strip().isupper():
        candidates = {option.env: option for option in table}
    else:
        candidates = {option.name: option for option in table}
    by_normalised = {_normalised(spelt): spelt for spelt in candidates}
    close = difflib.get_close_matches(_normalised(name), list(by_normalised), n=3, cutoff=0.6)
    names = [by_normalised[c] for c in close]
    hint = f"did you mean {', '.join(names[:-1]) + ' or ' if len(names) > 1 else ''}{names[-1]}? " if names else ""
    return ConfigurationError(
        f"unknown {what} option {name!r}: {hint}every option is listed by `{listing_command}` "
        f"(docs/configuration.md); it may be given as a property name (aeron.term.buffer.length), an "
        f"environment name (AERON_TERM_BUFFER_LENGTH) or a keyword of {context} (term_buffer_length)")


# Variables of the AERON_ namespace that aeron_async reads outside the option tables (the archive
# client's credentials, the examples' stream): never taken for a misspelt option.
OTHER_ENVIRONMENT = frozenset({"AERON_ARCHIVE_CLIENT_CREDENTIALS", "AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE",
                               "AERON_CHANNEL", "AERON_STREAM", "AERON_SPARK_HOST"})
# how alike a variable's name must be to an option's to be taken for a misspelling of it: one or two
# letters off in a name of twenty (AERON_TERM_BUFFER_LENGHT, AERON_THREADING_MOD)
_MISSPELT = 0.9


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """docs/configuration.md, "The environment": a variable whose name is nearly an option's
    (AERON_TERM_BUFFER_LENGHT) is refused, naming the option, before a driver or an archive starts,
    so that a misspelt setting is never silently left at its default. Other AERON_ variables are
    not refused: that namespace is shared with applications and Aeron's other programs."""
    environ = os.environ if environ is None else environ
    known = {option.env for kind in (DRIVER, ARCHIVE) for option in native_table(kind)} | OTHER_ENVIRONMENT
    for name in sorted(environ):
        if not name.startswith("AERON_") or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=_MISSPELT)
        if close:
            raise ConfigurationError(
                f"environment variable {name} is not an option: did you mean {close[0]}? Correct its name or "
                f"unset it (every option is listed by `aeron-async driver --help-options` and "
                f"`aeron-async archive --help-options`, docs/configuration.md)")


def field_name(kind: int, name: str) -> str:
    """The context's keyword for an option given by environment name (AERON_TERM_BUFFER_LENGTH),
    property name (aeron.term.buffer.length), either without its aeron. or aeron.archive. prefix, or
    keyword (any case); ConfigurationError, naming the closest valid names, when no option has it."""
    found = spellings(kind).get(_normalised(name))
    if found is None:
        raise unknown_option(kind, name)
    return found


def keywords(kind: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` by the context's keywords (each name as field_name takes it); ConfigurationError
    names an unknown one, or two names of one option."""
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    for name, value in options.items():
        field = field_name(kind, name)
        if field in out:
            raise ConfigurationError(f"{given[field]!r} and {name!r} name the same {_KIND_NAMES[kind][0]} "
                                     f"option ({field}): give it once")
        out[field], given[field] = value, name
    return out


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


def evolve(context: _Context, overrides: Mapping[str, Any], kind: int) -> _Context:
    """`context` with the options of `overrides` set (each named as field_name takes it);
    ConfigurationError names an unknown one with the closest valid names."""
    if not overrides:
        return context
    evolved: _Context = attrs.evolve(cast(Any, context), **keywords(kind, overrides))  # an attrs context
    return evolved


def accepting_option_names(kind: int) -> Callable[[type[_Context]], type[_Context]]:
    """A class decorator for an attrs context: its constructor takes every spelling of an option
    that field_name takes (a property name through `**{"aeron.term.buffer.length": "1m"}`), and an
    unknown keyword raises ConfigurationError naming the closest valid ones (not attrs' TypeError)."""

    def decorate(cls: type[_Context]) -> type[_Context]:
        attrs_init = cls.__init__

        @functools.wraps(attrs_init)
        def __init__(self: Any, **options: Any) -> None:
            attrs_init(self, **keywords(kind, options))

        setattr(cls, "__init__", __init__)
        return cls

    return decorate


def to_native(context: Any, new: Callable[[], Any], set_option: Callable[[Any, bytes, bytes], int],
              free: Callable[[Any], None]) -> Any:
    """A native context with the defaults, the environment, then every field of `context` that is set;
    ConfigurationError for a misspelt option in the environment (check_environment)."""
    check_environment()
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
    _KIND: ClassVar[int]            # DRIVER, ARCHIVE

    def items(self) -> list[tuple[str, str]]:
        """(environment variable, native value) for every field that is set."""
        return items(self)

    def _to_native(self) -> Any:
        prefix = self._NATIVE_PREFIX
        return to_native(self, getattr(lib, f"{prefix}_new"), getattr(lib, f"{prefix}_set"),
                         getattr(lib, f"{prefix}_free"))

    @classmethod
    def from_options(cls: type[_Self], options: Mapping[str, Any]) -> _Self:
        """A context from a mapping whose keys name options any way field_name takes them (a
        property name such as "aeron.term.buffer.length", an environment name, a keyword);
        ConfigurationError names an unknown one with the closest valid names."""
        return cls(**options)

    def with_options(self: _Self, options: Mapping[str, Any]) -> _Self:
        """A copy of this context with the options of `options` (named as from_options takes them) set."""
        return evolve(self, options, self._KIND)


def listing(kind: int) -> list[tuple[str, str, str, str]]:
    """(env name, property name, default, description) for every option of a table."""
    return [(o.env, o.property, o.default, o.description) for o in native_table(kind)]
