"""The JVM connector serves every option of the Python source (docs/spark.md, "The JVM connector"):
dropRepeats natively, a batch read of a recording still being recorded, batch and streaming reads
of a remote archive (no archiveDir: over the archive's control protocol, IPC and UDP; dropRepeats
and the streams' limits too), a durable=true write with the archive's control options (the JVM
sink waits through the archive's control session, IPC and UDP): nothing is handed to the Python
source. Each query runs through `format("aeron")` (the JVM connector) and
`format("aeron_python")` in the shared Spark session (tests/support/spark_connectors.py, features)
and the results are compared; the physical plans say which connector served.

The recorded "sink" stream is written by hand with the sink's provenance reserved values
(aeron_async/spark/provenance.py), one exclusive publication (so one recording) per task attempt:
a finished attempt, a repeat of it, an unfinished attempt (its first message fragmented, its last
longer than a frame header) with a finished retry, a stream the sink did not write (with one
end-marker-tagged message inside), and an unfinished attempt still being recorded."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import aeron_async
from aeron_async.archive import NULL_POSITION, AeronArchive
from aeron_async.spark import provenance
from support.archive_e2e import archive_clients, free_udp_port, wait_recorded
from support.spark_connectors import features

import pyspark  # noqa: F401,E402  (the spark extra: the README's test command installs it)

CHANNEL = "aeron:ipc?term-length=64k"
SINK_STREAM = 4301
WRITE_STREAMS = {"durable": {"aeron": 4303, "aeron_python": 4304}, "not durable": {"aeron": 4305, "aeron_python": 4306},
                 "durable udp": {"aeron": 4309, "aeron_python": 4310}}
UNRECORDED_STREAM = 4308   # read by a subscriber, recorded by no one
WRITE_ROWS = 500


@dataclass
class Attempt:
    """One hand-written task attempt (or a plain stream): its recording and messages (data, reserved)."""

    recording_id: int
    messages: list[tuple[bytes, int]]


@dataclass
class Archive:
    aeron_dir: str
    archive_dir: str
    attempts: dict[str, Attempt]
    control_port: int


def _wait(condition: Any, what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    idle = aeron_async.IdleStrategy("sleeping:1ms")
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout} s")
        idle.idle(0)
    return found


def publish(client: aeron_async.Aeron, archive: AeronArchive, messages: list[tuple[bytes, int]],
            close: bool = True) -> tuple[int, Any]:
    """Messages on a new exclusive publication of the recorded stream (a new session: a new recording),
    recorded whole; closed (the recording stopped) unless `close` is false. (recording id, publication)."""
    before = {d.recording_id for d in archive.list_recordings("aeron:ipc", SINK_STREAM)}
    publication = client.add_exclusive_publication(CHANNEL, SINK_STREAM)
    _wait(lambda: publication.is_connected, "the archive's recording did not connect")
    found = _wait(lambda: [d.recording_id for d in archive.list_recordings("aeron:ipc", SINK_STREAM)
                           if d.recording_id not in before], "no recording of the new session started")
    recording_id = found[0]
    idle = aeron_async.IdleStrategy("backoff")
    for data, reserved in messages:
        while publication.offer(data, reserved_value=reserved) < 0:
            idle.idle(0)
    wait_recorded(archive, recording_id, publication.position)
    if close:
        publication.close()
        _wait(lambda: archive.list_recording(recording_id).stop_position != NULL_POSITION,
              f"recording {recording_id} did not stop")
    return recording_id, publication


def tagged(kind: int, batch: int, partition: int, attempt: int, rows: list[bytes]) -> list[tuple[bytes, int]]:
    value = provenance.encode(kind, batch, partition, attempt)
    return [(row, value) for row in rows]


def end(kind: int, batch: int, partition: int, attempt: int) -> tuple[bytes, int]:
    return (b"", provenance.encode(kind, batch, partition, attempt, end=True))


@pytest.fixture(scope="module")
def archive(tmp_path_factory: Any) -> Iterator[Archive]:
    control_port = free_udp_port()
    with archive_clients(tmp_path_factory, "spark-jvm-features",
                         control_channel=f"aeron:udp?endpoint=127.0.0.1:{control_port}") as (
            aeron_dir, archive_dir, client, archive):
        archive.start_recording("aeron:ipc", SINK_STREAM)
        for streams in WRITE_STREAMS.values():
            for stream_id in streams.values():
                archive.start_recording("aeron:ipc", stream_id)
        rows = [f"row {i} ".encode() * (1 + i % 9) for i in range(40)]
        plan = {
            "finished": tagged(1, 7, 0, 0, rows) + [end(1, 7, 0, 0)],
            "repeat": tagged(1, 7, 0, 1, rows[::-1]) + [end(1, 7, 0, 1)],   # the same task again, rows reordered
            "unfinished": tagged(1, 7, 1, 0, [os.urandom(3000)] + rows[:20] + [b"l" * 100]),
            "retry": tagged(1, 7, 1, 1, rows[:30]) + [end(1, 7, 1, 1)],
            "plain": [(f"plain {i}".encode(), i) for i in range(10)] + [end(1, 9, 0, 0)] + [(b"after", 11)],
        }
        attempts = {}
        for name, messages in plan.items():
            recording_id, _ = publish(client, archive, messages)
            attempts[name] = Attempt(recording_id, messages)
        # still being recorded while the queries run (its publication open): an unfinished attempt
        active_messages = tagged(0, 3, 0, 0, [f"live {i}".encode() for i in range(25)])
        active_id, active = publish(client, archive, active_messages, close=False)
        attempts["active"] = Attempt(active_id, active_messages)
        unrecorded = client.add_subscription("aeron:ipc", UNRECORDED_STREAM)
        yield Archive(aeron_dir, archive_dir, attempts, control_port)
        unrecorded.close()
        active.close()


@pytest.fixture(scope="module")
def results(spark: Any, archive: Archive) -> dict[str, Any]:
    a = archive.attempts
    repeats = {"channel": "aeron:ipc", "streamId": str(SINK_STREAM), "dropRepeats": "true"}
    reads = [
        {"name": "repeats", "options": repeats},
        {"name": "repeats schema", "options": repeats, "schema": "data binary, position bigint, recording_id bigint"},
        {"name": "repeats select", "options": repeats, "select": ["position", "recording_id", "data"]},
        {"name": "repeats count", "options": repeats, "count": True},
        {"name": "all count", "options": {"channel": "aeron:ipc", "streamId": str(SINK_STREAM)}, "count": True},
        {"name": "active", "options": {"recordingIds": str(a["active"].recording_id)}},
        {"name": "active count", "options": {"recordingIds": str(a["active"].recording_id)}, "count": True},
        {"name": "remote", "options": {"recordingIds": str(a["plain"].recording_id)}, "drop": ["archiveDir"]},
        {"name": "bad timeout", "options": {"recordingIds": str(a["plain"].recording_id), "timeout": "soon"}},
        {"name": "remote channel", "options": {"channel": "aeron:ipc", "streamId": str(SINK_STREAM),
                                               "maxBytesPerPartition": "64k"}, "drop": ["archiveDir"]},
        {"name": "remote udp", "drop": ["archiveDir"], "options": {
            "recordingIds": f'{a["finished"].recording_id},{a["unfinished"].recording_id}',
            "controlChannel": f"aeron:udp?endpoint=127.0.0.1:{archive.control_port}",
            "responseChannel": f"aeron:udp?endpoint={{host}}:{free_udp_port()}",
            "replayChannel": f"aeron:udp?endpoint={{host}}:{free_udp_port()}"}},
        {"name": "remote unreachable", "drop": ["archiveDir"], "options": {
            "recordingIds": str(a["plain"].recording_id), "controlStreamId": "4999", "timeout": "1"}},
        {"name": "remote filtered", "drop": ["archiveDir"], "count": True, "options": {
            "channel": "aeron:ipc", "streamId": str(SINK_STREAM)}, "where": "position > 2000"},
        {"name": "remote repeats", "options": repeats, "drop": ["archiveDir"]},
        {"name": "remote repeats udp", "options": {**repeats, "replayChannel": f"aeron:udp?endpoint={{host}}:"
                                                   f"{free_udp_port()}"}, "drop": ["archiveDir"], "count": True},
    ]
    streams = [
        {"name": "repeats", "options": {**repeats, "startingPositions": "earliest"}},
        {"name": "remote", "options": {"recordingIds": str(a["finished"].recording_id),
                                       "startingPositions": "earliest"}, "drop": ["archiveDir"]},
        # three recordings (one still being recorded) in batches of at most 13 messages, counted over replays
        {"name": "remote rows", "drop": ["archiveDir"], "options": {
            "recordingIds": ",".join(str(a[n].recording_id) for n in ("finished", "unfinished", "active")),
            "startingPositions": "earliest", "maxRecordsPerTrigger": "13"}},
        {"name": "remote bytes", "drop": ["archiveDir"], "options": {
            "channel": "aeron:ipc", "streamId": str(SINK_STREAM), "startingPositions": "earliest",
            "maxBytesPerTrigger": "3000"}},
        {"name": "remote realtime", "drop": ["archiveDir"], "realtime": True, "options": {
            "recordingIds": str(a["finished"].recording_id), "startingPositions": "earliest"}},
    ]
    control = {"aeronDir": archive.aeron_dir, "channel": CHANNEL, "controlChannel": "aeron:ipc?term-length=64k",
               "ControlStreamId": "10", "archiveDir": archive.archive_dir}
    writes = [
        {"name": "durable", "rows": WRITE_ROWS, "streams": WRITE_STREAMS["durable"],
         "options": {**control, "DURABLE": "true", "durableTimeout": "20"}},
        {"name": "not durable", "rows": WRITE_ROWS, "streams": WRITE_STREAMS["not durable"], "options": control},
        {"name": "durable udp", "rows": WRITE_ROWS, "streams": WRITE_STREAMS["durable udp"],
         "options": {**control, "durable": "true", "durableTimeout": "20",
                     "controlChannel": f"aeron:udp?endpoint=127.0.0.1:{archive.control_port}",
                     "responseChannel": f"aeron:udp?endpoint={{host}}:{free_udp_port()}"}},
        {"name": "not recorded", "rows": 10, "streams": {"aeron": UNRECORDED_STREAM, "aeron_python": UNRECORDED_STREAM},
         "options": {**control, "durable": "true", "durableTimeout": "1"}},
        {"name": "bad control", "rows": 1, "streams": {"aeron": 4307, "aeron_python": 4307},
         "options": {**control, "controlChannel": "udp://archive:8010"}},
        {"name": "overwrite", "rows": 1, "streams": {"aeron": 4307, "aeron_python": 4307}, "options": control,
         "mode": "overwrite"},
    ]
    job = {"options": {"aeronDir": archive.aeron_dir, "archiveDir": archive.archive_dir, "timeout": "5"},
           "unregistered": {**repeats, "aeronDir": archive.aeron_dir},
           "reads": reads, "streams": streams, "writes": writes}
    return features(spark, job)


def expected_repeats(archive: Archive) -> list[tuple[int, bytes]]:
    """(recording id, data) of what dropRepeats reads: the first finished attempt of each task and the
    stream the sink did not write, without end markers."""
    a = archive.attempts
    return sorted((a[name].recording_id, data) for name in ("finished", "retry", "plain")
                  for data, reserved in a[name].messages if not provenance.is_end_marker(reserved))


@pytest.mark.parametrize("name", ["repeats", "repeats schema", "repeats select"])
def test_drop_repeats_reads_the_same_rows_natively(results: dict[str, Any], archive: Archive, name: str) -> None:
    """dropRepeats=true through the JVM connector: the Python source's rows exactly (with and without
    the reserved_value column), and those are the finished attempts' rows, each task once."""
    query = results["reads"][name]
    jvm, python = query["aeron"], query["aeron_python"]
    assert not isinstance(jvm, dict), jvm
    assert jvm == python
    columns = {"repeats": (1, 0), "repeats schema": (2, 0), "repeats select": (1, 2)}[name]
    recording_at, data_at = columns
    assert sorted((row[recording_at], bytes.fromhex(row[data_at])) for row in jvm) == expected_repeats(archive)
    if name == "repeats":
        assert not any(provenance.is_end_marker(row[5]) for row in jvm)
    assert f"aeron {archive.archive_dir}" in query["aeron plan"], query["aeron plan"]


