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
from setuptools.command.build_py import build_py

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


def _load_jvm_build():
    """aeron_async/spark/jvm/build.py, loaded by path (standard library only; the package is not built yet)."""
    import importlib.util

    path = pathlib.Path(__file__).resolve().parent / "aeron_async" / "spark" / "jvm" / "build.py"
    spec = importlib.util.spec_from_file_location("_aeron_async_jvm_build", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithJvmConnector(build_py):
    """build_py, then the Spark JVM connector's jar into the built package where a JDK and pyspark's
    jars are at hand (docs/spark.md, "The JVM connector"); without them the Python source serves."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # ./dev setup builds it in the source tree
        jvm = _load_jvm_build()
        try:
            jvm.build(pathlib.Path(self.build_lib) / "aeron_async" / "spark" / "jvm",
                      repo=pathlib.Path(__file__).resolve().parent)
        except jvm.Unavailable as exc:
            print(f"aeron_async: {exc}", file=sys.stderr)


setup(
    version=_version(),
    cmdclass={"build_py": BuildPyWithJvmConnector},
    # PEP 561: the package is typed, and the native modules have stubs
    package_data={"aeron_async": ["py.typed", "*.pyi"],
                  # the JVM connector's sources (and, where built, its jar and native library)
                  "aeron_async.spark.jvm": ["src/aeron/*.java", "src/aeron/spark/*.java", "native/*.c",
                                            "*.jar", "lib/*.so"]},
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
