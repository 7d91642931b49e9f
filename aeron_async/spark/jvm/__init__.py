"""The JVM connector's place in the package (docs/spark.md, "The JVM connector"): the jar the build
leaves beside this file (build.py), and putting it on a session's classpath.

Spark resolves `format("aeron")` to the class `aeron.DefaultSource` when that class is on the
session's classpath, before it looks at Python data sources; otherwise to the Python source.
"""

from __future__ import annotations

import pathlib
from typing import Any

from ...errors import ConfigurationError

HERE = pathlib.Path(__file__).resolve().parent
JAR = HERE / "aeron-async-spark.jar"
LIBRARY = HERE / "lib" / "libaeron_async_spark.so"   # build.py: LIBRARY_DIR, LIBRARY_NAME
PROVIDER = "aeron.DefaultSource"


def jar_path() -> str | None:
    """The built jar, or None where the package was built without a JDK."""
    return str(JAR) if JAR.exists() else None


def loaded(spark: Any) -> bool:
    """Whether the session's driver sees the connector's classes (spark.jars, --jars, or ADD JAR)."""
    jvm = spark.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(PROVIDER, False, loader)
    except Exception:  # py4j's Py4JJavaError (ClassNotFoundException)
        return False
    return True


def add_jar(spark: Any) -> str:
    """Puts the built jar on a running session's classpath (driver and executors); its path."""
    jar = jar_path()
    if jar is None:
        raise ConfigurationError(
            "aeron data source: the JVM connector is not built (the package was built without a JDK): build it with "
            "`python -m aeron_async.spark.jvm.build` (needs javac), or use the Python source: "
            "register(spark, connector=\"python\")")
    if "'" in jar:
        raise ConfigurationError(f"aeron data source: the connector's path {jar!r} has a quote Spark's ADD JAR cannot take")
    spark.sql(f"ADD JAR '{jar}'")
    if not loaded(spark):
        raise ConfigurationError(f"aeron data source: {jar} was added to the session but {PROVIDER} does not load: "
                                 f"start the session with .config(\"spark.jars\", \"{jar}\") instead")
    return jar


def configure(builder: Any) -> Any:
    """`SparkSession.builder` with the connector's jar in spark.jars (the surest way: on the classpath
    from the JVM's start); the builder."""
    jar = jar_path()
    if jar is None:
        raise ConfigurationError("aeron data source: the JVM connector is not built: `python -m aeron_async.spark.jvm.build`")
    return builder.config("spark.jars", jar)