def test_drop_repeats_count_is_answered_without_the_end_markers(results: dict[str, Any], archive: Archive) -> None:
    """count() with dropRepeats: the JVM's pushed-down count walks the frame headers, the end markers
    left out as the rows are; the Python source counts its rows."""
    query = results["reads"]["repeats count"]
    assert query["aeron"] == query["aeron_python"] == len(expected_repeats(archive))
    assert "aggregates" in query["aeron plan"], query["aeron plan"]
    everything = results["reads"]["all count"]
    assert everything["aeron"] == everything["aeron_python"] == sum(
        len(attempt.messages) for attempt in archive.attempts.values())


def test_drop_repeats_is_refused_alike_by_both_streaming_reads(results: dict[str, Any]) -> None:
    """dropRepeats is the Python source's batch option (an attempt still being recorded may yet
    finish): both connectors' readStream refuse it with the same words."""
    query = results["streams"]["repeats"]
    for fmt in ("aeron", "aeron_python"):
        assert "dropRepeats applies to spark.read only, not to spark.readStream" in query[fmt].get("error", ""), query


def test_a_batch_read_of_an_active_recording_reads_what_it_has_recorded(results: dict[str, Any],
                                                                       archive: Archive) -> None:
    """A recording still being recorded, read in a batch by the JVM connector up to its rec-pos
    counter at planning: the Python source's rows (and count), every message recorded so far."""
    for name in ("active", "active count"):
        query = results["reads"][name]
        assert not isinstance(query["aeron"], dict), query["aeron"]
        assert query["aeron"] == query["aeron_python"], name
        assert f"aeron {archive.archive_dir}" in query["aeron plan"], query["aeron plan"]
    active = archive.attempts["active"]
    assert [(bytes.fromhex(row[0]), row[5]) for row in sorted(results["reads"]["active"]["aeron"],
                                                            key=lambda row: row[4])] == active.messages
    assert results["reads"]["active count"]["aeron"] == len(active.messages)


