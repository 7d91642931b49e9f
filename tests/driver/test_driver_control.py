"""Driver control (docs/api.md, "Driver control"): `aeron-async driver --terminate` sends Aeron's TERMINATE_DRIVER;
a driver stops cleanly (CnC marked closed, clients told) only when its termination validator allows
it, and the requester hears a refusal; `aeron-async driver --info` tells what a driver runs with."""

from __future__ import annotations

import os
import subprocess
import threading
from typing import Any

import pytest

import aeron_async
from aeron_async.driver_control import OPTIONS_FILE, driver_info, read_driver_options, request_termination
from aeron_async.errors import TerminationRefusedError
from aeron_async.monitor import CncReader
from conftest import PYTHON, TEST_DRIVER_SETTINGS, driver_timeout_raised, python_env, start_driver, stop_driver, wait_for


def driver_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "aeron_async", "driver", *args], env=python_env(), capture_output=True,
                          text=True, timeout=60)


def test_terminate_with_the_token_stops_a_standalone_driver_cleanly(aeron_dir: str) -> None:
    proc = start_driver(aeron_dir, "-o", "AERON_DRIVER_TERMINATION_VALIDATOR=token",
                        "-o", "AERON_DRIVER_TERMINATION_TOKEN=s3cret", "-o", "AERON_DIR_DELETE_ON_SHUTDOWN=false")
    try:
        info = driver_cli("--info", "--aeron-dir", aeron_dir)
        assert info.returncode == 0, info.stderr
        assert f"pid         {proc.pid}\n" in info.stdout and aeron_async.__version__ in info.stdout
        assert "aeron.driver.termination.validator" in info.stdout and "= token" in info.stdout
        assert "s3cret" not in info.stdout and "aeron.driver.termination.token" in info.stdout
        assert read_driver_options(aeron_dir)["aeron.threading.mode"] == "SHARED"

        with aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client:
            pub = client.add_publication("aeron:ipc", 5)
            refused = driver_cli("--terminate", "--aeron-dir", aeron_dir, "--token", "not-the-token")
            assert refused.returncode == 1
            assert "refused to terminate" in refused.stderr and "token does not match" in refused.stderr
            assert proc.poll() is None and pub.offer(b"still here") != aeron_async.CLOSED

            done = driver_cli("--terminate", "--aeron-dir", aeron_dir, "--token", "s3cret")
            assert done.returncode == 0, done.stderr
            assert f"the driver in {aeron_dir} has terminated" in done.stdout
            out, _ = proc.communicate(timeout=15)
            assert proc.returncode == 0 and "terminated by a TERMINATE_DRIVER request" in out, out
            # clients told: the client's next call says its driver has gone
            wait_for(lambda: driver_timeout_raised(lambda: pub.offer(b"x")), timeout=5, what="the client told")
        with CncReader(aeron_dir) as reader:
            assert reader.info()["driver_heartbeat_age_ms"] == -1  # the CnC file marked closed
        assert not aeron_async.is_driver_active(aeron_dir)
    finally:
        if proc.poll() is None:
            stop_driver(proc)


