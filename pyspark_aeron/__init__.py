"""Spark's data source discovery finds top-level `pyspark_*` modules with a `DefaultSource`: this
makes `format("aeron")` work without `aeron_async.spark.register(spark)`."""

from aeron_async.spark.datasource import AeronDataSource as DefaultSource

__all__ = ["DefaultSource"]