def test_a_read_without_archive_dir_is_served_natively(results: dict[str, Any], archive: Archive) -> None:
    """No archiveDir (a remote archive): format("aeron") plans its own scan over the archive's control
    protocol (the plan names the control channel, not the Python source) and replays each range into
    columnar batches natively, giving the Python source's rows; a stream too (its AvailableNow rows
    and offsets are the Python source's)."""
    query = results["reads"]["remote"]
    assert not isinstance(query["aeron"], dict), query["aeron"]
    assert query["aeron"] == query["aeron_python"]
    assert [(bytes.fromhex(row[0]), row[5]) for row in sorted(query["aeron"], key=lambda row: row[4])] == \
        archive.attempts["plain"].messages
    assert "(Python)" not in query["aeron plan"] and "aeron remote archive on aeron:ipc" in query["aeron plan"], \
        query["aeron plan"]
    stream = results["streams"]["remote"]
    assert "error" not in stream["aeron"], stream["aeron"]
    assert stream["aeron"]["rows"] == stream["aeron_python"]["rows"]
    assert stream["aeron"]["offsets"] == stream["aeron_python"]["offsets"]
    assert len(stream["aeron"]["rows"]) == len(archive.attempts["finished"].messages)
    assert stream["aeron"]["source"] == "aeron remote archive on aeron:ipc?term-length=64k stream 10", \
        stream["aeron"]["source"]


