"""The JVM connector's dropRepeats, batch reads of active recordings and what it hands to the Python
source (docs/spark.md, "The JVM connector"), each query run through `format("aeron")` (the JVM
connector: its jar in spark.jars) and `format("aeron_python")` (the Python source) in one local
SparkSession. Prints one line `RESULT <json>`: per query, each connector's rows (or its error) and
the physical plan Spark ran for it.

    python spark_jvm_features.py '<json: {"options": {...}, "reads": [...], "streams": [...], "writes": [...]}>'
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from typing import Any

from pyspark.sql import SparkSession

from aeron_async.spark import register
from aeron_async.spark.jvm import configure



def rows(df: Any) -> list[list[Any]]:
    """The DataFrame's rows, bytes as hex, sorted: what two connectors' results are compared as."""
    table = df.toArrow()
    columns = [table.column(name).to_pylist() for name in table.column_names]
    out = [[value.hex() if isinstance(value, bytes) else value for value in row] for row in zip(*columns)]
    return sorted(out, key=lambda row: [(0, v, "") if isinstance(v, int) else (1, 0, str(v)) for v in row])


def last_plan(spark: Any) -> str:
    """The physical plan of the session's last SQL execution (a write's too)."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    if executions.isEmpty():
        return ""
    return str(executions.last().physicalPlanDescription())


def error(exc: Exception) -> dict[str, str]:
    return {"error": str(exc)[:4000] or repr(exc)}


def read(spark: Any, fmt: str, query: dict[str, Any]) -> tuple[Any, str]:
    """The query's rows (or count) and the physical plan Spark ran (its scan's description in it)."""
    reader = spark.read.format(fmt).options(**query["options"])
    if query.get("schema"):
        reader = reader.schema(query["schema"])
    df = reader.load()
    if query.get("select"):
        df = df.selectExpr(*query["select"])
    if query.get("count"):
        df = df.groupBy().count()
        return df.collect()[0][0], df._jdf.queryExecution().executedPlan().toString()
    return rows(df), df._jdf.queryExecution().executedPlan().toString()


def stream(spark: Any, fmt: str, options: dict[str, str], workdir: str) -> Any:
    """An AvailableNow query to Parquet: its batches' end offsets and the rows written."""
    out, checkpoint = os.path.join(workdir, fmt, "out"), os.path.join(workdir, fmt, "checkpoint")
    query = (spark.readStream.format(fmt).options(**options).load().select("position", "data", "recording_id")
             .writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    if not query.awaitTermination(300):
        raise RuntimeError("the query did not end within 300 s")
    query.stop()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    offsets = [p["sources"][0]["endOffset"] for p in query.recentProgress if p["numInputRows"] > 0]
    return {"offsets": offsets, "rows": rows(spark.read.parquet(out)),
            "source": query.recentProgress[-1]["sources"][0]["description"]}


def main() -> None:
    job = json.loads(sys.argv[1])
    spark = configure(SparkSession.builder.master("local[2]")).config("spark.ui.enabled", "false") \
        .config("spark.sql.shuffle.partitions", "2").config("spark.driver.host", "127.0.0.1") \
        .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    workdir = tempfile.mkdtemp(prefix="aa-jvm-features-")
    try:
        results: dict[str, Any] = {"reads": {}, "streams": {}, "writes": {}}
        if job.get("unregistered"):
            # before register(spark): the session has the jar but no `aeron_python` to hand a read to
            try:
                results["unregistered"] = rows(spark.read.format("aeron").options(**job["unregistered"]).load())
            except Exception as exc:
                results["unregistered"] = error(exc)
        results["connector"] = register(spark)
        for query in job.get("reads", []):
            query = {**query, "options": {**job["options"], **query.get("options", {})}}
            for name in query.get("drop", []):
                query["options"].pop(name, None)
            found: dict[str, Any] = {}
            for fmt in ("aeron", "aeron_python"):
                try:
                    found[fmt], found[fmt + " plan"] = read(spark, fmt, query)
                except Exception as exc:  # Spark's error (its message, wrapped), for comparison
                    found[fmt] = error(exc)
            results["reads"][query["name"]] = found
        for query in job.get("streams", []):
            options = {**job["options"], **query.get("options", {})}
            for name in query.get("drop", []):
                options.pop(name, None)
            found = {}
            for fmt in ("aeron", "aeron_python"):
                try:
                    found[fmt] = stream(spark, fmt, options, os.path.join(workdir, query["name"]))
                except Exception as exc:
                    found[fmt] = error(exc)
            results["streams"][query["name"]] = found
        for spec in job.get("writes", []):
            found = {}
            for fmt, stream_id in spec["streams"].items():
                try:
                    df = spark.range(0, spec["rows"], 1, 2).selectExpr("concat('w', id) AS data")
                    df.write.format(fmt).mode("append").options(**spec["options"]).option(
                        "streamId", str(stream_id)).save()
                    plan = last_plan(spark)
                    back = spark.read.format("aeron_python").options(**job["options"]).option(
                        "channel", "aeron:ipc").option("streamId", str(stream_id)).load()
                    found[fmt] = rows(back.select("session_id", "position", "reserved_value", "data"))
                    found[fmt + " plan"] = plan
                except Exception as exc:
                    found[fmt] = error(exc)
            results["writes"][spec["name"]] = found
        print("RESULT " + json.dumps(results))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
