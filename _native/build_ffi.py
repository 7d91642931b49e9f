"""cffi build script (out-of-line API mode) for the aeron_async native core.

The cdef is the block between the CDEF markers of the one public header,
`_native/src/aeron_async.h`, plus the AA_ERROR_CODE_* constants of `_native/src/util/aa_error.h`
(values filled in by the C compiler; aeron_async/errors.py reads them); the C sources are every .c file of `_native/src`, `media` and
`protocols`. setuptools runs this through `cffi_modules` during `pip install`. Building first runs
`_native/gen_codecs.py`, which writes the archive codecs' layouts from their SBE schemas
(`protocols/*.xml`).

Environment:
  AERON_ASYNC_SANITIZE=1   build with ASan + UBSan (run Python with LD_PRELOAD=$(gcc -print-file-name=libasan.so))
  AERON_ASYNC_DEBUG=1      build with -O0 -g
"""

import importlib.util
import os
import pathlib
import re

from cffi import FFI

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE_ROOT = ROOT / "_native" / "src"   # the one include root (_native/layers.py)
HEADER = INCLUDE_ROOT / "aeron_async.h"
ERROR_HEADER = ROOT / "_native" / "src" / "util" / "aa_error.h"


def _gen_codecs():
    """_native/gen_codecs.py, beside this file (loaded by path: cffi runs this script by exec)."""
    spec = importlib.util.spec_from_file_location("aa_gen_codecs", ROOT / "_native" / "gen_codecs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cdef_block(header: pathlib.Path) -> str:
    """The text between a header's CDEF BEGIN/END markers."""
    match = re.search(r"/\* CDEF BEGIN \*/(.*)/\* CDEF END \*/", header.read_text(), re.S)
    if match is None:
        raise RuntimeError(f"{header} has no CDEF BEGIN/END block")
    return match.group(1)


def cdef_lines(header: pathlib.Path) -> list[str]:
    # A line `/* CDEF INCLUDE path */` in a header's block stands for the CDEF block of that header
    # (named from the include root, as an #include names it), itself expanded so: a module whose types
    # and functions are part of the API (the archive codecs, catalog and segments) declares them once,
    # in its own header, and the codecs' header splices in the one generated from the schemas.
    lines = []
    for line in cdef_block(header).splitlines():
        included = re.fullmatch(r"\s*/\* CDEF INCLUDE (\S+) \*/\s*", line)
        lines += cdef_lines(INCLUDE_ROOT / included.group(1)) if included else [line]
    return lines


def cdef_text() -> str:
    lines = [line for line in cdef_lines(HEADER) if line.strip() not in ("#if AA_CDEF", "#endif")]
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
            # _native/src/media and _native/src/protocols stand for the top-level folders (links in a
            # checkout, copies in an unpacked sdist): each file is compiled once, from the top level
            if folder == "_native/src" and path.relative_to(ROOT / folder).parts[0] in ("media", "protocols"):
                continue
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
    # the archive codecs' layouts, generated from their SBE schemas before anything reads the headers
    _gen_codecs().write()
    builder = FFI()
    builder.cdef(cdef_text())
    builder.set_source(
        "aeron_async._aeron_native",
        '#include "aeron_async.h"\n',
        sources=sources(absolute_sources),
        include_dirs=[str(INCLUDE_ROOT)],
        extra_compile_args=compile_args(),
        extra_link_args=["-pthread"] + (["-fsanitize=address,undefined"] if os.environ.get("AERON_ASYNC_SANITIZE") else []),
        libraries=["m"],
    )
    return builder


STUB = ROOT / "aeron_async" / "_aeron_native.pyi"

_LIB_CLASS = "class Lib:"


def stub_head() -> str:
    """The stub's hand-written part: everything before its `class Lib:` line (the docstring, the
    CData, CBuffer and FFI classes, `ffi` and `lib`). It is kept in the stub itself, its one place;
    the generator rewrites only the Lib class below it."""
    text = STUB.read_text()
    at = text.find(f"\n{_LIB_CLASS}\n")
    if at < 0:
        raise RuntimeError(f"{STUB} has no line {_LIB_CLASS!r}")
    return text[:at]


# C scalar types as Python sees them through cffi
_FLOAT_TYPES = {"float", "double"}
_BOOL_TYPES = {"bool", "_Bool"}
_STDINT = ("int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
           "intptr_t", "uintptr_t", "size_t", "ssize_t")


def stub_text() -> str:
    """The .pyi of the compiled module: every function of the cdef with its argument names and the
    Python types cffi converts to and from, and every integer constant."""
    from pycparser import c_ast, c_parser

    cdef = cdef_text()
    constants = re.findall(r"^\s*#define\s+([A-Z][A-Z0-9_]*)\s", cdef, re.M)
    text = re.sub(r"/\*.*?\*/", "", cdef, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    prelude = "typedef int bool;\n" + "".join(f"typedef int {name};\n" for name in _STDINT)
    ast = c_parser.CParser().parse(prelude + text)

    def scalar(node: c_ast.Node) -> str | None:
        """The Python type of a by-value C type, None for a pointer, array or struct."""
        if isinstance(node, c_ast.TypeDecl) and isinstance(node.type, c_ast.IdentifierType):
            names = set(node.type.names)
            if names == {"void"}:
                return "None"
            if names & _BOOL_TYPES:
                return "bool"
            if names & _FLOAT_TYPES:
                return "float"
            if names == {"char"}:
                return "bytes"
            if names & {"int", "long", "short", "unsigned", "signed", *_STDINT}:
                return "int"
        return None

    def is_char_pointer(node: c_ast.Node) -> bool:
        return (isinstance(node, c_ast.PtrDecl) and isinstance(node.type, c_ast.TypeDecl)
                and isinstance(node.type.type, c_ast.IdentifierType)
                and node.type.type.names in (["char"], ["uint8_t"], ["int8_t"]))  # cffi passes bytes to all three

    lines = [stub_head(), _LIB_CLASS]
    for name in constants:
        lines.append(f"    {name}: int")
    for decl in ast.ext:
        if not isinstance(decl, c_ast.Decl) or not isinstance(decl.type, c_ast.FuncDecl):
            continue
        func = decl.type
        params = ["self"]
        for i, param in enumerate(func.args.params if func.args else []):
            if isinstance(param, c_ast.Typename) and scalar(param.type) == "None":
                continue  # (void)
            kind = scalar(param.type)
            if kind is None:
                kind = "bytes | CData" if is_char_pointer(param.type) else "CData"
            params.append(f"{param.name or f'arg{i}'}: {kind}")
        result = scalar(func.type) or "CData"
        lines.append(f"    def {decl.name}({', '.join(params)}, /) -> {result}: ...")
    return "\n".join(lines) + "\n"


ffibuilder = make_builder()

if __name__ == "__main__":
    # Build out of tree: python _native/build_ffi.py OUTDIR  (the module lands in OUTDIR/aeron_async/)
    # Rewrite the type stub of the module: python _native/build_ffi.py --stub
    import sys

    if sys.argv[1:] == ["--stub"]:
        STUB.write_text(stub_text())
        sys.exit(0)
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/ffi").resolve()
    out.mkdir(parents=True, exist_ok=True)
    make_builder(absolute_sources=True).compile(tmpdir=str(out), verbose=False)
