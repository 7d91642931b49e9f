"""Builds the JVM connector (docs/spark.md, "The JVM connector"): `aeron-async-spark.jar` beside this
file, holding the Java classes of src/ compiled with the JDK's `javac` against the jars inside the
installed pyspark (no Maven, no network) and the native library libaeron_async_spark.so (the JNI
shim in native/ with the C archive code it reads catalogs and segment files through and the C client
the sink publishes through, compiled with
the JDK's include directory).

    python -m aeron_async.spark.jvm.build [--force]

`./dev setup` runs it after installing the package, and setup.py when a wheel is built where
pyspark and a JDK are present. Without a JDK (no javac) it builds nothing and says why: the Python
source serves. Standard library only, so setup.py can load it by path before the package exists.
"""

from __future__ import annotations

import argparse
import ast
import glob
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
JAR_NAME = "aeron-async-spark.jar"
LIBRARY_NAME = "libaeron_async_spark.so"
# beside the jar, in a folder that is no Python package: a .so in the package itself would look like an
# extension module to importers and to pkgutil's walk
LIBRARY_DIR = "lib"
NATIVE_RESOURCE = "aeron/spark/native/" + LIBRARY_NAME
# the C archive code the shim reads the catalog and segment files through (paths under _native/src)
C_SOURCES = ("archive/aa_archive_catalog.c", "archive/aa_archive_checksum.c", "archive/aa_archive_segment.c",
             "protocols/aa_archive_codecs.c", "util/aa_error.c", "util/aa_fs.c",
             # the CnC file's counters (an active recording's rec-pos), read-only
             "client/aa_cnc_reader.c", "concurrent/aa_counters.c", "concurrent/aa_doorbell.c",
             "concurrent/aa_mpsc_rb.c", "concurrent/aa_error_log.c")
# the client the sink publishes through (aa_spark_jni_sink.c): every file of these folders under _native/src
CLIENT_DIRS = ("client", "concurrent", "logbuffer", "util", "uri", "agent")
C_FLAGS = ("-std=gnu11", "-O2", "-g", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror",
           "-Wno-missing-field-initializers", "-Wno-unused-parameter", "-Wno-format-truncation", "-D_GNU_SOURCE",
           "-pthread")


# the archive's error codes (records.py's ArchiveErrorCode) and the Python client's hint for each
# (_session.py's _HINTS): the one source of the texts the remote reads' errors give too
# (archive_errors: a C header generated into the build, read with ast as this file uses no package)
ERROR_SOURCES = ("aeron_async/archive/records.py", "aeron_async/archive/_session.py")
ERRORS_HEADER = "aa_spark_archive_errors_gen.h"


class Unavailable(Exception):
    """What the build needs is missing (no JDK, no pyspark): the Python source serves."""


def java_home() -> pathlib.Path:
    """The JDK javac belongs to (JAVA_HOME when it has javac)."""
    home = os.environ.get("JAVA_HOME")
    if home and (pathlib.Path(home) / "bin" / "javac").exists():
        return pathlib.Path(home)
    javac = shutil.which("javac")
    if javac is None:
        raise Unavailable("no JDK (javac on PATH or in JAVA_HOME): the JVM connector is not built and the Python "
                          "source serves format(\"aeron\")")
    return pathlib.Path(os.path.realpath(javac)).parent.parent


def spark_jars() -> pathlib.Path:
    """The jars inside the installed pyspark (or $SPARK_HOME/jars)."""
    spec = importlib.util.find_spec("pyspark")
    candidates = []
    if spec is not None and spec.origin is not None:
        candidates.append(pathlib.Path(spec.origin).parent / "jars")
    if os.environ.get("SPARK_HOME"):
        candidates.append(pathlib.Path(os.environ["SPARK_HOME"]) / "jars")
    for candidate in candidates:
        if any(candidate.glob("spark-sql_*.jar")):
            return candidate
    raise Unavailable("no pyspark with its jars (pip install 'aeron_async[spark]') and no SPARK_HOME: the JVM "
                      "connector is compiled against Spark's own jars")


def sources(repo: pathlib.Path) -> list[pathlib.Path]:
    java = sorted((HERE / "src").rglob("*.java"))
    src = repo / "_native" / "src"
    c = sorted((HERE / "native").glob("*.c")) + [src / name for name in C_SOURCES]
    c += [path for folder in CLIENT_DIRS for path in sorted((src / folder).glob("*.c")) if path not in c]
    return java + c


