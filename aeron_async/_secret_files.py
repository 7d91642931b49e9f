"""Files of secrets (docs/security.md, "Files of secrets"): the Python side of the one native
reader (util/aa_fs.h, aa_secret_file_read), so that a token or credentials file is held to the same
rule whoever reads it: a regular file of this user or root, readable by its owner only."""

from __future__ import annotations

from ._ffi import ffi, lib
from .errors import ConfigurationError, check

TOKEN_MAX = 4096   # the driver's termination token buffer (AERON_DRIVER_TERMINATION_TOKEN)


def read_secret_file(what: str, path: str, capacity: int) -> bytes:
    """The bytes of the file of secrets `path` (1 to `capacity` of them); ConfigurationError naming
    `what` (the option), the path and the fix when the file is refused."""
    out = ffi.new("uint8_t[]", capacity)
    try:
        length = check(lib.aa_secret_file_read(what.encode(), path.encode(), out, capacity), ConfigurationError)
        return bytes(ffi.buffer(out, length))
    finally:
        ffi.memmove(out, bytes(capacity), capacity)


def read_secret_first_line(what: str, path: str, capacity: int = TOKEN_MAX) -> str:
    """The first line of the file of secrets `path` (its end not part of it); ConfigurationError when
    the file is refused or the line is empty."""
    out = ffi.new("char[]", capacity)
    try:
        check(lib.aa_secret_file_first_line(what.encode(), path.encode(), out, capacity), ConfigurationError)
        return ffi.string(out).decode()
    finally:
        ffi.memmove(out, bytes(capacity), capacity)
