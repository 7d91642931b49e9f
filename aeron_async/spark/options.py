"""The `aeron` data source's options: parsed and checked once, at query start (on the driver),
into frozen, picklable values that the executors' readers carry. Spark hands options lower-cased
(`self.options` of a DataSource is case-insensitive); every name below is matched that way. An
option the source does not apply is refused, naming the ones it knows.

Archive connection (read and write):

======================  ==============================  ===========================================
option                  default                         meaning
======================  ==============================  ===========================================
aeronDir                Aeron's default directory       the media driver directory the executors'
                        (AERON_DIR)                     clients connect to (a driver on each host)
controlChannel          aeron:ipc?term-length=64k       the archive's control request channel (a
                                                        UDP channel for a remote archive)
controlStreamId         10                              its stream id
responseChannel         aeron:ipc?term-length=64k       where the archive answers (UDP, reachable
                                                        from the archive, for a remote one; `{host}`
                                                        stands for each executor's address*)
responseStreamId        20                              its stream id
timeout                 10                              seconds for each archive request and for a
                                                        replay to make progress
archiveDir              none                            the archive's directory on each host: the
                                                        JVM connector reads its catalog and segment
                                                        files (without it, it hands the read to
                                                        this source); the Python source reaches the
                                                        archive through controlChannel and ignores it
======================  ==============================  ===========================================

Reading (batch and streaming):

======================  ==============================  ===========================================
recordingIds            (one of the two selections)     recordings by id: "3" or "3,5,8"
channel + streamId      (one of the two selections)     the recordings of stream `streamId` whose
                                                        channel contains `channel` (streaming: new
                                                        ones are read from their start)
startingPositions       batch: earliest;                earliest | latest | JSON {"3": 4096, "5": -2}
                        streaming: latest               (-2 earliest, -1 latest; a recording left
                                                        out starts at its start); a streaming query
                                                        uses it only without a checkpoint
endingPositions         latest (batch only)             latest | JSON {"3": 8192} (-1 latest; one
                                                        left out: latest): the position each
                                                        recording is read up to, exclusive; latest =
                                                        where it stands when the query starts
maxBytesPerPartition    64m                             bytes of one recording a task reads at most
                                                        (rounded to whole terms); not given, the JVM
                                                        connector's batch read splits itself evenly
                                                        over Spark's default parallelism (at most
                                                        1g a task)
replayChannel           aeron:ipc                       where the archive replays to each task (a
                                                        UDP endpoint of the executor for a remote
                                                        archive: aeron:udp?endpoint={host}:40125*)
replayStreamId          1001                            its stream id
failOnDataLoss          true                            fail when a range was truncated or purged
                                                        (false: read what is left, log a warning)
maxRecordsPerTrigger    none (streaming only)           messages per micro-batch at most
maxBytesPerTrigger      none (streaming only)           recorded bytes per micro-batch at most
======================  ==============================  ===========================================

* `{host}` in responseChannel and replayChannel is replaced on each executor by its own address:
the environment variable AERON_SPARK_HOST where set, else what its host name resolves to. Tasks on
one host may share a port: their driver tells their streams apart by session id.

A message belongs to a range [from, to) when its START position is in it: each message of a
recording is in exactly one partition and one micro-batch, whatever the positions given.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Final

import attrs

from ..archive import (CONTROL_STREAM_ID, DEFAULT_REPLAY_CHANNEL, DEFAULT_REPLAY_STREAM_ID, LOCAL_CONTROL_CHANNEL,
                       RESPONSE_CHANNEL, RESPONSE_STREAM_ID)
from ..errors import ConfigurationError

EARLIEST: Final = -2
LATEST: Final = -1

ARCHIVE_OPTIONS: Final = ("aeronDir", "controlChannel", "controlStreamId", "responseChannel", "responseStreamId",
                          "timeout", "archiveDir")
READ_OPTIONS: Final = ("recordingIds", "channel", "streamId", "startingPositions", "endingPositions",
                       "maxBytesPerPartition", "replayChannel", "replayStreamId", "failOnDataLoss",
                       "maxRecordsPerTrigger", "maxBytesPerTrigger", "dropRepeats")
BATCH_ONLY: Final = ("endingPositions", "dropRepeats")
STREAM_ONLY: Final = ("maxRecordsPerTrigger", "maxBytesPerTrigger")
IGNORED_BY_SPARK: Final = ("path",)  # `load(path)` adds it: refused below unless empty

DEFAULT_MAX_BYTES_PER_PARTITION: Final = 64 << 20
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)b?\s*$", re.IGNORECASE)


class OptionError(ConfigurationError):
    """An option of the `aeron` data source that is missing, malformed or not applicable."""

    def __init__(self, message: str) -> None:
        super().__init__(f"aeron data source: {message}")


@attrs.frozen
class ArchiveOptions:
    """How a reader or writer reaches the archive (pickled to the executors)."""

    aeron_dir: str | None = None
    control_channel: str = LOCAL_CONTROL_CHANNEL
    control_stream_id: int = CONTROL_STREAM_ID
    response_channel: str = RESPONSE_CHANNEL
    response_stream_id: int = RESPONSE_STREAM_ID
    timeout: float = 10.0


@attrs.frozen
class ReadOptions:
    archive: ArchiveOptions
    recording_ids: tuple[int, ...] | None
    channel: str | None
    stream_id: int | None
    starting: int | dict[int, int]   # EARLIEST, LATEST or positions by recording id
    ending: int | dict[int, int]     # LATEST or positions by recording id (batch)
    max_bytes_per_partition: int
    replay_channel: str
    replay_stream_id: int
    fail_on_data_loss: bool
    max_records_per_trigger: int | None
    max_bytes_per_trigger: int | None
    streaming: bool
    drop_repeats: bool = False  # sparksink: read a recorded sink stream's finished attempts only (repeats.py)
    # the columns a task hands Spark, (name, nullable) in the order of the query's schema (the
    # source's seven, or the subset a `.schema(...)` chose: datasource.py); None: all seven
    columns: tuple[tuple[str, bool], ...] | None = None

    def selects(self, recording_id: int) -> bool:
        return self.recording_ids is None or recording_id in self.recording_ids


# --- value parsers ---------------------------------------------------------------------------

def _int(name: str, text: str, minimum: int, maximum: int = (1 << 63) - 1) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise OptionError(f"{name}={text!r} is not an integer") from None
    if not minimum <= value <= maximum:
        raise OptionError(f"{name}={text!r} must be between {minimum} and {maximum}")
    return value


def _size(name: str, text: str, minimum: int) -> int:
    match = _SIZE.match(text)
    if match is None:
        raise OptionError(f"{name}={text!r} is not a size: give bytes, or a number with k, m or g (\"64m\")")
    value = int(match.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[match.group(2).lower()]
    if value < minimum:
        raise OptionError(f"{name}={text!r} must be at least {minimum} bytes")
    return value


def _bool(name: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise OptionError(f"{name}={text!r} must be true or false")


def _channel(name: str, text: str) -> str:
    if not text.startswith("aeron:"):
        raise OptionError(f"{name}={text!r} is not an Aeron channel (aeron:ipc or aeron:udp?endpoint=host:port)")
    return text


def _positions(name: str, text: str, allowed: tuple[str, ...]) -> int | dict[int, int]:
    word = text.strip().lower()
    if word in allowed:
        return EARLIEST if word == "earliest" else LATEST
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not parsed:
        raise OptionError(
            f"{name}={text!r}: give {' or '.join(allowed)}, or a JSON object of recording id to position, "
            f"e.g. {{\"3\": 4096}} (-2 earliest, -1 latest)")
    lowest = EARLIEST if "earliest" in allowed else LATEST
    positions: dict[int, int] = {}
    for key, value in parsed.items():
        recording_id = _int(f"{name} recording id", str(key), 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
            raise OptionError(
                f"{name}: the position of recording {key} is {value!r}; give a position >= 0"
                f"{', -2 (earliest)' if lowest == EARLIEST else ''} or -1 (latest)")
        positions[recording_id] = value
    return positions


# --- the option sets -------------------------------------------------------------------------

def _lookup(options: Mapping[str, str], known: tuple[str, ...]) -> dict[str, str]:
    """The options by their canonical (camelCase) names; an unknown one is refused."""
    canonical = {name.lower(): name for name in known}
    found: dict[str, str] = {}
    for key, value in options.items():
        name = canonical.get(key.lower())
        if name is None:
            if key.lower() in IGNORED_BY_SPARK and not value:
                continue
            close = difflib.get_close_matches(key.lower(), list(canonical), n=3, cutoff=0.6)
            hint = f"did you mean {' or '.join(canonical[c] for c in close)}? " if close else ""
            raise OptionError(f"unknown option {key!r}; {hint}the options here are: {', '.join(known)}")
        found[name] = value
    return found


def parse_archive_options(found: Mapping[str, str]) -> ArchiveOptions:
    timeout = _seconds("timeout", found.get("timeout"), 10.0)
    aeron_dir = found.get("aeronDir")
    if aeron_dir is not None and not aeron_dir.strip():
        raise OptionError("aeronDir is empty: name the media driver's directory, or leave the option out")
    archive_dir = found.get("archiveDir")
    if archive_dir is not None and not archive_dir.strip():
        raise OptionError("archiveDir is empty: name the archive's directory, or leave the option out")
    return ArchiveOptions(
        aeron_dir=aeron_dir,
        control_channel=_channel("controlChannel", found.get("controlChannel", LOCAL_CONTROL_CHANNEL)),
        control_stream_id=_int("controlStreamId", found.get("controlStreamId", str(CONTROL_STREAM_ID)),
                               -(1 << 31), (1 << 31) - 1),
        response_channel=_channel("responseChannel", found.get("responseChannel", RESPONSE_CHANNEL)),
        response_stream_id=_int("responseStreamId", found.get("responseStreamId", str(RESPONSE_STREAM_ID)),
                                -(1 << 31), (1 << 31) - 1),
        timeout=timeout,
    )


def parse_read_options(options: Mapping[str, str], *, streaming: bool) -> ReadOptions:
    """The read options of a batch (`streaming=False`) or streaming query, checked."""
    found = _lookup(options, ARCHIVE_OPTIONS + READ_OPTIONS)
    mode, other = ("readStream", "read") if streaming else ("read", "readStream")
    for name in (BATCH_ONLY if streaming else STREAM_ONLY):
        if name in found:
            raise OptionError(f"{name} applies to spark.{other} only, not to spark.{mode}")
    recording_ids: tuple[int, ...] | None = None
    channel = stream_id = None
    if "recordingIds" in found:
        if "channel" in found or "streamId" in found:
            raise OptionError("give either recordingIds or channel and streamId, not both")
        parts = [part for part in found["recordingIds"].split(",") if part.strip()]
        if not parts:
            raise OptionError("recordingIds is empty: give recording ids separated by commas, e.g. \"3,5\"")
        recording_ids = tuple(dict.fromkeys(_int("recordingIds", part, 0) for part in parts))
    elif "channel" in found or "streamId" in found:
        if "channel" not in found or "streamId" not in found:
            raise OptionError("channel and streamId go together: the recordings of that stream whose channel "
                              "contains `channel`")
        channel = found["channel"]
        if not channel.strip():
            raise OptionError("channel is empty: give (part of) the recorded channel, e.g. aeron:ipc")
        stream_id = _int("streamId", found["streamId"], -(1 << 31), (1 << 31) - 1)
    else:
        raise OptionError("choose the recordings: option recordingIds (\"3,5\"), or channel and streamId")
    starting = _positions("startingPositions", found.get("startingPositions", "latest" if streaming else "earliest"),
                          ("earliest", "latest"))
    ending = _positions("endingPositions", found.get("endingPositions", "latest"), ("latest",))
    for name, positions in (("startingPositions", starting), ("endingPositions", ending)):
        if isinstance(positions, dict) and recording_ids is not None:
            extra = sorted(set(positions) - set(recording_ids))
            if extra:
                raise OptionError(f"{name} names recordings {extra} that recordingIds does not select")
    max_records = found.get("maxRecordsPerTrigger")
    max_bytes = found.get("maxBytesPerTrigger")
    return ReadOptions(
        archive=parse_archive_options(found),
        recording_ids=recording_ids,
        channel=channel,
        stream_id=stream_id,
        starting=starting,
        ending=ending,
        max_bytes_per_partition=_size("maxBytesPerPartition",
                                      found.get("maxBytesPerPartition", str(DEFAULT_MAX_BYTES_PER_PARTITION)), 1),
        replay_channel=_channel("replayChannel", found.get("replayChannel", DEFAULT_REPLAY_CHANNEL)),
        replay_stream_id=_int("replayStreamId", found.get("replayStreamId", str(DEFAULT_REPLAY_STREAM_ID)),
                              -(1 << 31), (1 << 31) - 1),
        fail_on_data_loss=_bool("failOnDataLoss", found.get("failOnDataLoss", "true")),
        max_records_per_trigger=None if max_records is None else _int("maxRecordsPerTrigger", max_records, 1),
        max_bytes_per_trigger=None if max_bytes is None else _size("maxBytesPerTrigger", max_bytes, 1),
        streaming=streaming,
        drop_repeats=_bool("dropRepeats", found.get("dropRepeats", "false")),
    )


# --- the sink's options (owner: sparksink; sink.py, docs/spark.md) ------------------------------

SINK_OPTIONS: Final = ("channel", "streamId", "durable", "connectTimeout", "offerTimeout", "durableTimeout")
SPARK_STREAM_WRITE_OPTIONS: Final = ("checkpointlocation", "queryname")  # Spark's own, handed to stream writers too


@attrs.frozen
class SinkOptions:
    """What the sink's tasks need (pickled to the executors): where to publish, how to reach the
    archive for durable=true, and the bounds of each wait (seconds)."""

    archive: ArchiveOptions
    channel: str
    stream_id: int
    durable: bool = False
    connect_timeout: float = 10.0
    offer_timeout: float = 30.0
    durable_timeout: float = 30.0


def _sink_channel(text: str) -> str:
    media, _, params = text.partition("?")
    if media not in ("aeron:ipc", "aeron:udp"):
        raise OptionError(f"channel={text!r} is not a channel to publish on: give aeron:ipc or "
                          "aeron:udp?endpoint=host:port, then |key=value parameters")
    for pair in filter(None, params.split("|")):
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise OptionError(f"channel={text!r}: parameter {pair!r} is not key=value")
    if media == "aeron:udp" and "endpoint=" not in params and "control=" not in params:
        raise OptionError(f"channel={text!r}: a UDP channel to publish on needs endpoint=host:port (or "
                          "control=host:port for multi-destination-cast)")
    return text


def _seconds(name: str, text: str | None, default: float) -> float:
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        raise OptionError(f"{name}={text!r} is not a number of seconds") from None
    if not 0 < value <= 3600:
        raise OptionError(f"{name}={text!r} must be between 0 and 3600 seconds")
    return value


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """The write options (batch and streaming), checked; `path` (`save(path)`) is refused."""
    if any(key.lower() == "path" and value for key, value in options.items()):
        raise OptionError("the sink takes no path: give .option('channel', ...) and .option('streamId', ...)")
    found = _lookup({key: value for key, value in options.items() if key.lower() not in SPARK_STREAM_WRITE_OPTIONS},
                    ARCHIVE_OPTIONS + SINK_OPTIONS)
    for name in ("channel", "streamId"):
        if name not in found:
            raise OptionError(f"the sink needs option {name!r}: the channel and stream id to publish on")
    return SinkOptions(
        archive=parse_archive_options(found),
        channel=_sink_channel(found["channel"]),
        stream_id=_int("streamId", found["streamId"], -(1 << 31), (1 << 31) - 1),
        durable=_bool("durable", found.get("durable", "false")),
        connect_timeout=_seconds("connectTimeout", found.get("connectTimeout"), 10.0),
        offer_timeout=_seconds("offerTimeout", found.get("offerTimeout"), 30.0),
        durable_timeout=_seconds("durableTimeout", found.get("durableTimeout"), 30.0),
    )
