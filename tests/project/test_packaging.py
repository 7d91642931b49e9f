"""A plain `pip install` gives a working package: the wheel built from this checkout is installed
without extras into a fresh virtual environment in a temporary directory (so the checkout cannot
shadow it), and the README's examples and the command line run there, on every CPython from 3.11
up that this machine has. A version the machine lacks is skipped with "not tested" as the reason,
never counted as passed."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import aeron_async

from conftest import REPO, new_aeron_dir, readme_example

# every CPython from 3.11 up that has been released; versions this machine lacks are reported as skipped
VERSIONS = ("3.11", "3.12", "3.13", "3.14")
RUNTIME_DEPENDENCIES = {"cffi", "attrs", "anyio"}
PIP_TIMEOUT = 600


def find_cpython(version: str) -> str | None:
    """A CPython `version` interpreter with venv and ensurepip: on PATH, in pyenv's versions, or in
    /usr(/local)/bin."""
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which(f"python{version}"),
                  *sorted(glob.glob(f"{pyenv_root}/versions/{version}.*/bin/python{version}"), reverse=True),
                  f"/usr/local/bin/python{version}", f"/usr/bin/python{version}"]
    probe = "import sys, venv, ensurepip; print(sys.implementation.name, '%d.%d' % sys.version_info[:2])"
    for candidate in candidates:
        if not candidate or not os.access(candidate, os.X_OK):
            continue
        result = subprocess.run([candidate, "-c", probe], capture_output=True, text=True, timeout=60)
        if result.returncode == 0 and result.stdout.split() == ["cpython", version]:
            return candidate
    return None


def clean_env(venv: Path, **extra: str) -> dict[str, str]:
    """The environment of a user who activated `venv`: nothing points into the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
                                                             "PYTHONSTARTUP", "PYTHONSAFEPATH")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env.update(extra)
    return env


@dataclass
class Installed:
    version: str
    venv: Path
    wheel: Path
    workdir: Path

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def run(self, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=self.workdir, env=clean_env(self.venv, **env), capture_output=True,
                              text=True, timeout=timeout)


@pytest.fixture(scope="session")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's files as `pip install <checkout>` sees them (tracked and untracked, not ignored),
    copied so builds leave the checkout alone."""
    dest = tmp_path_factory.mktemp("source") / "aeron_async"
    listed = subprocess.run(["git", "-C", REPO, "ls-files", "-co", "--exclude-standard", "-z"], capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        for name in listed.stdout.decode().split("\0"):
            src = os.path.join(REPO, name)
            if name and os.path.islink(src):   # the include root's links to protocols/ and media/
                os.makedirs(dest / os.path.dirname(name), exist_ok=True)
                os.symlink(os.readlink(src), dest / name)
            elif name and os.path.isfile(src):
                os.makedirs(dest / os.path.dirname(name), exist_ok=True)
                shutil.copy2(src, dest / name)
    else:  # not a git checkout (an unpacked sdist, say)
        shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.so", "*.egg-info",
                                                                   "__pycache__", ".pytest_cache", ".hypothesis"))
    return dest


@pytest.fixture(scope="module", params=VERSIONS)
def installed(request: pytest.FixtureRequest, source_copy: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    version = request.param
    python = find_cpython(version)
    if python is None:
        pytest.skip(f"CPython {version} is not on this machine: not tested")
    root = tmp_path_factory.mktemp(f"py{version}")
    wheels = root / "wheels"
    build = subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source_copy)],
                           capture_output=True, text=True, timeout=PIP_TIMEOUT)
    assert build.returncode == 0, f"building the wheel with {python} failed:\n{build.stdout}{build.stderr}"
    (wheel,) = wheels.glob("aeron_async-*.whl")
    venv = root / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=120)
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                             capture_output=True, text=True, timeout=PIP_TIMEOUT)
    assert install.returncode == 0, f"pip install {wheel.name} failed:\n{install.stdout}{install.stderr}"
    workdir = root / "work"
    workdir.mkdir()
    yield Installed(version, venv, wheel, workdir)


def test_the_installed_package_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    result = installed.run(installed.python, "-c", "import aeron_async, sys; print(aeron_async.__file__); "
                           "print(sys.version_info[0], sys.version_info[1])")
    assert result.returncode == 0, result.stderr
    location, version = result.stdout.splitlines()
    assert location.startswith(str(installed.venv)), location
    assert version.replace(" ", ".") == installed.version


def test_the_wheel_holds_every_package_of_the_checkout(installed: Installed) -> None:
    packages = {os.path.relpath(os.path.dirname(p), REPO).replace(os.sep, ".")
                for p in glob.glob(os.path.join(REPO, "aeron_async", "**", "__init__.py"), recursive=True)}
    with zipfile.ZipFile(installed.wheel) as wheel:
        in_wheel = {os.path.dirname(n).replace("/", ".") for n in wheel.namelist() if n.endswith("/__init__.py")}
        native = [n for n in wheel.namelist() if n.startswith("aeron_async/_") and n.endswith(".so")]
    assert packages and packages <= in_wheel, f"left out of the wheel: {sorted(packages - in_wheel)}"
    assert len(native) == 2, native  # the cffi core and _speedups


def test_metadata_says_what_is_supported(installed: Installed) -> None:
    script = ("import importlib.metadata as m, json; d = m.metadata('aeron_async'); "
              "print(json.dumps({'requires_python': d['Requires-Python'], 'classifiers': d.get_all('Classifier'), "
              "'requires': d.get_all('Requires-Dist'), 'version': d['Version']}))")
    result = installed.run(installed.python, "-c", script)
    assert result.returncode == 0, result.stderr
    import json

    meta = json.loads(result.stdout)
    assert meta["requires_python"] == ">=3.11"
    assert "Operating System :: POSIX :: Linux" in meta["classifiers"]
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in meta["classifiers"]
    unconditional = {r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
                     for r in meta["requires"] if "extra ==" not in r}
    assert unconditional == RUNTIME_DEPENDENCIES


def test_every_module_imports_or_names_its_extra(installed: Installed) -> None:
    """What the package imports at run time is a declared dependency: every module imports with the
    dependencies alone, but for a module that needs an extra, whose missing module is one the extra
    provides."""
    script = """
