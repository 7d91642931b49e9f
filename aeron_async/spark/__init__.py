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

from ..extras import MissingExtraError

try:
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise MissingExtraError(f"the aeron Spark data source needs the 'spark' extra: pip install 'aeron_async[spark]' "
                            f"(missing: {exc.name})", name=exc.name) from exc

from .datasource import SCHEMA, AeronDataSource
from .workers import use_this_python


def register(spark: Any) -> None:
    """Register the `aeron` data source with a SparkSession (`spark.read.format("aeron")`). The
    session's Python workers run this interpreter unless PYSPARK_PYTHON or spark.pyspark.python
    names another (workers.py); with a local master, a workers' Python that cannot import the
    package is refused here, in one line."""
    use_this_python(spark)
    spark.dataSource.register(AeronDataSource)


__all__ = ["SCHEMA", "AeronDataSource", "register", "use_this_python"]
