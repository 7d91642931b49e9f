"""cffi build script (out-of-line API mode) for the aeron_async native core.

The cdef is the block between the CDEF markers of the one public header,
`_native/include/aeron_async.h`, plus the AA_ERROR_CODE_* constants of `_native/src/util/aa_error.h`
(values filled in by the C compiler; aeron_async/errors.py reads them); the C sources are every .c file of `_native/src`, `media` and
`protocols`. setuptools runs this through `cffi_modules` during `pip install`.

Environment:
  AERON_ASYNC_SANITIZE=1   build with ASan + UBSan (run Python with LD_PRELOAD=$(gcc -print-file-name=libasan.so))
  AERON_ASYNC_DEBUG=1      build with -O0 -g
"""

import os
import pathlib
import re

from cffi import FFI

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADER = ROOT / "_native" / "include" / "aeron_async.h"
ERROR_HEADER = ROOT / "_native" / "src" / "util" / "aa_error.h"


def cdef_text() -> str:
    text = HEADER.read_text()
    match = re.search(r"/\* CDEF BEGIN \*/(.*)/\* CDEF END \*/", text, re.S)
    if match is None:
        raise RuntimeError(f"{HEADER} has no CDEF BEGIN/END block")
    lines = [line for line in match.group(1).splitlines() if line.strip() not in ("#if AA_CDEF", "#endif")]
    return "\n".join(lines + error_code_cdef())


def error_codes() -> list[str]:
    """The names of the AA_ERROR_CODE_* constants of aa_error.h, the one list of error codes."""
    names = re.findall(r"^#define (AA_ERROR_CODE_[A-Z0-9_]+) ", ERROR_HEADER.read_text(), re.M)
    if not names:
        raise RuntimeError(f"{ERROR_HEADER} defines no AA_ERROR_CODE_* constants")
    return names


def error_code_cdef() -> list[str]:
    # "..." lets the C compiler supply each value, so Python reads exactly what C uses
    return [f"#define {name} ..." for name in error_codes()]


def sources(absolute: bool = False) -> list[str]:
    found = []
    for folder in ("_native/src", "media", "protocols"):
        for path in sorted((ROOT / folder).rglob("*.c")):
            found.append(str(path if absolute else path.relative_to(ROOT)))
    return found


def compile_args() -> list[str]:
    args = ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-Wno-format-truncation", "-Wno-unused-parameter", "-Wno-missing-field-initializers",
            "-D_GNU_SOURCE", "-pthread", "-fvisibility=hidden"]
    if os.environ.get("AERON_ASYNC_DEBUG"):
        args += ["-O0", "-g"]
    else:
        args += ["-O2", "-g"]
    if os.environ.get("AERON_ASYNC_SANITIZE"):
        args += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    return args


def make_builder(absolute_sources: bool = False) -> FFI:
    builder = FFI()
    builder.cdef(cdef_text())
    builder.set_source(
        "aeron_async._aeron_native",
        '#include "aeron_async.h"\n',
        sources=sources(absolute_sources),
        include_dirs=[str(ROOT / "_native" / "include")],
        extra_compile_args=compile_args(),
        extra_link_args=["-pthread"] + (["-fsanitize=address,undefined"] if os.environ.get("AERON_ASYNC_SANITIZE") else []),
        libraries=["m"],
    )
    return builder


ffibuilder = make_builder()

if __name__ == "__main__":
    # Build out of tree: python _native/build_ffi.py OUTDIR  (the module lands in OUTDIR/aeron_async/)
    import sys

    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/ffi").resolve()
    out.mkdir(parents=True, exist_ok=True)
    make_builder(absolute_sources=True).compile(tmpdir=str(out), verbose=False)
