"""The Spark job the sink's cluster test runs twice, in local mode (the shared session) and on a
standalone cluster (this file run as a script, the driver of its own application):

    python tests/support/spark_jobs.py MASTER AERON_DIR CHANNEL STREAM_ID ROWS FAIL_PARTITION

It writes ROWS rows (`t-<id>`, 4 partitions) through the aeron sink to CHANNEL + STREAM_ID. With
FAIL_PARTITION >= 0 the first attempt of that partition fails after publishing two of its Arrow
batches (a deterministic task retry: Spark runs the partition again, on a cluster, where tasks are
retried); the writer is the real sink's, wrapped by a test-only data source `aeron_flaky`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

ARROW_BATCH_ROWS = 500


class InjectedFailure(RuntimeError):
    pass


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


def write_rows(spark: Any, aeron_dir: str, channel: str, stream_id: int, rows: int, fail_partition: int) -> None:
    """The job: `rows` rows through the sink (with the injected first-attempt failure if asked)."""
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(ARROW_BATCH_ROWS))
    source = "aeron"
    if fail_partition >= 0:
        spark.dataSource.register(flaky_source(fail_partition))
        source = "aeron_flaky"
    (spark.range(0, rows, numPartitions=4).selectExpr("concat('t-', id) AS data")
     .write.format(source).mode("append")
     .option("channel", channel).option("streamId", stream_id).option("aeronDir", aeron_dir)
     .save())


def main(argv: list[str]) -> int:
    master, aeron_dir, channel, stream, rows, fail_partition = argv
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from aeron_async.spark import register

    spark = (SparkSession.builder.master(master).appName("aeron sink cluster test")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.executor.memory", "512m").config("spark.task.maxFailures", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        register(spark)
        write_rows(spark, aeron_dir, channel, int(stream), int(rows), int(fail_partition))
    finally:
        spark.stop()
    print("job done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