@pytest.mark.parametrize("name", ["remote rows", "remote bytes"])
def test_a_remote_stream_keeps_the_python_sources_limits_and_offsets(results: dict[str, Any], archive: Archive,
                                                                      name: str) -> None:
    """maxRecordsPerTrigger (the messages counted over a replay on the driver's control session,
    shared among three recordings, one still being recorded) and maxBytesPerTrigger (shared in
    proportion to what each recording has new) of a remote archive: the JVM stream's micro-batches
    end at the Python source's offsets and hold its rows, each message once."""
    stream = results["streams"][name]
    jvm, python = stream["aeron"], stream["aeron_python"]
    assert "error" not in jvm and "error" not in python, (jvm, python)
    assert jvm["offsets"] == python["offsets"] and len(jvm["offsets"]) > 2, (jvm["offsets"], python["offsets"])
    assert jvm["rows"] == python["rows"]
    a = archive.attempts
    chosen = ["finished", "unfinished", "active"] if name == "remote rows" else list(a)
    assert sorted((row[2], bytes.fromhex(row[1])) for row in jvm["rows"]) == sorted(
        (a[n].recording_id, data) for n in chosen for data, _ in a[n].messages)
    assert jvm["source"].startswith("aeron remote archive on "), jvm["source"]


def test_real_time_mode_of_a_remote_archive_is_refused_in_one_line(results: dict[str, Any]) -> None:
    """Real-time Mode reads the segment files as they are recorded: without archiveDir the JVM
    connector says what to give instead."""
    found = results["streams"]["remote realtime"]["aeron"]
    assert "Real-time Mode reads the recordings' segment files on each host: give option archiveDir" in \
        found.get("error", ""), found


