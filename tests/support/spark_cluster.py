"""A Spark standalone cluster for tests: a master and one worker from the pyspark installation
(`spark-class org.apache.spark.deploy.master.Master` / `...worker.Worker`), on 127.0.0.1 with
ephemeral ports, each in its own process group, killed on exit even when the test fails."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator


def spark_home() -> str:
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def _start(args: list[str], log_path: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(log_path, "wb") as log:
        return subprocess.Popen([os.path.join(spark_home(), "bin", "spark-class"), *args], stdout=log,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _wait_for(log_path: str, pattern: str, process: subprocess.Popen[bytes], timeout: float) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while True:
        with open(log_path, errors="replace") as log:
            text = log.read()
        found = re.search(pattern, text)
        if found:
            return found
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the Spark process did not log {pattern!r} within {timeout} s "
                                 f"(exit code {process.poll()}):\n{text[-3000:]}")
        time.sleep(0.1)


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(10)


@contextlib.contextmanager
def standalone_cluster(cores: int = 2, memory: str = "1g", timeout: float = 60.0) -> Iterator[str]:
    """Yields the master URL (spark://127.0.0.1:PORT) of a running master with one registered worker."""
    workdir = tempfile.mkdtemp(prefix="aa-spark-cluster-")
    env = dict(os.environ, SPARK_HOME=spark_home(), PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               SPARK_LOG_DIR=workdir, SPARK_WORKER_DIR=os.path.join(workdir, "work"),
               SPARK_DAEMON_MEMORY="256m")
    processes: list[subprocess.Popen[bytes]] = []
    try:
        master_log = os.path.join(workdir, "master.log")
        master = _start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
                         "--webui-port", "0"], master_log, env)
        processes.append(master)
        url = _wait_for(master_log, r"Starting Spark master at (spark://127\.0\.0\.1:\d+)", master, timeout).group(1)
        worker_log = os.path.join(workdir, "worker.log")
        worker = _start(["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--port", "0",
                         "--webui-port", "0", "--cores", str(cores), "--memory", memory,
                         "--work-dir", os.path.join(workdir, "work")], worker_log, env)
        processes.append(worker)
        _wait_for(worker_log, r"Successfully registered with master", worker, timeout)
        yield url
    finally:
        for process in reversed(processes):
            _kill(process)
        shutil.rmtree(workdir, ignore_errors=True)
