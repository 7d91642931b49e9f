"""The one local SparkSession every Spark test shares (session-scoped: a JVM start costs seconds),
with the `aeron` data source registered. Tests that use it are skipped where pyspark, pyarrow or
Java is missing. Imported by conftest.py, so any test module can ask for `spark`."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest


def java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or (home is not None and os.path.exists(os.path.join(home, "bin", "java")))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (the spark extra)")
    if not java_available():
        pytest.skip("no Java (java on PATH or JAVA_HOME): Spark needs a JVM; ./dev setup installs one")
    # the Python workers must be this interpreter (the venv with pyarrow and aeron_async), not python3 on PATH
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from aeron_async.spark import register

    session = (
        SparkSession.builder.master("local[2]")
        .appName("aeron_async tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.python.worker.faulthandler.enabled", "true")
        .config("spark.driver.extraJavaOptions", "-Dlog4j2.level=error")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    try:
        yield session
    finally:
        session.stop()
