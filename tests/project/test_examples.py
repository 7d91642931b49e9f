"""The runnable examples run (with small counts) and say what they should."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from conftest import REPO, new_aeron_dir, python_env

EXAMPLES = os.path.join(REPO, "examples")


def run(name: str, *args: str, timeout: float = 120) -> str:
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], env=python_env(),
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_request_response() -> None:
    out = run("request_response.py", "--clients", "2", "--requests", "3", "--aeron-dir", new_aeron_dir())
    assert "6 requests answered" in out
    assert "'CLIENT-1 REQUEST 2'" in out


def test_fan_in_on_trio() -> None:
    out = run("fan_in.py", "--publishers", "3", "--messages", "2000", "--backend", "trio",
              "--aeron-dir", new_aeron_dir())
    assert "6,000 messages from 3 publishers" in out
    assert out.count("2,000 messages, in order") == 3


def test_async_publisher_and_subscriber_pair() -> None:
    aeron_dir = new_aeron_dir()
    subscriber = subprocess.Popen(
        [sys.executable, os.path.join(EXAMPLES, "async_subscriber.py"), "--count", "5", "--aeron-dir", aeron_dir,
         "--timeout", "60"], env=python_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert "subscribed to aeron:ipc stream 1001" in subscriber.stdout.readline()
        publisher = run("async_publisher.py", "--count", "5", "--interval", "0", "--aeron-dir", aeron_dir)
        assert publisher.count("sent 'hello") == 5
        out, _ = subscriber.communicate(timeout=60)
    finally:
        if subscriber.poll() is None:
            subscriber.kill()
    assert subscriber.returncode == 0, out
    assert "'hello 4'" in out and "received 5 messages" in out
    deadline = time.monotonic() + 5
    while os.path.exists(aeron_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(aeron_dir)


def test_demo_runs_and_checks_order() -> None:
    out = run("demo.py", "--seconds", "1.5", "--backend", "uvloop")
    assert "all in order" in out and "msgs/s" in out
