"""`aeron-async exporter`: a driver's counters, loss report and error log for Prometheus.

Serves `/metrics` in the Prometheus text format (OpenMetrics when the scraper asks for it) with
prometheus_client (the `monitor` extra). A custom collector reads the driver's CnC file at every
scrape, so the figures are those of that moment and the exporter holds no state: it may start
before the driver, and follows a driver that restarts in the same directory.

Metric names (all `aeron_...`; per-counter samples carry the labels `counter_id`, `type` (the
counter type's name), `channel`, `stream`, `session`; empty where a counter has none):

- `aeron_driver_up` (1 while a live driver owns the directory), `aeron_driver_info` (pid, version,
  directory), `aeron_driver_heartbeat_age_seconds`, `aeron_driver_start_time_seconds`;
- one metric per system counter: `aeron_<name>_total` for counts (`aeron_sent_bytes_total`,
  `aeron_nak_messages_sent_total`, `aeron_retransmits_sent_total`, `aeron_errors_total`, ...), a
  gauge `aeron_<name>` for the others (`aeron_mapped_bytes`, the max cycle times in seconds:
  `aeron_conductor_max_cycle_time_seconds`, ...);
- one metric per stream and endpoint counter type (TYPE_METRICS below): positions in bytes
  (`aeron_publisher_position_bytes`, `aeron_sender_position_bytes`, `aeron_receiver_hwm_bytes`, ...),
  `aeron_sender_back_pressure_events_total`, the channel statuses,
  `aeron_client_heartbeat_timestamp_seconds` and `aeron_clients` (connected clients); cubic congestion
  control's per-image counters as `aeron_cubic_rtt_seconds` and `aeron_cubic_window_bytes`, other
  per-image counters as `aeron_per_image{label}`; counters of other types (an application's) as
  `aeron_other_value{type_id, label}` (no `counter` in the name: promtool reserves the type names);
- the loss report: `aeron_loss_observations_total`, `aeron_loss_bytes_total` per image (labels
  channel, stream, session, source) and `aeron_loss_report_entries`;
- the error log: `aeron_error_log_distinct_errors`, `aeron_error_log_observations_total`.

The names follow Prometheus' conventions as `promtool check metrics` enforces them (docs/architecture.md,
Operations): base units as the suffix (durations and timestamps in seconds, as floats converted from
the counters' nanoseconds and milliseconds; sizes and positions in bytes), `_total` on counters only.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attrs

from . import counters
from .counters import SYSTEM_COUNTER_NAMES, SYSTEM_GAUGES, CounterRecord

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

DEFAULT_PORT = 9464

COUNTER_LABELS = ("counter_id", "type", "channel", "stream", "session")

NANOS_PER_SECOND = 1_000_000_000
MILLIS_PER_SECOND = 1_000


@attrs.frozen
class TypeMetric:
    name: str
    documentation: str
    is_count: bool = False  # a count that only grows (exposed as a counter: <name>_total)
    with_label: bool = False  # adds the counter's `label` (types whose label says what it is)
    divisor: int = 1  # the counter's value divided by this is in the metric's base unit (ns -> s: 10^9)

    def value(self, raw: int) -> float:
        return raw if self.divisor == 1 else raw / self.divisor


# counter type id -> its metric
TYPE_METRICS: dict[int, TypeMetric] = {
    counters.TYPE_PUBLISHER_LIMIT: TypeMetric("aeron_publisher_limit_bytes", "pub-lmt: how far publishers may write"),
    counters.TYPE_SENDER_POSITION: TypeMetric("aeron_sender_position_bytes", "snd-pos: how far the sender has sent"),
    counters.TYPE_RECEIVER_HWM: TypeMetric("aeron_receiver_hwm_bytes", "rcv-hwm: the highest position an image received"),
    counters.TYPE_SUBSCRIBER_POSITION: TypeMetric("aeron_subscriber_position_bytes", "sub-pos: a subscriber's position"),
    counters.TYPE_RECEIVER_POSITION: TypeMetric("aeron_receiver_position_bytes", "rcv-pos: an image's gap-free position"),
    counters.TYPE_SEND_CHANNEL_STATUS: TypeMetric("aeron_send_channel_status",
                                                  "snd-channel: -1 errored, 0 initializing, 1 active, 2 closing"),
    counters.TYPE_RECEIVE_CHANNEL_STATUS: TypeMetric("aeron_receive_channel_status",
                                                     "rcv-channel: -1 errored, 0 initializing, 1 active, 2 closing"),
    counters.TYPE_SENDER_LIMIT: TypeMetric("aeron_sender_limit_bytes", "snd-lmt: how far flow control lets the sender go"),
    counters.TYPE_PER_IMAGE: TypeMetric("aeron_per_image", "an image's congestion control counters (a strategy's own)",
                                        with_label=True),
    counters.TYPE_CLIENT_HEARTBEAT: TypeMetric("aeron_client_heartbeat_timestamp_seconds",
                                               "client-heartbeat: a connected client's last heartbeat (epoch seconds)",
                                               divisor=MILLIS_PER_SECOND),
    counters.TYPE_PUBLISHER_POSITION: TypeMetric("aeron_publisher_position_bytes", "pub-pos: a publication's position"),
    counters.TYPE_SENDER_BPE: TypeMetric("aeron_sender_back_pressure_events", "snd-bpe: back-pressure events of a sender",
                                         is_count=True),
    counters.TYPE_LOCAL_SOCKET_ADDRESS: TypeMetric("aeron_local_socket_address_status",
                                                   "a channel endpoint's bound address (label) and its status", with_label=True),
    counters.TYPE_RESOLVER_NEIGHBORS: TypeMetric("aeron_resolver_neighbors", "the driver name resolver's neighbours"),
    counters.TYPE_RESOLVER_CACHE_ENTRIES: TypeMetric("aeron_resolver_cache_entries",
                                                     "the driver name resolver's cache entries"),
    counters.TYPE_FC_RECEIVERS: TypeMetric("aeron_flow_control_receivers",
                                           "fc-receivers: receivers a min/tagged flow control tracks"),
    counters.TYPE_MDC_NUM_DEST: TypeMetric("aeron_mdc_destinations", "mdc-num-dest: destinations of an MDC publication"),
}


# per-image counters (counters.TYPE_PER_IMAGE) by the name their label starts with: cubic congestion control's
# (protocols/aa_congestion_control.c); the others stay `aeron_per_image`
PER_IMAGE_METRICS: dict[str, TypeMetric] = {
    "rcv-cc-cubic-rtt": TypeMetric("aeron_cubic_rtt_seconds",
                                   "rcv-cc-cubic-rtt: an image's round-trip time as cubic measured it (0: not yet)",
                                   with_label=True, divisor=NANOS_PER_SECOND),
    "rcv-cc-cubic-wnd": TypeMetric("aeron_cubic_window_bytes", "rcv-cc-cubic-wnd: cubic's window of an image",
                                   with_label=True),
}

# system counters whose Aeron descriptor name (SYSTEM_COUNTER_NAMES) is no Prometheus name -> the
# name with the unit last, in base units, and what their value is divided by to be in it
SYSTEM_METRICS: dict[str, tuple[str, int]] = {
    "bytes_sent": ("sent_bytes", 1),
    "bytes_received": ("received_bytes", 1),
    "bytes_currently_mapped": ("mapped_bytes", 1),
    "conductor_max_cycle_time_ns": ("conductor_max_cycle_time_seconds", NANOS_PER_SECOND),
    "sender_max_cycle_time_ns": ("sender_max_cycle_time_seconds", NANOS_PER_SECOND),
    "receiver_max_cycle_time_ns": ("receiver_max_cycle_time_seconds", NANOS_PER_SECOND),
    "name_resolver_max_time_ns": ("name_resolver_max_time_seconds", NANOS_PER_SECOND),
}


def system_metric(record: CounterRecord) -> tuple[str, float]:
    """The metric name (`aeron_<name>`) and value of a system counter: from Aeron's descriptor name
    (or its label in snake case), as SYSTEM_METRICS renames it."""
    counter_id = record.system_counter_id
    name = SYSTEM_COUNTER_NAMES.get(counter_id) if counter_id is not None else None
    if name is None:
        name = "".join(ch if ch.isalnum() else "_" for ch in record.label.lower()).strip("_")
        name = "_".join(part for part in name.split("_") if part)[:80] or f"system_{counter_id}"
    name, divisor = SYSTEM_METRICS.get(name, (name, 1))
    return f"aeron_{name}", record.value if divisor == 1 else record.value / divisor


def counter_labels(record: CounterRecord) -> list[str]:
    def text(value: object) -> str:
        return "" if value is None else str(value)

    return [str(record.id), record.type_name, text(record.channel), text(record.stream_id), text(record.session_id)]


class AeronCollector:
    """A prometheus_client collector reading the driver's CnC file (and loss report) at each scrape."""

    def __init__(self, aeron_dir: str) -> None:
        self.aeron_dir = aeron_dir

    def describe(self) -> list[Metric]:
        return []  # nothing to read at registration: the names depend on what the driver holds

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        from .driver import is_driver_active
        from .errors import AeronError
        from .monitor import CncReader

        up = GaugeMetricFamily("aeron_driver_up", "1 while a live media driver owns the directory")
        try:
            reader = CncReader(self.aeron_dir)
        except AeronError:
            up.add_metric([], 0)
            yield up
            return
        with reader:
            up.add_metric([], 1 if is_driver_active(self.aeron_dir) else 0)
            yield up
            yield from self._driver(reader)
            yield from self._counters(reader)
            yield from self._errors(reader)
        yield from self._loss()

    def _driver(self, reader: Any) -> Iterator[Metric]:
        from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily

        from .driver_control import driver_version

        info = reader.info()
        yield InfoMetricFamily("aeron_driver", "the media driver: pid, version, directory", value={
            "pid": str(info["pid"]), "version": driver_version(reader) or "unknown", "aeron_dir": self.aeron_dir})
        age = info["driver_heartbeat_age_ms"]
        heartbeat = GaugeMetricFamily("aeron_driver_heartbeat_age_seconds",
                                      "seconds since the driver's last heartbeat (-1: it has closed)")
        heartbeat.add_metric([], age / 1000 if age >= 0 else -1)
        yield heartbeat
        start = GaugeMetricFamily("aeron_driver_start_time_seconds", "when the driver started (epoch seconds)")
        start.add_metric([], info["start_timestamp_ms"] / 1000)
        yield start

    def _counters(self, reader: Any) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        families: dict[str, Any] = {}

        def family(name: str, documentation: str, is_count: bool, labels: tuple[str, ...]) -> Any:
            metric = families.get(name)
            if metric is None:
                kind = CounterMetricFamily if is_count else GaugeMetricFamily
                metric = families[name] = kind(name, documentation, labels=list(labels))
            return metric

        clients = 0
        for record in reader:
            labels = counter_labels(record)
            if record.type_id == counters.TYPE_SYSTEM:
                is_count = record.system_counter_id not in SYSTEM_GAUGES
                name, value = system_metric(record)
                family(name, record.label, is_count, COUNTER_LABELS).add_metric(labels, value)
                continue
            if record.type_id == counters.TYPE_CLIENT_HEARTBEAT:
                clients += 1
            spec = TYPE_METRICS.get(record.type_id)
            if record.type_id == counters.TYPE_PER_IMAGE:
                spec = PER_IMAGE_METRICS.get(record.label.split(":", 1)[0], spec)
            if spec is None:
                family("aeron_other_value", "counters of other types (an application's, the archive's), by type id "
                       "and label", False, (*COUNTER_LABELS, "type_id", "label")).add_metric(
                    [*labels, str(record.type_id), record.label], record.value)
            elif spec.with_label:
                family(spec.name, spec.documentation, spec.is_count, (*COUNTER_LABELS, "label")).add_metric(
                    [*labels, record.label], spec.value(record.value))
            else:
                family(spec.name, spec.documentation, spec.is_count, COUNTER_LABELS).add_metric(
                    labels, spec.value(record.value))
        yield from families.values()
        connected = GaugeMetricFamily("aeron_clients", "clients connected to the driver (client-heartbeat counters)")
        connected.add_metric([], clients)
        yield connected

    def _errors(self, reader: Any) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        errors = reader.errors()
        distinct = GaugeMetricFamily("aeron_error_log_distinct_errors", "distinct errors in the driver's error log")
        distinct.add_metric([], len(errors))
        yield distinct
        observations = CounterMetricFamily("aeron_error_log_observations",
                                           "observations of all errors in the driver's error log")
        observations.add_metric([], sum(e.count for e in errors))
        yield observations

    def _loss(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        from .errors import AeronError

        try:
            from .loss import read_loss_report  # type: ignore[import-not-found,unused-ignore]
        except ImportError:  # a build without the loss report
            return
        try:
            entries = read_loss_report(self.aeron_dir)
        except (AeronError, OSError, ValueError):  # no loss report (no driver there yet), or one being created
            entries = []
        labels = ["channel", "stream", "session", "source"]
        observations = CounterMetricFamily("aeron_loss_observations",
                                           "losses the driver observed per image (loss report)", labels=labels)
        lost = CounterMetricFamily("aeron_loss_bytes", "bytes lost per image (loss report)", labels=labels)
        for e in entries:
            values = [str(e.channel), str(e.stream_id), str(e.session_id), str(e.source)]
            observations.add_metric(values, e.observation_count)
            lost.add_metric(values, e.total_bytes_lost)
        yield observations
        yield lost
        count = GaugeMetricFamily("aeron_loss_report_entries", "images in the driver's loss report")
        count.add_metric([], len(entries))
        yield count


def registry_for(aeron_dir: str) -> Any:
    """A prometheus_client registry holding only the collector of the driver in `aeron_dir`."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry(auto_describe=False)
    registry.register(AeronCollector(aeron_dir))
    return registry


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--aeron-dir", help="the driver's directory (default $AERON_DIR or /dev/shm/aeron-<user>)")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT}; 0: any)")


def command(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("prometheus_client") is None:
        print("aeron-async exporter needs the 'monitor' extra: pip install 'aeron_async[monitor]' "
              "(missing: prometheus-client)", file=sys.stderr)
        return 2
    from prometheus_client import start_http_server

    from .driver_control import default_aeron_dir

    if not 0 <= args.port <= 65535:
        print(f"aeron-async exporter: --port {args.port} is not a port (0 to 65535)", file=sys.stderr)
        return 2
    aeron_dir = args.aeron_dir or os.environ.get("AERON_DIR") or default_aeron_dir()
    from ._stop import StopOnSignal

    stop = StopOnSignal()
    try:
        server, thread = start_http_server(args.port, addr=args.host, registry=registry_for(aeron_dir))
    except OSError as exc:
        print(f"aeron-async exporter: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    print(f"aeron-async exporter: serving the driver in {aeron_dir} at "
          f"http://{args.host}:{server.server_port}/metrics (Ctrl-C to stop)", flush=True)
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
    return 0
