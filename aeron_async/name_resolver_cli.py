"""`aeron-async driver --name-resolver [NAME=]module:Class`: registers a name resolver written in
Python and makes it the driver's resolver."""

from __future__ import annotations

import os
import sys


def register_from_cli(spec: str, overrides: dict[str, str]) -> int:
    """Registers the class `spec` names and sets `overrides["name_resolver_supplier"]`; returns 0, or
    the exit status after printing what to fix."""
    from .name_resolver import load_factory
    from .strategies import register_name_resolver

    name, sep, target = spec.partition("=")
    if not sep:
        name, target = "", spec
    name, target = name.strip(), target.strip()
    if sep and (not name or not target):
        print(f"aeron-async driver: --name-resolver expects [NAME=]module:Class, got {spec!r}", file=sys.stderr)
        return 2
    chosen = overrides.get("name_resolver_supplier") or os.environ.get("AERON_NAME_RESOLVER_SUPPLIER") or None
    try:
        factory = load_factory(target)
        if not name:
            name = f"{factory.__module__}.{factory.__qualname__}"
        if chosen is not None and chosen != name:
            print(f"aeron-async driver: --name-resolver {spec} names resolver {name!r}, but "
                  f"AERON_NAME_RESOLVER_SUPPLIER is {chosen!r}: give one of them", file=sys.stderr)
            return 2
        register_name_resolver(name, factory)
    except Exception as exc:  # the message says what to fix
        print(f"aeron-async driver: --name-resolver {spec}: {exc}", file=sys.stderr)
        return 1
    overrides["name_resolver_supplier"] = name
    return 0
