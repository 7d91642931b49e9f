"""Builds the native extensions; all other metadata lives in pyproject.toml.

- aeron_async._aeron_native: the C core (driver, client, media, protocols) through cffi
  (_native/build_ffi.py).
- aeron_async._speedups: the CPython side of the message path (_native/python/aa_speedups.c, and
  aa_poll.c for the fragment-handler polls); it
  links none of the core and calls it through the table the cffi module hands it.
"""

import os

from setuptools import Extension, setup

_flags = ["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror", "-Wno-missing-field-initializers",
          "-Wno-unused-parameter", "-D_GNU_SOURCE", "-fvisibility=hidden"]
if os.environ.get("AERON_ASYNC_SANITIZE"):
    _flags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]

setup(
    cffi_modules=["_native/build_ffi.py:ffibuilder"],
    ext_modules=[
        Extension(
            "aeron_async._speedups",
            sources=["_native/python/aa_speedups.c", "_native/python/aa_poll.c"],
            include_dirs=["_native/include"],
            depends=["_native/python/aa_speedups.h", "_native/src/client/aa_fastpath.h",
                     "_native/include/aeron_async.h"],
            extra_compile_args=_flags,
            extra_link_args=["-fsanitize=address,undefined"] if os.environ.get("AERON_ASYNC_SANITIZE") else [],
        )
    ],
)
