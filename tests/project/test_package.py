"""The seams between the C core and the Python package: one version, one list of error codes, and
type information that matches the native modules."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import types

import pytest

import aeron_async
from aeron_async import errors
from aeron_async._ffi import lib
from aeron_async.monitor import CncReader
from conftest import REPO


def _load_build_ffi() -> types.ModuleType:
    """The cffi build script (_native/build_ffi.py), which knows the cdef, the error codes and the stub."""
    spec = importlib.util.spec_from_file_location("build_ffi", os.path.join(REPO, "_native", "build_ffi.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_ffi = _load_build_ffi()


def header_version() -> str:
    with open(os.path.join(REPO, "_native", "src", "util", "aa_version.h")) as f:
        match = re.search(r'^#define AA_VERSION_STRING "([^"]+)"$', f.read(), re.M)
    assert match is not None, "aa_version.h lost its AA_VERSION_STRING line"
    return match.group(1)


def test_version_has_one_source(driver: aeron_async.MediaDriver) -> None:
    version = header_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+([.+-]?\w+)*", version), version
    assert aeron_async.__version__ == version
    assert importlib.metadata.version("aeron_async") == version  # the installed (editable) metadata
    # the command line
    cli = subprocess.run([sys.executable, "-m", "aeron_async", "--version"], capture_output=True, text=True,
                         timeout=60)
    assert cli.returncode == 0 and cli.stdout.strip() == f"aeron-async {version}", cli.stdout + cli.stderr
    script = shutil.which("aeron-async", path=os.path.dirname(sys.executable))
    if script is not None:
        out = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60).stdout
        assert out.strip() == f"aeron-async {version}", out
    # the C library: the driver's software-version counter in the CnC file
    with CncReader(driver.aeron_dir) as reader:
        labels = [c.label for c in reader.counters()]
    assert f"aeron_async software: version={version}" in labels, labels


def test_wheel_metadata_takes_the_header_version(tmp_path: os.PathLike[str]) -> None:
    """What a built wheel (or sdist) would carry: setuptools' metadata step, run on the checkout."""
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta; "
         "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    dist_info = result.stdout.strip().splitlines()[-1]
    with open(os.path.join(tmp_path, dist_info, "METADATA")) as f:
        metadata = f.read()
    assert re.search(rf"^Version: {re.escape(header_version())}$", metadata, re.M), metadata[:500]


def test_every_native_error_code_maps_to_an_exception_class() -> None:
    header_names = [name.removeprefix("AA_ERROR_CODE_") for name in build_ffi.error_codes()]
    codes = errors.native_error_codes()
    # every code of aa_error.h reached Python through cffi, with C's value
    assert sorted(codes) == sorted(header_names)
    assert "IMAGE_REJECTED" in codes and "PUBLICATION_REVOKED" in codes
    assert codes["IMAGE_REJECTED"] == 13 and codes["PUBLICATION_REVOKED"] == 14  # reference 9.3
    # every code has a decision in errors.py, no more and no less
    assert sorted(errors.CLASS_BY_CODE_NAME) == sorted(codes)
    for name, code in codes.items():
        assert getattr(errors, name) == code, name  # the module constant is C's value
        for default in (errors.AeronError, errors.RegistrationError):
            exc = errors.error_for(code, "boom", default)
            expected = errors.CLASS_BY_CODE_NAME[name] or default
            assert type(exc) is expected and exc.code == code and str(exc) == "boom", name
    # the native error the core sets is raised as its class
    assert errors.check(0) == 0
    with pytest.raises(errors.ConfigurationError) as info:
        aeron_async.IdleStrategy("no-such-strategy")
    assert info.value.code in (errors.CONFIGURATION, errors.INVALID_ARGUMENT)
    assert lib.aa_errcode() == info.value.code


def test_native_module_stub_is_current() -> None:
    with open(build_ffi.STUB) as f:
        assert f.read() == build_ffi.stub_text(), (
            "aeron_async/_aeron_native.pyi is stale: run `python _native/build_ffi.py --stub`")


