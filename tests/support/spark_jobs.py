"""The Spark job of the sink's cluster test, run in local mode (the shared session) and on a
standalone cluster (this file given to spark-submit with the JVM connector's jar in --jars, as
docs/spark.md shows: the driver of its own application; the executors fetch the jar and unpack its
native library):

    spark-submit --master MASTER --jars JAR tests/support/spark_jobs.py AERON_DIR ROWS FAIL_PARTITION JSON

JSON is a list of [format, channel, stream id]: each write is ROWS rows (`t-<id>-` and 1,100 bytes
of padding, 4 partitions) through that connector's sink, `aeron` the JVM connector's and
`aeron_python` the Python one's. With FAIL_PARTITION >= 0 the first attempt of that partition fails
after two of its Arrow batches (a deterministic task retry: Spark runs the partition again on a
cluster, where tasks are retried): the Python sink's writer is wrapped by a test-only data source
`aeron_flaky` that stops after handing it two batches; the JVM sink's input comes through a
Python UDF in the same stage that raises after passing on as many rows, by which time the JVM
writer has published the rows that filled its 1 MiB buffer (SinkWriter.java), so either attempt
dies having published part of its partition."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from typing import Any

ARROW_BATCH_ROWS = 500
PADDING = 1100  # bytes a row: FAIL_AFTER_ROWS rows hold more than the JVM sink's 1 MiB buffer
FAIL_AFTER_ROWS = 2 * ARROW_BATCH_ROWS


class InjectedFailure(RuntimeError):
    pass


def expected_rows(rows: int) -> list[bytes]:
    """The messages a write of `rows` rows publishes, once each."""
    return [f"t-{i}-{'x' * PADDING}".encode() for i in range(rows)]


def flaky_source(fail_partition: int) -> type:
    from pyspark.sql.datasource import DataSource

    from aeron_async.spark.sink import AeronBatchWriter

    class FlakyWriter(AeronBatchWriter):
        def write(self, iterator: Iterator[Any]) -> Any:
            from pyspark import TaskContext

            context = TaskContext.get()
            assert context is not None
            if context.partitionId() == fail_partition and context.attemptNumber() == 0:
                def dying() -> Iterator[Any]:
                    for index, batch in enumerate(iterator):
                        if index == 2:
                            raise InjectedFailure("injected: the first attempt dies after two batches")
                        yield batch
                return super().write(dying())
            return super().write(iterator)

    class FlakySource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "aeron_flaky"

        def writer(self, schema: Any, overwrite: bool) -> Any:
            return FlakyWriter(self.options, schema, overwrite)

    return FlakySource


def dying_upstream(fail_partition: int) -> Any:
    """A Python UDF passing `data` on, raising at row FAIL_AFTER_ROWS of the first attempt of
    `fail_partition` (a plain UDF: a pandas or Arrow one needs pandas, which the extra does not
    bring). Spark runs it in the same stage as the write, so the JVM writer has taken the rows
    before it when the task fails."""
    from pyspark.sql.functions import udf

    seen: dict[tuple[int, int, int], int] = {}  # rows passed on by each task attempt (workers are reused)

    def passed_on(data: str) -> str:
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None
        if context.partitionId() == fail_partition and context.attemptNumber() == 0:
            key = (context.stageId(), context.partitionId(), context.attemptNumber())
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > FAIL_AFTER_ROWS:
                raise InjectedFailure(f"injected: the first attempt dies after {FAIL_AFTER_ROWS} rows")
        return data

    return udf(passed_on, "string", useArrow=False)


def write_rows(spark: Any, fmt: str, aeron_dir: str, channel: str, stream_id: int, rows: int,
               fail_partition: int) -> None:
    """The job: `rows` rows through the sink `fmt` (with the injected first-attempt failure if asked)."""
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(ARROW_BATCH_ROWS))
    df = spark.range(0, rows, numPartitions=4).selectExpr(f"concat('t-', id, '-', repeat('x', {PADDING})) AS data")
    target = fmt
    if fail_partition >= 0 and fmt == "aeron_python":
        spark.dataSource.register(flaky_source(fail_partition))
        target = "aeron_flaky"
    elif fail_partition >= 0:
        df = df.select(dying_upstream(fail_partition)("data").alias("data"))
    (df.write.format(target).mode("append")
     .option("channel", channel).option("streamId", stream_id).option("aeronDir", aeron_dir)
     .save())


def main(argv: list[str]) -> int:
    aeron_dir, rows, fail_partition, writes = argv
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from aeron_async.spark import register

    spark = (SparkSession.builder.appName("aeron sink cluster test")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.executor.memory", "512m").config("spark.task.maxFailures", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        connector = register(spark)  # the jar came with --jars: format("aeron") is the JVM connector
        print(f"connector {connector}", flush=True)
        for fmt, channel, stream in json.loads(writes):
            write_rows(spark, fmt, aeron_dir, channel, int(stream), int(rows), int(fail_partition))
    finally:
        spark.stop()
    print("job done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