def test_drop_repeats_of_a_remote_archive_is_served_natively(results: dict[str, Any], archive: Archive) -> None:
    """dropRepeats without archiveDir: each recording's last frame and first message are replayed
    over the control session (to {host} over UDP too), the end markers taken out of the replayed
    batches: the Python source's rows and count, each task once."""
    query = results["reads"]["remote repeats"]
    assert not isinstance(query["aeron"], dict), query["aeron"]
    assert query["aeron"] == query["aeron_python"]
    assert sorted((row[1], bytes.fromhex(row[0])) for row in query["aeron"]) == expected_repeats(archive)
    assert "aeron remote archive on" in query["aeron plan"] and "(Python)" not in query["aeron plan"], \
        query["aeron plan"]
    counted = results["reads"]["remote repeats udp"]
    assert counted["aeron"] == counted["aeron_python"] == len(expected_repeats(archive)), counted


@pytest.mark.parametrize("name", ["remote channel", "remote udp"])
def test_a_remote_batch_read_gives_the_python_sources_rows(results: dict[str, Any], archive: Archive,
                                                           name: str) -> None:
    """A channel + stream over IPC in ranges of one term (an active recording up to where it stands,
    a fragmented message, messages of many lengths), and recordings by id with the control channel over UDP and the
    answers and replays over UDP to `{host}` (this host's address): the JVM scan, the Python rows."""
    query = results["reads"][name]
    assert not isinstance(query["aeron"], dict), query["aeron"]
    assert query["aeron"] == query["aeron_python"]
    a = archive.attempts
    chosen = ["finished", "unfinished"] if name == "remote udp" else list(a)   # every recording of the stream
    assert sorted((row[1], bytes.fromhex(row[0])) for row in query["aeron"]) == sorted(
        (a[n].recording_id, data) for n in chosen for data, _ in a[n].messages)
    assert "aeron remote archive on" in query["aeron plan"] and "(Python)" not in query["aeron plan"], \
        query["aeron plan"]


def test_a_remote_filtered_count_counts_the_rows_spark_filters(results: dict[str, Any]) -> None:
    """count() with a position filter of a remote archive: not answered from a catalog (there is none
    here), the filter narrows the replay and Spark applies it again: the Python source's count."""
    query = results["reads"]["remote filtered"]
    assert query["aeron"] == query["aeron_python"] and query["aeron"] > 0, query


def test_an_unreachable_remote_archive_is_the_same_error(results: dict[str, Any]) -> None:
    """No archive on the control stream: both connectors say so at query start, in the same words."""
    query = results["reads"]["remote unreachable"]
    for fmt in ("aeron", "aeron_python"):
        assert isinstance(query[fmt], dict), query[fmt]
        assert "connect: no archive is listening on aeron:ipc?term-length=64k|session-id=" in query[fmt]["error"], \
            query[fmt]
        assert "stream 4999 (nothing connected within 1.0 s)" in query[fmt]["error"], query[fmt]


def test_a_remote_read_needs_no_python_source(results: dict[str, Any], archive: Archive) -> None:
    """Before register(spark) the session has no `aeron_python`: a JVM-only user still reads a remote
    archive with dropRepeats (nothing of it is handed to the Python source)."""
    found = results["unregistered"]
    assert not isinstance(found, dict), found
    assert sorted((row[1], bytes.fromhex(row[0])) for row in found) == expected_repeats(archive)


def write_attempts(rows: list[list[Any]]) -> list[list[tuple[str, bool]]]:
    """A sink stream read back (session_id, position, reserved_value, data) as each task attempt's
    messages in order: (data, is an end marker); the attempts sorted."""
    sessions: dict[int, list[list[Any]]] = {}
    for row in sorted(rows, key=lambda row: (row[0], row[1])):
        sessions.setdefault(row[0], []).append(row)
    return sorted([(row[3], provenance.is_end_marker(row[2])) for row in messages] for messages in sessions.values())


