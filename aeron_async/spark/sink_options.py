"""The aeron sink's options (docs/spark.md): parsed and checked in the driver-side planner, so a bad
option fails the query at start; the parsed dataclass is what the executors get (pickled)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigurationError

DEFAULT_CONTROL_CHANNEL = "aeron:ipc?term-length=64k"
DEFAULT_CONTROL_STREAM_ID = 10
DEFAULT_RESPONSE_CHANNEL = "aeron:ipc?term-length=64k"

SINK_OPTIONS = {
    "channel": "the channel to publish on, e.g. aeron:udp?endpoint=host:port or aeron:ipc (required)",
    "streamid": "the stream id to publish on (required)",
    "aerondir": "the media driver directory on each executor (default: the client's default)",
    "durable": "true: a task (so a batch) commits only once the archive recorded all it published",
    "controlchannel": f"the archive's control channel, for durable=true (default {DEFAULT_CONTROL_CHANNEL})",
    "controlstreamid": f"the archive's control stream id (default {DEFAULT_CONTROL_STREAM_ID})",
    "responsechannel": f"the channel the archive answers on (default {DEFAULT_RESPONSE_CHANNEL})",
    "responsestreamid": "the stream id the archive answers on (default 20)",
    "timeout": "seconds for each archive request (default 10)",
    "connecttimeout": "seconds a task waits for the stream to have a subscriber (default 10)",
    "offertimeout": "seconds a task waits out back pressure without progress (default 30)",
    "durabletimeout": "seconds a durable task waits for the archive to record its messages (default 30)",
}


@dataclass(frozen=True)
class SinkOptions:
    channel: str
    stream_id: int
    aeron_dir: str | None
    durable: bool
    control_channel: str
    control_stream_id: int
    response_channel: str
    response_stream_id: int
    timeout: float
    connect_timeout: float
    offer_timeout: float
    durable_timeout: float


def _channel(value: str, name: str) -> str:
    if not value.startswith(("aeron:ipc", "aeron:udp")):
        raise ConfigurationError(
            f"option {name}={value!r} is not an Aeron channel: give e.g. 'aeron:udp?endpoint=host:port' or 'aeron:ipc'")
    media, _, params = value.partition("?")
    if media not in ("aeron:ipc", "aeron:udp"):
        raise ConfigurationError(f"option {name}={value!r}: the media is 'aeron:ipc' or 'aeron:udp', then '?key=value|...'")
    for pair in filter(None, params.split("|")):
        key, sep, item = pair.partition("=")
        if not sep or not key or not item:
            raise ConfigurationError(f"option {name}={value!r}: parameter {pair!r} is not key=value")
    if media == "aeron:udp" and "endpoint=" not in params and "control=" not in params:
        raise ConfigurationError(f"option {name}={value!r}: a UDP channel the sink publishes on needs endpoint=host:port "
                                 "(or control=host:port for multi-destination-cast)")
    return value


def _int(options: Mapping[str, str], key: str, default: int | None, low: int, high: int) -> int:
    raw = options.get(key)
    if raw is None:
        if default is None:
            raise ConfigurationError(f"the aeron sink needs option {key!r}: {SINK_OPTIONS[key]}")
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"option {key}={raw!r} must be an integer") from None
    if not low <= value <= high:
        raise ConfigurationError(f"option {key}={value} must be between {low} and {high}")
    return value


def _seconds(options: Mapping[str, str], key: str, default: float) -> float:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigurationError(f"option {key}={raw!r} must be a number of seconds") from None
    if not 0 < value <= 3600:
        raise ConfigurationError(f"option {key}={raw!r} must be between 0 and 3600 seconds")
    return value


def _bool(options: Mapping[str, str], key: str) -> bool:
    raw = options.get(key, "false").strip().lower()
    if raw not in ("true", "false"):
        raise ConfigurationError(f"option {key}={options[key]!r} must be true or false")
    return raw == "true"


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Parse the write options (keys lower-cased by Spark). An option the sink does not know is
    rejected, naming the ones it knows."""
    lowered = {key.lower(): value for key, value in options.items()}
    unknown = sorted(key for key in lowered if key not in SINK_OPTIONS and key != "path")
    if unknown:
        raise ConfigurationError(f"the aeron sink does not know option(s) {unknown}; its options are "
                                 f"{sorted(SINK_OPTIONS)} (docs/spark.md)")
    if "path" in lowered:
        raise ConfigurationError("the aeron sink takes no path: give .option('channel', ...) and .option('streamId', ...)")
    if "channel" not in lowered:
        raise ConfigurationError(f"the aeron sink needs option 'channel': {SINK_OPTIONS['channel']}")
    channel = _channel(lowered["channel"], "channel")
    stream = (-(1 << 31), (1 << 31) - 1)
    return SinkOptions(
        channel=channel,
        stream_id=_int(lowered, "streamid", None, *stream),
        aeron_dir=lowered.get("aerondir") or None,
        durable=_bool(lowered, "durable"),
        control_channel=_channel(lowered.get("controlchannel", DEFAULT_CONTROL_CHANNEL), "controlChannel"),
        control_stream_id=_int(lowered, "controlstreamid", DEFAULT_CONTROL_STREAM_ID, *stream),
        response_channel=_channel(lowered.get("responsechannel", DEFAULT_RESPONSE_CHANNEL), "responseChannel"),
        response_stream_id=_int(lowered, "responsestreamid", 20, *stream),
        timeout=_seconds(lowered, "timeout", 10.0),
        connect_timeout=_seconds(lowered, "connecttimeout", 10.0),
        offer_timeout=_seconds(lowered, "offertimeout", 30.0),
        durable_timeout=_seconds(lowered, "durabletimeout", 30.0),
    )
