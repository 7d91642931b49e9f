"""The one local SparkSession every Spark test shares (session-scoped: a JVM start costs seconds),
with the JVM connector's jar in spark.jars from the start (docs/spark.md, "The JVM connector"):
`format("aeron")` is the JVM connector and `format("aeron_python")` the Python source. The
`connector` fixture runs a test through each of them. Spark, pyarrow and a JDK come with the
README's test command (`./dev setup`): without them the Spark tests fail, naming it. Imported by
conftest.py, so any test module can ask for `spark` and `connector`."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest


# the driver of an archive that Spark tests read and write: clients timed out after 10 s, not the
# suite's 2 s (the JVMs of a Spark test starve a loaded machine, and a client must not be dropped
# because its heartbeat thread waited for a CPU)
SPARK_DRIVER_SETTINGS: dict[str, Any] = {"client_liveness_timeout": 10.0}


def java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or (home is not None and os.path.exists(os.path.join(home, "bin", "java")))


def connector_jar() -> str:
    """The JVM connector's jar, rebuilt first where its sources are newer (as `./dev setup` builds
    it); the test fails, in one line, where there is none and no JDK to build it."""
    from aeron_async.spark.jvm import build, jar_path

    try:
        build.build()
    except build.Unavailable:
        pass
    jar = jar_path()
    if jar is None:
        pytest.fail("the Spark JVM connector is not built (aeron_async/spark/jvm/aeron-async-spark.jar): run "
                    "./dev setup, which installs a JDK and builds it", pytrace=False)
    return jar


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    import pyarrow  # noqa: F401  (the spark extra: the README's test command installs it)
    import pyspark  # noqa: F401

    if not java_available():
        pytest.fail("no Java (java on PATH or JAVA_HOME): Spark needs a JVM; run ./dev setup, which installs one",
                    pytrace=False)
    connector_jar()
    # the Python workers must be this interpreter (the venv with pyarrow and aeron_async), not python3 on PATH
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from aeron_async.spark import register
    from aeron_async.spark.jvm import configure

    session = (
        configure(SparkSession.builder).master("local[2]")
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
    try:
        assert register(session) == "jvm"
        yield session
    finally:
        session.stop()


@dataclass(frozen=True)
class Connector:
    """One of the two connectors behind the `aeron` source in the shared session."""

    name: str     # "jvm" or "python": register(spark, connector=...)
    format: str   # what spark.read.format(...) / write.format(...) names it in the shared session

    def read_options(self, archive_dir: str) -> dict[str, str]:
        """The options this connector needs beside a query's own to read an archive on this host: the
        JVM connector reads its catalog and segment files (archiveDir); the Python source asks the
        archive through its control channel and takes none."""
        return {"archiveDir": archive_dir} if self.name == "jvm" else {}


CONNECTORS = {"jvm": Connector("jvm", "aeron"), "python": Connector("python", "aeron_python")}
# the JVM connector without archiveDir: it reads the archive over its control protocol (docs/spark.md,
# "The JVM connector"), as the Python source does
REMOTE = Connector("remote", "aeron")


@pytest.fixture(params=sorted(CONNECTORS, reverse=True))
def connector(request: Any, spark: Any) -> Connector:
    """Each Spark test that reads or writes through the session runs once through each connector."""
    return CONNECTORS[request.param]