def test_termination_tokens_from_files_and_the_environment_stay_off_command_lines(aeron_dir: str, tmp_path) -> None:
    """docs/security.md, Secrets on the command line: the driver reads its token from
    AERON_DRIVER_TERMINATION_TOKEN_FILE, the requester from --token-file, $AERON_DRIVER_TERMINATION_TOKEN
    or the file $AERON_DRIVER_TERMINATION_TOKEN_FILE names; no command line shows it."""
    secret = "f1le-s3cret"
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    token_file.chmod(0o600)
    proc = start_driver(aeron_dir, "-o", "AERON_DRIVER_TERMINATION_VALIDATOR=token",
                        "-o", f"AERON_DRIVER_TERMINATION_TOKEN_FILE={token_file}")
    try:
        with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
            assert secret.encode() not in f.read()
        assert secret not in "".join(read_driver_options(aeron_dir).values())
        assert secret not in driver_cli("--info", "--aeron-dir", aeron_dir).stdout
        # the requester: a wrong token, from the environment or from a file, is refused, so the driver did read its
        # file
        refused = subprocess.run([PYTHON, "-m", "aeron_async", "driver", "--terminate", "--aeron-dir", aeron_dir],
                                 env=dict(python_env(), AERON_DRIVER_TERMINATION_TOKEN="wrong"),
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1 and "token does not match" in refused.stderr, refused.stderr
        wrong = tmp_path / "wrong"
        wrong.write_text("not-it\n")
        # the requester holds its file to the driver's rule (docs/security.md, Files of secrets)
        refused = driver_cli("--terminate", "--aeron-dir", aeron_dir, "--token-file", str(wrong))
        assert refused.returncode == 1 and "has mode 0644, open to its group or others" in refused.stderr, \
            refused.stderr
        wrong.chmod(0o600)
        refused = driver_cli("--terminate", "--aeron-dir", aeron_dir, "--token-file", str(wrong))
        assert refused.returncode == 1 and "token does not match" in refused.stderr, refused.stderr
        both = driver_cli("--terminate", "--aeron-dir", aeron_dir, "--token", "x", "--token-file", str(token_file))
        assert both.returncode == 1 and "not both" in both.stderr, both.stderr
        empty = tmp_path / "empty"
        empty.write_text("")
        empty.chmod(0o600)
        result = driver_cli("--terminate", "--aeron-dir", aeron_dir, "--token-file", str(empty))
        assert result.returncode == 1 and f"the token file: '{empty}' is empty" in result.stderr, result.stderr
        assert proc.poll() is None
        # the right one from the file $AERON_DRIVER_TERMINATION_TOKEN_FILE names
        env = dict(python_env(), AERON_DRIVER_TERMINATION_TOKEN_FILE=str(token_file))
        env.pop("AERON_DRIVER_TERMINATION_TOKEN", None)
        done = subprocess.run([PYTHON, "-m", "aeron_async", "driver", "--terminate", "--aeron-dir", aeron_dir],
                              env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        out, _ = proc.communicate(timeout=15)
        assert proc.returncode == 0 and "terminated by a TERMINATE_DRIVER request" in out, out
    finally:
        if proc.poll() is None:
            stop_driver(proc)


def test_terminate_with_a_token_file_stops_an_embedded_driver(aeron_dir: str, tmp_path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("em-s3cret\r\n")
    token_file.chmod(0o600)
    settings = dict(TEST_DRIVER_SETTINGS, driver_termination_validator="token",
                    driver_termination_token_file=str(token_file))
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        # the requester waits for the driver to stop, which its owner does once it was asked
        requester = subprocess.Popen([PYTHON, "-m", "aeron_async", "driver", "--terminate", "--aeron-dir", aeron_dir,
                                      "--token-file", str(token_file)], env=python_env(), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        try:
            assert driver.wait_for_termination(timeout=20)
        finally:
            driver.close()
            out, _ = requester.communicate(timeout=30)
    assert requester.returncode == 0, out


def test_a_token_and_a_token_file_that_differ_are_refused(aeron_dir: str, tmp_path: Any) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("from-the-file\n")
    token_file.chmod(0o600)
    settings = dict(TEST_DRIVER_SETTINGS, driver_termination_validator="token", driver_termination_token="t",
                    driver_termination_token_file=str(token_file))
    with pytest.raises(aeron_async.ConfigurationError, match="are both set; set one of them"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings)


def test_terminate_is_refused_by_default(driver: aeron_async.MediaDriver) -> None:
    result = driver_cli("--terminate", "--aeron-dir", driver.aeron_dir, "--token", "anything")
    assert result.returncode == 1
    assert "refused to terminate" in result.stderr and "termination is disabled" in result.stderr, result.stderr
    assert "AERON_DRIVER_TERMINATION_VALIDATOR" in result.stderr
    assert not driver.termination_requested and aeron_async.is_driver_active(driver.aeron_dir)
    with pytest.raises(TerminationRefusedError, match="termination is disabled"):
        request_termination(driver.aeron_dir, b"", timeout=5)  # a second refusal is heard too
    with CncReader(driver.aeron_dir) as reader:
        assert [e.count for e in reader.errors() if e.text.startswith("TERMINATE_DRIVER refused")] == [2]


def test_an_embedded_driver_that_allows_termination_is_closed_by_its_owner(aeron_dir: str) -> None:
    settings = dict(TEST_DRIVER_SETTINGS, driver_termination_validator="allow")
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        info = driver_info(aeron_dir)
        assert info.pid == os.getpid() and info.active and info.options["aeron.driver.termination.validator"] == "allow"
        failures: list[BaseException] = []

        def requester() -> None:
            try:
                request_termination(aeron_dir, None, timeout=10)
            except BaseException as exc:  # reported below
                failures.append(exc)

        thread = threading.Thread(target=requester)
        thread.start()
        assert driver.wait_for_termination(timeout=10)
        driver.close()
        thread.join(timeout=15)
        assert not thread.is_alive() and failures == []
    assert not driver.termination_requested


@pytest.mark.parametrize("options, message", [
    ({"driver_termination_validator": "token"}, "needs AERON_DRIVER_TERMINATION_TOKEN"),
    ({"driver_termination_token": "t"}, "AERON_DRIVER_TERMINATION_VALIDATOR=deny does not use it"),
    ({"driver_termination_validator": "sometimes"}, "use deny (the default), allow or token"),
    ({"driver_termination_validator": "token", "driver_termination_token_file": "/nonexistent/token"},
     "AERON_DRIVER_TERMINATION_TOKEN_FILE: cannot open '/nonexistent/token'"),
    ({"driver_termination_validator": "token", "driver_termination_token_file": "/dev/null"},
     "is not a regular file"),
])
def test_termination_options_are_checked(aeron_dir: str, options: dict[str, str], message: str) -> None:
    with pytest.raises(aeron_async.ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **dict(TEST_DRIVER_SETTINGS, **options))


def test_terminate_or_info_without_a_driver_says_so(aeron_dir: str) -> None:
    for args in (("--terminate",), ("--info",)):
        result = driver_cli(*args, "--aeron-dir", aeron_dir)
        assert result.returncode == 1 and aeron_dir in result.stderr, result.stderr
    assert not os.path.exists(os.path.join(aeron_dir, OPTIONS_FILE))