def _c_string(text: str) -> str:
    if not text.isascii():
        raise ValueError(f"not ASCII, so not written into the C header: {text!r}")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def archive_errors(repo: pathlib.Path) -> str:
    """The C header of the archive's error codes: AA_SPARK_ARCHIVE_ERROR_<NAME> for each, and
    AA_SPARK_ARCHIVE_ERRORS, {name, the Python client's hint} indexed by code."""
    records, session = (ast.parse((repo / path).read_text()) for path in ERROR_SOURCES)
    codes: dict[str, int] = {}
    for node in records.body:
        if isinstance(node, ast.ClassDef) and node.name == "ArchiveErrorCode":
            for item in node.body:
                if isinstance(item, ast.Assign) and isinstance(item.value, ast.Constant) and \
                        isinstance(item.value.value, int):
                    codes[getattr(item.targets[0], "id")] = item.value.value
    hints: dict[str, str] = {}
    for node in session.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "_HINTS":
            assert isinstance(node.value, ast.Dict)
            for key, value in zip(node.value.keys, node.value.values):
                assert isinstance(key, ast.Attribute) and isinstance(value, ast.Tuple)
                hint = value.elts[1]
                assert isinstance(hint, ast.Constant) and isinstance(hint.value, str)
                hints[key.attr] = hint.value
    if not codes or sorted(codes.values()) != list(range(len(codes))) or set(hints) != set(codes):
        raise ValueError(f"{ERROR_SOURCES}: the error codes and their hints do not match: {codes} {sorted(hints)}")
    by_code = sorted(codes, key=codes.__getitem__)
    lines = [f"/* generated by aeron_async/spark/jvm/build.py from {' and '.join(ERROR_SOURCES)} */",
             *(f"#define AA_SPARK_ARCHIVE_ERROR_{name} {codes[name]}" for name in by_code),
             f"#define AA_SPARK_ARCHIVE_ERROR_COUNT {len(by_code)}",
             "static const char *const AA_SPARK_ARCHIVE_ERRORS[][2] = {",
             *(f"    {{ {_c_string(name)}, {_c_string(hints[name])} }}," for name in by_code), "};", ""]
    return "\n".join(lines)


def build(out_dir: pathlib.Path = HERE, *, repo: pathlib.Path | None = None, force: bool = False) -> pathlib.Path:
    """Builds out_dir/aeron-async-spark.jar (when a source is newer than it, or force); its path."""
    repo = repo or HERE.parents[2]
    if not (repo / "_native" / "src").is_dir():
        raise Unavailable(f"{repo} has no _native/src: the JVM connector is built from the source tree")
    home, jars = java_home(), spark_jars()
    jar = out_dir / JAR_NAME
    inputs = sources(repo) + [repo / path for path in ERROR_SOURCES]
    if not force and jar.exists() and all(path.stat().st_mtime <= jar.stat().st_mtime for path in inputs):
        return jar
    gen = repo / "protocols" / "aa_archive_codecs_gen.h"
    if not gen.exists():
        subprocess.run([sys.executable, "gen_codecs.py"], cwd=repo / "_native", check=True)
    with tempfile.TemporaryDirectory(prefix="aa-jvm-build-") as scratch:
        work = pathlib.Path(scratch)
        library = work / LIBRARY_NAME
        (work / ERRORS_HEADER).write_text(archive_errors(repo))
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, *C_FLAGS, "-I", str(repo / "_native" / "src"), "-I", str(work), "-I", str(home / "include"),
                        "-I", str(home / "include" / "linux"), "-o", str(library),
                        *[str(path) for path in inputs if path.suffix == ".c"], "-Wl,--no-undefined", "-lm"],
                       check=True)
        classes = work / "classes"
        classpath = os.pathsep.join(sorted(glob.glob(str(jars / "*.jar"))))
        subprocess.run([str(home / "bin" / "javac"), "--release", "17", "-nowarn", "-d", str(classes), "-cp",
                        classpath, *[str(path) for path in inputs if path.suffix == ".java"]], check=True)
        out_dir.mkdir(parents=True, exist_ok=True)
        partial = out_dir / (JAR_NAME + ".tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: aeron_async\n\n")
            for path in sorted(classes.rglob("*.class")):
                archive.write(path, path.relative_to(classes).as_posix())
            archive.write(library, NATIVE_RESOURCE)
        os.replace(partial, jar)
        (out_dir / LIBRARY_DIR).mkdir(exist_ok=True)
        shutil.copy2(library, out_dir / LIBRARY_DIR / LIBRARY_NAME)
    return jar


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aeron_async.spark.jvm.build", description="Builds the Spark JVM connector's jar (docs/spark.md, \"The JVM connector\").")
    parser.add_argument("--force", action="store_true", help="rebuild even when the jar is newer than its sources")
    args = parser.parse_args(argv)
    try:
        jar = build(force=args.force)
    except Unavailable as exc:
        print(f"aeron_async: {exc}", file=sys.stderr)
        return 0
    print(jar)
    return 0


if __name__ == "__main__":
    sys.exit(main())
