"""The same queries through both connectors of the `aeron` source in the shared SparkSession
(tests/support/spark_fixtures.py; docs/spark.md, "The JVM connector"): `format("aeron")` resolves
to the JVM connector (its jar in spark.jars), `format("aeron_python")` is the Python source.
compare() gives, for each query, each connector's result (or its error), and the JVM plans'
pushdown lines; and the same writes through both sinks (`format("aeron")` the JVM's,
`format("aeron_python")` the Python's), each to its own stream, read back with the Python source.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any


def rows(df: Any) -> list[list[Any]]:
    table = df.toArrow()
    columns = [table.column(name).to_pylist() for name in table.column_names]
    out = [[value.hex() if isinstance(value, bytes) else value for value in row] for row in zip(*columns)]
    return sorted(out, key=lambda row: [(0, v, "") if isinstance(v, int) else (1, 0, str(v)) for v in row])


def run(spark: Any, fmt: str, query: dict[str, Any]) -> Any:
    reader = spark.read.format(fmt).options(**query["options"])
    if query.get("schema"):
        reader = reader.schema(query["schema"])
    df = reader.load()
    if query.get("where"):
        df = df.where(query["where"])
    if query.get("select"):
        df = df.selectExpr(*query["select"])
    if query.get("count"):
        return df.count()
    return rows(df)


def finish(query: Any, seconds: int = 300) -> None:
    """An AvailableNow query run to its end (bounded), its failure raised."""
    if not query.awaitTermination(seconds):
        query.stop()
        raise RuntimeError(f"the query did not end within {seconds} s")
    query.stop()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))


def stream(spark: Any, fmt: str, options: dict[str, str], workdir: str) -> dict[str, Any]:
    """An AvailableNow query to Parquet: its batches' end offsets and what the sink holds."""
    out, checkpoint = os.path.join(workdir, fmt, "out"), os.path.join(workdir, fmt, "checkpoint")
    query = (spark.readStream.format(fmt).options(**options).load().select("position", "data", "recording_id")
             .writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    finish(query)
    offsets = [p["sources"][0]["endOffset"] for p in query.recentProgress if p["numInputRows"] > 0]
    return {"offsets": offsets, "rows": rows(spark.read.parquet(out)),
            "source": query.recentProgress[-1]["sources"][0]["description"]}


def _drop(row: Any) -> None:
    pass


def realtime(spark: Any, fmt: str, options: dict[str, str], workdir: str) -> dict[str, Any]:
    """A Real-time Mode query to a foreach writer that drops its rows, run for a while: how it ended."""
    query = (spark.readStream.format(fmt).options(**options).load().select("data").writeStream
             .foreach(_drop).outputMode("update").option("checkpointLocation", os.path.join(workdir, fmt, "checkpoint"))
             .trigger(realTime="5 seconds").start())
    finish(query, 60)
    return {"rows": []}


def error(exc: Exception) -> dict[str, str]:
    """Spark's error (its message, wrapped), for comparison."""
    return {"error": str(exc)[:4000] or repr(exc)}


def last_plan(spark: Any) -> str:
    """The physical plan of the session's last SQL execution (a write's too)."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    if executions.isEmpty():
        return ""
    return str(executions.last().physicalPlanDescription())


def write(spark: Any, fmt: str, spec: dict[str, Any], options: dict[str, str], workdir: str) -> None:
    """A batch write of `spec["rows"]` rows in two partitions (strings of mixed sizes, fragmented ones
    included, and a reserved_value column with nulls), or an AvailableNow stream of three text files
    (one micro-batch each) as binary data."""
    if spec["kind"] == "batch":
        df = spark.range(0, spec["rows"], 1, 2).selectExpr(
            "concat('m', id, repeat('x', CAST(id % 7 * 700 AS INT))) AS data",
            "IF(id % 5 = 0, NULL, id DIV 500) AS reserved_value")
        df.write.format(fmt).mode("append").options(**options).save()
        return
    source = os.path.join(workdir, "files")
    if not os.path.isdir(source):
        os.makedirs(source)
        for index in range(3):
            with open(os.path.join(source, f"part-{index}.txt"), "w") as out:
                out.writelines(f"file {index} line {line} {'y' * (line * 37 % 3000)}\n" for line in range(400))
    query = (spark.readStream.format("text").option("maxFilesPerTrigger", "1").load(source)
             .selectExpr("CAST(value AS BINARY) AS data").writeStream.format(fmt).options(**options)
             .option("checkpointLocation", os.path.join(workdir, fmt, "checkpoint"))
             .trigger(availableNow=True).start())
    finish(query)


def compare(spark: Any, job: dict[str, Any]) -> dict[str, Any]:
    """The job's queries, streams and writes through both connectors of `spark` (a session with the
    JVM connector's jar on its classpath and the `aeron` source registered)."""
    results: dict[str, Any] = {"queries": []}
    for query in job["queries"]:
        query = {**query, "options": {**job["options"], **query.get("options", {})}}
        found: dict[str, Any] = {"name": query["name"]}
        for fmt in ("aeron", "aeron_python"):
            try:
                found[fmt] = run(spark, fmt, query)
            except Exception as exc:
                found[fmt] = error(exc)
        if query.get("plan"):
            reader = spark.read.format("aeron").options(**query["options"]).load()
            df = reader.where(query["where"]) if query.get("where") else reader
            df = df.selectExpr(*query["select"]) if query.get("select") else df
            df = df.groupBy().count() if query.get("count") else df
            found["plan"] = df._jdf.queryExecution().executedPlan().toString()
        results["queries"].append(found)
    workdir = tempfile.mkdtemp(prefix="aa-connectors-")
    try:
        results["streams"] = []
        for query in job.get("streams", []):
            options = {**job["options"], **query["options"]}
            found = {"name": query["name"]}
            for fmt in ("aeron", "aeron_python"):
                try:
                    found[fmt] = stream(spark, fmt, options, os.path.join(workdir, query["name"]))
                except Exception as exc:
                    found[fmt] = error(exc)
            results["streams"].append(found)
        started = time.monotonic()
        results["writes"] = []
        for spec in job.get("writes", []):
            found = {"name": spec["name"]}
            for fmt, stream_id in spec["streams"].items():
                options = {**spec["options"], "streamId": str(stream_id)}
                try:
                    write(spark, fmt, spec, options, os.path.join(workdir, spec["name"]))
                    back = spark.read.format("aeron_python").options(**job["options"]).option(
                        "channel", "aeron:ipc").option("streamId", str(stream_id)).load()
                    found[fmt] = rows(back.select("session_id", "position", "reserved_value", "data"))
                except Exception as exc:
                    found[fmt] = error(exc)
            results["writes"].append(found)
        results["write_seconds"] = round(time.monotonic() - started, 1)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def features(spark: Any, job: dict[str, Any]) -> dict[str, Any]:
    """The JVM connector's dropRepeats, batch reads of active recordings and what it hands to the
    Python source (tests/spark/test_spark_jvm_features.py): per read, stream and write, each
    connector's rows (or its error) and the physical plan Spark ran. `job["unregistered"]` is read
    in a new session of the same context (the jar on its classpath, no `aeron_python` registered),
    as by a JVM-only user who never called register(spark)."""
    results: dict[str, Any] = {"reads": {}, "streams": {}, "writes": {}}
    if job.get("unregistered"):
        try:
            results["unregistered"] = rows(spark.newSession().read.format("aeron").options(**job["unregistered"]).load())
        except Exception as exc:
            results["unregistered"] = error(exc)
    for query in job.get("reads", []):
        query = {**query, "options": {**job["options"], **query.get("options", {})}}
        for name in query.get("drop", []):
            query["options"].pop(name, None)
        found: dict[str, Any] = {}
        for fmt in ("aeron", "aeron_python"):
            try:
                reader = spark.read.format(fmt).options(**query["options"])
                df = (reader.schema(query["schema"]) if query.get("schema") else reader).load()
                df = df.where(query["where"]) if query.get("where") else df
                df = df.selectExpr(*query["select"]) if query.get("select") else df
                if query.get("count"):
                    df = df.groupBy().count()
                    found[fmt] = df.collect()[0][0]
                else:
                    found[fmt] = rows(df)
                found[fmt + " plan"] = df._jdf.queryExecution().executedPlan().toString()
            except Exception as exc:
                found[fmt] = error(exc)
        results["reads"][query["name"]] = found
    workdir = tempfile.mkdtemp(prefix="aa-jvm-features-")
    try:
        for query in job.get("streams", []):
            options = {**job["options"], **query.get("options", {})}
            for name in query.get("drop", []):
                options.pop(name, None)
            found = {}
            for fmt in ("aeron",) if query.get("realtime") else ("aeron", "aeron_python"):
                try:
                    run_stream = realtime if query.get("realtime") else stream
                    found[fmt] = run_stream(spark, fmt, options, os.path.join(workdir, query["name"]))
                except Exception as exc:
                    found[fmt] = error(exc)
            results["streams"][query["name"]] = found
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for spec in job.get("writes", []):
        found = {}
        for fmt, stream_id in spec["streams"].items():
            try:
                df = spark.range(0, spec["rows"], 1, 2).selectExpr("concat('w', id) AS data")
                df.write.format(fmt).mode(spec.get("mode", "append")).options(**spec["options"]).option(
                    "streamId", str(stream_id)).save()
                plan = last_plan(spark)
                back = spark.read.format("aeron_python").options(**job["options"]).option(
                    "channel", "aeron:ipc").option("streamId", str(stream_id)).load()
                found[fmt] = rows(back.select("session_id", "position", "reserved_value", "data"))
                found[fmt + " plan"] = plan
            except Exception as exc:
                found[fmt] = error(exc)
        results["writes"][spec["name"]] = found
    return results
