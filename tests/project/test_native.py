"""The C unit and stress tests (ring buffer, broadcast buffer, counters, error log, log buffer
appenders with many threads, URI parsing, idle strategies), built and run under ASan + UBSan.
This is where `./dev test` runs the native suite (once); `./dev native-test` runs it alone."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from conftest import REPO

NATIVE = os.path.join(REPO, "_native")


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("cc") is None,
                    reason="needs make and a C compiler; ./dev test installs them")
def test_native_suite_under_sanitizers() -> None:
    # the test binaries build in parallel (one job per core: ~half the time on CI's 2 cores); they run one by one
    jobs = f"-j{max(1, os.cpu_count() or 1)}"
    result = subprocess.run(["make", "-s", jobs, "-C", NATIVE, "test"], capture_output=True, text=True, timeout=1800)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "== " in output  # at least one native test binary ran
    assert "ERROR: AddressSanitizer" not in output and "runtime error" not in output


@pytest.mark.skipif(os.environ.get("AERON_ASYNC_UNDER_SANITIZERS") == "1", reason="already running under sanitizers")
@pytest.mark.timeout(1200)
def test_python_suite_under_sanitizers(tmp_path) -> None:
    """Build the extension with ASan + UBSan and run the Python tests that drive the native core
    hardest (threads, processes, property-based fragmentation, failures) against it."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("needs gcc for the sanitizer runtime; ./dev test installs it")
    env = dict(os.environ, AERON_ASYNC_SANITIZE="1")
    build = subprocess.run([sys.executable, os.path.join(NATIVE, "build_ffi.py"), str(tmp_path / "build")],
                           env=env, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    package = tmp_path / "pkg" / "aeron_async"
    shutil.copytree(os.path.join(REPO, "aeron_async"), package,
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    for built in (tmp_path / "build" / "aeron_async").glob("_aeron_native*.so"):
        shutil.copy(built, package)
    # the CPython message path too (it links against nothing: the native core is reached through
    # aa_fastpath_api's table)
    speedups = package / ("_speedups" + sysconfig.get_config_var("EXT_SUFFIX"))
    compiled = subprocess.run(
        [gcc, "-shared", "-fPIC", "-std=gnu11", "-O1", "-g", "-Wall", "-Werror", "-fsanitize=address,undefined",
         "-fno-omit-frame-pointer", f"-I{sysconfig.get_paths()['include']}", f"-I{os.path.join(NATIVE, 'src')}",
         *sorted(glob.glob(os.path.join(NATIVE, "python", "*.c"))), "-o", str(speedups)],
        capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr

    def runtime(name: str) -> str:
        return subprocess.run([gcc, f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()

    env = dict(os.environ)
    env.update(
        LD_PRELOAD=f"{runtime('libasan.so')}:{runtime('libubsan.so')}",
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
        PYTHONPATH=str(tmp_path / "pkg"),
        AERON_ASYNC_UNDER_SANITIZERS="1",
    )
    tests = os.path.join(REPO, "tests")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", REPO, "-k",
         # what drives the native core; not the long runs between processes and namespaces (they
         # check the network, and their native paths are covered by the tests that do run: multicast,
         # flow control, MDC and cubic over loopback), nor the wheel builds of test_packaging, nor the
         # Spark tests (a JVM; their native part, aa_columns.c, has its own C test)
         "not million and not native and not between_driver_processes and not namespaces and not veth "
         "and not netns and not flow_control_group and not python_group and not packaging "
         "and not bench and not examples and not spark and not kubernetes", tests],
        cwd=tests, env=env, capture_output=True, text=True, timeout=1200,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "AddressSanitizer" not in output and "runtime error" not in output, output[-6000:]
    loaded = subprocess.run(
        [sys.executable, "-c", "import aeron_async._aeron_native as n, aeron_async._speedups as s; "
         "print(n.__file__); print(s.__file__)"], env=env, capture_output=True, text=True, cwd=tests).stdout
    assert all(line.startswith(str(package)) for line in loaded.split()) and len(loaded.split()) == 2, loaded
