"""The `aeron` data source: recordings of an Aeron archive read as DataFrames (batch and
Structured Streaming), and DataFrames written to a stream (sink.py).

    from aeron_async.spark import register
    register(spark)
    df = spark.read.format("aeron").option("recordingIds", "3").load()

Columns: data (binary), recording_id, session_id, stream_id, position (the message's start
position in the recording), reserved_value, channel (the recording's original channel). Options:
options.py.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader
from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField, StructType

from .options import OptionError, parse_read_options

if TYPE_CHECKING:
    from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter

SCHEMA = StructType([
    StructField("data", BinaryType(), nullable=False),
    StructField("recording_id", LongType(), nullable=False),
    StructField("session_id", IntegerType(), nullable=False),
    StructField("stream_id", IntegerType(), nullable=False),
    StructField("position", LongType(), nullable=False),
    StructField("reserved_value", LongType(), nullable=False),
    StructField("channel", StringType(), nullable=False),
])


def check_read_schema(schema: StructType) -> None:
    """The source's columns are fixed: a user schema (`.schema(...)`) must be the source's own."""
    if [(f.name, f.dataType) for f in schema.fields] != [(f.name, f.dataType) for f in SCHEMA.fields]:
        raise OptionError(f"the aeron source's columns are fixed ({SCHEMA.simpleString()}); leave out .schema(...), "
                          f"which gave {schema.simpleString()}")


def _sink() -> Any:
    """The sink's module (sink.py), imported only when a query writes."""
    return importlib.import_module("aeron_async.spark.sink")


class AeronDataSource(DataSource):
    """Spark data source `aeron` (pyspark >= 4.2 Python Data Source API)."""

    @classmethod
    def name(cls) -> str:
        return "aeron"

    def schema(self) -> StructType:
        return SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        from .reader import AeronBatchReader

        check_read_schema(schema)
        return AeronBatchReader(parse_read_options(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from .stream_reader import AeronStreamReader

        check_read_schema(schema)
        return AeronStreamReader(parse_read_options(self.options, streaming=True))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        writer: DataSourceWriter = _sink().AeronBatchWriter(self.options, schema, overwrite)
        return writer

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        writer: DataSourceStreamWriter = _sink().AeronStreamWriter(self.options, schema, overwrite)
        return writer
