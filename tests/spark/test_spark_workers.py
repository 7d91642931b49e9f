"""The Python of Spark's workers (docs/spark.md, first section): `register(spark)` points them at the
calling interpreter when neither PYSPARK_PYTHON nor spark.pyspark.python names one, and refuses, in
one line naming both, a workers' Python that cannot import the package."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from aeron_async.errors import ConfigurationError
from aeron_async.spark.workers import use_this_python
from support.spark_fixtures import java_available

import pyspark  # noqa: F401,E402  (the spark extra: the README's test command installs it)


class FakeConf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


class FakeContext:
    """What use_this_python reads of a SparkContext: its conf, master and pythonExec."""

    def __init__(self, conf: dict[str, str], master: str = "local[2]") -> None:
        self.conf = FakeConf(conf)
        self.master = master
        self.pythonExec = "python3"

    def getConf(self) -> FakeConf:
        return self.conf


class FakeSession:
    def __init__(self, conf: dict[str, str] | None = None, master: str = "local[2]") -> None:
        self.sparkContext = FakeContext(conf or {}, master)


def test_nothing_set_means_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    session = FakeSession()
    assert use_this_python(session) == sys.executable
    assert session.sparkContext.pythonExec == sys.executable
    assert os.environ["PYSPARK_PYTHON"] == sys.executable


def test_a_python_without_the_package_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """/usr/bin/python3 (the system's, with no aeron_async) named by either setting: refused for a
    local master, naming the setting it came from and both settings to change; not checked for a
    cluster's master (its workers are elsewhere)."""
    system = "/usr/bin/python3"
    if not os.path.exists(system):
        pytest.skip("no system Python at /usr/bin/python3")
    monkeypatch.setenv("PYSPARK_PYTHON", system)
    with pytest.raises(ConfigurationError) as caught:
        use_this_python(FakeSession())
    message = str(caught.value)
    assert "\n" not in message
    assert f"run {system} (from PYSPARK_PYTHON) and it cannot import aeron_async" in message
    assert "set PYSPARK_PYTHON or spark.pyspark.python" in message
    monkeypatch.delenv("PYSPARK_PYTHON")
    with pytest.raises(ConfigurationError, match=r"\(from spark\.pyspark\.python\)"):
        use_this_python(FakeSession({"spark.pyspark.python": system}))
    session = FakeSession({"spark.pyspark.python": system}, master="spark://10.0.0.1:7077")
    assert use_this_python(session) == system and session.sparkContext.pythonExec == system


@pytest.mark.skipif(not java_available(), reason="Spark needs a JVM")
def test_a_script_run_from_an_inactive_virtualenv_gets_its_workers_on_that_python(tmp_path: Any) -> None:
    """A script run as `.venv/bin/python app.py` with `python3` on PATH the system's (which lacks
    the package) and no PYSPARK_PYTHON: after register(spark) a task runs in this interpreter; and
    format("aeron") is the JVM connector wherever its jar is built (register adds it to the session:
    docs/spark.md, "The JVM connector")."""
    from aeron_async.spark.jvm import jar_path

    script = tmp_path / "app.py"
    script.write_text(textwrap.dedent("""
        import sys
        from pyspark.sql import SparkSession
        from aeron_async.spark import register
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                 .getOrCreate())
        try:
            print("CONNECTOR", register(spark))
            print("WORKER", spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("sys").executable).first())
        finally:
            spark.stop()
    """))
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = "/usr/bin:/bin"
    done = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"WORKER {sys.executable}" in done.stdout.splitlines()
    assert f"CONNECTOR {'python' if jar_path() is None else 'jvm'}" in done.stdout.splitlines()
