"""The C unit and stress tests (ring buffer, broadcast buffer, counters, error log, log buffer
appenders with many threads, URI parsing, idle strategies), built and run under ASan + UBSan."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import REPO

NATIVE = os.path.join(REPO, "_native")


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("cc") is None,
                    reason="needs make and a C compiler; ./dev test installs them")
def test_native_suite_under_sanitizers() -> None:
    result = subprocess.run(["make", "-s", "-C", NATIVE, "test"], capture_output=True, text=True, timeout=1800)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "== " in output  # at least one native test binary ran
    assert "ERROR: AddressSanitizer" not in output and "runtime error" not in output