import importlib, pkgutil, aeron_async
from aeron_async.extras import extra_of_module
for info in pkgutil.walk_packages(aeron_async.__path__, "aeron_async."):
    if info.name.endswith(".__main__"):  # runs the command line; its imports are the cli's
        continue
    try:
        importlib.import_module(info.name)
        print("ok", info.name)
    except ImportError as exc:
        print("extra" if extra_of_module(exc.name or "") else "MISSING", info.name, exc.name)
"""
    result = installed.run(installed.python, "-c", script)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith("MISSING")], result.stdout
    assert "ok aeron_async.aio" in lines and "ok aeron_async.client" in lines


def test_readme_async_example_runs(installed: Installed) -> None:
    aeron_dir = new_aeron_dir()
    try:
        result = installed.run(installed.python, "-c", readme_example("anyio.run(main)"), timeout=60,
                               AERON_DIR=aeron_dir)
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("b'hello' "), result.stdout


def test_readme_sync_example_runs(installed: Installed) -> None:
    code = readme_example("MediaDriver.launch")
    demo_dir = "/dev/shm/aeron-demo"
    assert demo_dir in code  # the directory the example names, removed after the run
    existed = os.path.exists(demo_dir)
    try:
        result = installed.run(installed.python, "-c", code, timeout=60)
    finally:
        if not existed:
            shutil.rmtree(demo_dir, ignore_errors=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("b'hello' "), result.stdout


def test_command_line_help(installed: Installed) -> None:
    result = installed.run(str(installed.venv / "bin" / "aeron-async"), "--help")
    assert result.returncode == 0, result.stderr
    for command in ("driver", "stat", "errors", "bench"):
        assert command in result.stdout


@pytest.mark.parametrize("entry", [["aeron-async", "bench", "--quick"], ["python", "-m", "aeron_async.bench", "--quick"]],
                         ids=["aeron-async-bench", "python-m-bench"])
def test_bench_without_its_extra_names_the_extra_in_one_line(installed: Installed, entry: list[str]) -> None:
    result = installed.run(str(installed.venv / "bin" / entry[0]), *entry[1:])
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "pip install 'aeron_async[bench]'" in lines[0] and "rich" in lines[0], lines[0]


def test_this_interpreter_is_among_those_tested() -> None:
    """The suite's own interpreter is a supported version, so at least one row above runs."""
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in VERSIONS


def test_stat_and_exporter_without_the_monitor_extra(installed: Installed) -> None:
    """`stat --json` (and `--once`, the same code without JSON) needs no extra; the exporter names the
    'monitor' extra in one line."""
    result = installed.run(str(installed.venv / "bin" / "aeron-async"), "exporter", "--port", "0")
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "pip install 'aeron_async[monitor]'" in lines[0] and "prometheus" in lines[0], lines
    from conftest import TEST_DRIVER_SETTINGS

    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS):
        stat = installed.run(str(installed.venv / "bin" / "aeron-async"), "stat", "--aeron-dir", aeron_dir, "--json",
                             "--type", "system")
        assert stat.returncode == 0, stat.stderr
        assert any(c["label"] == "Bytes sent" for c in json.loads(stat.stdout)["counters"])
