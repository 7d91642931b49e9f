"""Builds the native extensions and reads the version; all other metadata lives in pyproject.toml.

- aeron_async._aeron_native: the C core (driver, client, media, protocols) through cffi
  (_native/build_ffi.py).
- aeron_async._speedups: the CPython side of the message path (_native/python/aa_speedups.c, and
  aa_poll.c + aa_assembler.c for the fragment-handler polls); it
  links none of the core and calls it through the table the cffi module hands it.

The version has one source, AA_VERSION_STRING in _native/src/util/aa_version.h (pyproject.toml
declares it dynamic): the package metadata, the C library and aeron_async.__version__ all take it
from there.
"""

import os
import pathlib
import re
import sys

from setuptools import Extension, setup

if not sys.platform.startswith("linux"):
    sys.exit(f"aeron_async runs on Linux only (it is built on eventfd, futex_waitv, recvmmsg and /dev/shm); "
             f"this is {sys.platform}")

_flags = ["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror", "-Wno-missing-field-initializers",
          "-Wno-unused-parameter", "-D_GNU_SOURCE", "-fvisibility=hidden"]
if os.environ.get("AERON_ASYNC_SANITIZE"):
    _flags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]


def _version() -> str:
    header = pathlib.Path(__file__).resolve().parent / "_native" / "src" / "util" / "aa_version.h"
    match = re.search(r'^#define AA_VERSION_STRING "([^"]+)"$', header.read_text(), re.M)
    if match is None:
        raise RuntimeError(f"{header} has no line #define AA_VERSION_STRING \"X.Y.Z\"")
    return match.group(1)


setup(
    version=_version(),
    # PEP 561: the package is typed, and the native modules have stubs
    package_data={"aeron_async": ["py.typed", "*.pyi"]},
    cffi_modules=["_native/build_ffi.py:ffibuilder"],
    ext_modules=[
        Extension(
            "aeron_async._speedups",
            sources=["_native/python/aa_speedups.c", "_native/python/aa_poll.c",
                     "_native/python/aa_assembler.c"],
            include_dirs=["_native/src"],
            depends=["_native/python/aa_speedups.h", "_native/python/aa_poll.h",
                     "_native/src/aa_fastpath.h", "_native/src/aeron_async.h"],
            extra_compile_args=_flags,
            extra_link_args=["-fsanitize=address,undefined"] if os.environ.get("AERON_ASYNC_SANITIZE") else [],
        )
    ],
)