def test_native_module_stub_names_what_the_module_has() -> None:
    import ast

    with open(build_ffi.STUB) as f:
        tree = ast.parse(f.read())
    (lib_class,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Lib"]
    stubbed = {n.target.id for n in lib_class.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    stubbed |= {n.name for n in lib_class.body if isinstance(n, ast.FunctionDef)}
    assert stubbed == {name for name in dir(lib) if not name.startswith("__")}


def test_speedups_stub_matches_the_extension() -> None:
    """mypy's stubtest compares aeron_async/_speedups.pyi with the compiled extension (names, kinds,
    parameters, defaults)."""
    pytest.importorskip("mypy")
    result = subprocess.run([sys.executable, "-m", "mypy.stubtest", "aeron_async._speedups"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_package_ships_its_type_information(tmp_path: os.PathLike[str]) -> None:
    """py.typed and the stubs are package data: setuptools' build_py (what a wheel's pure part is
    made of) copies them."""
    result = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("py.typed", "_speedups.pyi", "_aeron_native.pyi", "__init__.py"):
        assert os.path.isfile(os.path.join(tmp_path, "aeron_async", name)), name


# An issue number ("issue" or "issues", then an optional '#', then digits): a reader of the source
# cannot look an issue up, so comments and docs cite the doc section that explains the thing.
ISSUE_NUMBER = re.compile(r"\bissues?\s*#?\s*\d+(?:\s*[/,]\s*\d+)*", re.IGNORECASE)


def test_no_comment_cites_an_issue_number() -> None:
    if not os.path.isdir(os.path.join(REPO, ".git")) and not os.path.isfile(os.path.join(REPO, ".git")):
        pytest.skip("not a git checkout: no list of tracked files")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, timeout=60,
                            check=True).stdout.split("\0")
    sources = [p for p in listed if p.endswith((".py", ".c", ".h", ".md")) or os.path.basename(p) == "Makefile"]
    assert any(p.endswith(".c") for p in sources) and any(p.endswith(".md") for p in sources), sources[:20]
    found = []
    for path in sources:
        with open(os.path.join(REPO, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if match := ISSUE_NUMBER.search(line):
                    found.append(f"{path}:{number}: {match.group(0)!r}")
    assert found == [], "cite the doc section instead of an issue number:\n" + "\n".join(found)


# the examples spell the word as {i} / {I} / {s} so that this file passes its own test
@pytest.mark.parametrize("text, cites", [
    ("# the loss report ({i} 18)", True),
    ("/* driver control ({I} #18, ops) */", True),
    ("comments cite {s} 16/17 here", True),
    ("the options of {i} 14's point 2", True),
    ("an {i} with the 3 receivers", False),
    ("docs/architecture.md, \"Operations\"", False),
])
def test_the_issue_number_pattern(text: str, cites: bool) -> None:
    text = text.format(i="issue", I="Issue", s="issues")
    assert bool(ISSUE_NUMBER.search(text)) is cites


def test_the_documented_submodules_are_attributes_after_import_aeron_async() -> None:
    """`aeron_async.loss.read_loss_report(...)` after a plain `import aeron_async` (docs/api.md), in a
    fresh interpreter, where nothing else has imported the submodule yet."""
    code = ("import sys, aeron_async\n"
            "assert 'aeron_async.loss' not in sys.modules\n"
            "print(aeron_async.loss.read_loss_report.__name__, aeron_async.monitor.CncReader.__name__,\n"
            "      aeron_async.archive.AeronArchive.__name__, aeron_async.stat.__name__, 'loss' in dir(aeron_async))\n"
            "try:\n"
            "    aeron_async.no_such_thing\n"
            "except AttributeError as exc:\n"
            "    print(exc)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), REPO) if p))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["read_loss_report CncReader AeronArchive aeron_async.stat True",
                                          "module 'aeron_async' has no attribute 'no_such_thing'"]
