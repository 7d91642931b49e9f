"""The `aeron` data source: recordings of an Aeron archive read as DataFrames (batch and
Structured Streaming), and DataFrames written to a stream (sink.py).

    from aeron_async.spark import register
    register(spark)
    df = spark.read.format("aeron").option("recordingIds", "3").load()

Columns: data (binary), recording_id, session_id, stream_id, position (the message's start
position in the recording), reserved_value, channel (the recording's original channel); a
`.schema(...)` may choose some of them (check_read_schema). Options: options.py.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import attrs
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


def check_read_schema(schema: StructType) -> tuple[tuple[str, bool], ...] | None:
    """The columns a query reads: the source's seven (None), or those a user schema
    (`.schema("data binary, position bigint")`) chooses of them, in its order, each with the
    source's type. The Python data source API has no column pruning: Spark asks the reader for
    every column of its schema, so choosing fewer is how a query that needs fewer avoids moving
    the rest from the Python worker to the JVM."""
    if schema == SCHEMA:
        return None
    types = {field.name: field.dataType for field in SCHEMA.fields}
    names = [field.name for field in schema.fields]
    wrong = [f"{field.name} {field.dataType.simpleString()}" for field in schema.fields
             if types.get(field.name) != field.dataType]
    if not names or wrong or len(set(names)) != len(names):
        problem = (f"{', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not among them" if wrong else
                   "it names no column" if not names else "it names a column twice")
        raise OptionError(f"the aeron source's columns are {SCHEMA.simpleString()}; a .schema(...) may choose some "
                          f"of them, with those types, but {problem} (gave {schema.simpleString()})")
    return tuple((field.name, field.nullable) for field in schema.fields)


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

        columns = check_read_schema(schema)
        return AeronBatchReader(attrs.evolve(parse_read_options(self.options, streaming=False), columns=columns))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from .stream_reader import AeronStreamReader, RefusedStreamReader

        try:
            columns = check_read_schema(schema)
            options = parse_read_options(self.options, streaming=True)
        except OptionError as exc:
            # pyspark's streaming source runner calls reader.stop() in a `finally` that an error raised
            # here leaves without a reader: its UnboundLocalError traceback would follow our message.
            # The reader raises our error at its first call instead, alone.
            return RefusedStreamReader(exc)
        return AeronStreamReader(attrs.evolve(options, columns=columns))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        writer: DataSourceWriter = _sink().AeronBatchWriter(self.options, schema, overwrite)
        return writer

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        writer: DataSourceStreamWriter = _sink().AeronStreamWriter(self.options, schema, overwrite)
        return writer