@pytest.mark.parametrize("name", ["durable", "durable udp", "not durable"])
def test_a_write_with_the_archive_control_options(results: dict[str, Any], name: str) -> None:
    """controlChannel, controlStreamId and archiveDir (any case): with durable=true each task waits
    through the archive's control session they name (over IPC, and over UDP with the answers to
    `{host}`), natively in the JVM sink as in the Python sink; without durable=true neither sink
    reaches the archive. Either way the JVM sink writes (its plan says so), the same messages and end
    markers as format("aeron_python"), recorded whole."""
    write = results["writes"][name]
    jvm, python = write["aeron"], write["aeron_python"]
    assert not isinstance(jvm, dict) and not isinstance(python, dict), (jvm, python)
    assert write_attempts(jvm) == write_attempts(python)
    assert sum(len(messages) - 1 for messages in write_attempts(jvm)) == WRITE_ROWS
    assert all(messages[-1][1] for messages in write_attempts(jvm))
    # the write's description: the JVM sink's "aeron sink <channel> stream <id>", not the Python source's
    assert "AppendData aeron" in write["aeron plan"] and f"Arguments: aeron sink {CHANNEL}" in write["aeron plan"], \
        write["aeron plan"]
    assert "aeron_python" not in write["aeron plan"], write["aeron plan"]


def test_a_durable_write_no_archive_records_fails_alike_through_the_control_session(results: dict[str, Any]) -> None:
    """durable=true with the control options to a stream the archive does not record: each sink's
    tasks ask the archive through its control session until durableTimeout and fail in the same
    words (the JVM sink's rec-pos wait would say it looked in its driver's counters)."""
    write = results["writes"]["not recorded"]
    for fmt in ("aeron", "aeron_python"):
        assert isinstance(write[fmt], dict), (fmt, write[fmt])
        found = write[fmt]["error"]
        assert f"durable=true: the archive did not record {CHANNEL} stream {UNRECORDED_STREAM} (session " in found, \
            (fmt, found)
        assert "within 1 s (no recording of it appeared): start a recording of the sink's channel and stream on the " \
            "archive (archive.start_recording), or raise durableTimeout" in found, (fmt, found)


def test_overwrite_is_refused_alike_by_both_sinks(results: dict[str, Any]) -> None:
    """mode("overwrite"): a stream cannot be overwritten; both sinks refuse it at the write's start in
    the same words, naming the fix."""
    write = results["writes"]["overwrite"]
    for fmt in ("aeron", "aeron_python"):
        assert isinstance(write[fmt], dict), (fmt, write[fmt])
        assert "the aeron sink appends to a stream and cannot overwrite it: use .mode('append')" in \
            write[fmt]["error"], (fmt, write[fmt])


def test_complete_mode_is_refused_alike_by_both_sinks(spark: Any, archive: Archive, tmp_path: Any) -> None:
    """outputMode("complete") of an aggregation: a stream cannot be overwritten; both sinks' queries
    fail at their start in the same words, naming the fix."""
    source = tmp_path / "lines"
    source.mkdir()
    (source / "part-0.txt").write_text("a\nb\na\n")
    for fmt in ("aeron", "aeron_python"):
        counts = spark.readStream.format("text").load(str(source)).groupBy("value").count()
        found = ""
        try:
            query = (counts.selectExpr("concat(value, count) AS data").writeStream.format(fmt).outputMode("complete")
                     .option("aeronDir", archive.aeron_dir).option("channel", CHANNEL).option("streamId", "4307")
                     .option("checkpointLocation", str(tmp_path / fmt)).trigger(availableNow=True).start())
            assert query.awaitTermination(120), f"{fmt}: the query did not end within 120 s"
            found = str(query.exception())
        except Exception as exc:
            found = str(exc)
        assert "the aeron sink appends to a stream: use outputMode('append'), not 'complete'" in found, (fmt, found)


@pytest.mark.parametrize("kind, name, message", [
    ("reads", "bad timeout", "timeout='soon' is not a number of seconds"),
    ("writes", "bad control", "controlChannel='udp://archive:8010' is not an Aeron channel"),
])
def test_the_archive_options_the_jvm_connector_does_not_use_are_checked_alike(
        results: dict[str, Any], kind: str, name: str, message: str) -> None:
    """A read with archiveDir and a write without durable=true use neither the archive's timeout nor
    its control channel, yet refuse a malformed one as the Python source does."""
    query = results[kind][name]
    for fmt in ("aeron", "aeron_python"):
        assert isinstance(query[fmt], dict) and message in query[fmt]["error"], (fmt, query[fmt])
