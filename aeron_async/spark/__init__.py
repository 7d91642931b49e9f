"""PySpark data source `aeron` (extra `aeron-async[spark]`: pyspark >= 4.2, pyarrow): recordings
of an Aeron archive read as batch and streaming DataFrames, DataFrames written to streams.

    from aeron_async.spark import register
    register(spark)                      # once per SparkSession
    spark.read.format("aeron").option("recordingIds", "3").load()

Installed, the package is also found by Spark's data source discovery (module `pyspark_aeron`),
so `format("aeron")` works without the call. Options: aeron_async/spark/options.py.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigurationError
from ..extras import MissingExtraError

try:
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise MissingExtraError(f"the aeron Spark data source needs the 'spark' extra: pip install 'aeron_async[spark]' "
                            f"(missing: {exc.name})", name=exc.name) from exc

from .datasource import SCHEMA, AeronDataSource
from .workers import use_this_python


CONNECTORS = ("auto", "jvm", "python")


class PythonAeronDataSource(AeronDataSource):
    """The Python source under a second name, `format("aeron_python")`, whichever `aeron` resolves to."""

    @classmethod
    def name(cls) -> str:
        return "aeron_python"


def register(spark: Any, connector: str = "auto") -> str:
    """Register the `aeron` data source with a SparkSession (`spark.read.format("aeron")`); returns
    the connector `format("aeron")` resolves to, "jvm" or "python" (docs/spark.md, "The JVM
    connector"). "auto" is the JVM connector wherever the package's jar is built (on the classpath
    already through spark.jars, --jars or aeron_async.spark.jvm.configure(builder), or added here),
    else the Python source; "jvm" is the JVM connector (its jar added to the session's classpath
    if not there); "python" registers the Python source. The Python source is also registered as
    `aeron_python` in every case.

    The session's Python workers run this interpreter unless PYSPARK_PYTHON or spark.pyspark.python
    names another (workers.py); with a local master, a workers' Python that cannot import the
    package is refused here, in one line."""
    from . import jvm

    if connector not in CONNECTORS:
        raise ConfigurationError(f"aeron data source: connector={connector!r}; give one of {', '.join(CONNECTORS)}")
    use_this_python(spark)
    spark.dataSource.register(PythonAeronDataSource)
    on_classpath = jvm.loaded(spark)
    if connector == "python" or (connector == "auto" and not on_classpath and jvm.jar_path() is None):
        if on_classpath:
            raise ConfigurationError(
                "aeron data source: the JVM connector is on this session's classpath (spark.jars or --jars), so "
                "format(\"aeron\") resolves to it: read the Python source as format(\"aeron_python\"), or start the "
                "session without the jar")
        spark.dataSource.register(AeronDataSource)
        return "python"
    if not on_classpath:
        jvm.add_jar(spark)
    return "jvm"


__all__ = ["CONNECTORS", "SCHEMA", "AeronDataSource", "PythonAeronDataSource", "register", "use_this_python"]
