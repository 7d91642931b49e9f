"""Operating a driver (docs/architecture.md, "Operations"): the counters API, `aeron-async stat` from another
process (rates against a publisher paced by a clock, filters, --once, --json), the exporter's
/metrics (parsed with prometheus_client's own parsers, every counter with its labels, values moving
with traffic; its names linted by `promtool check metrics`, values in base units) and the Grafana
dashboard (valid, naming only metrics the exporter serves)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import struct
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

import aeron_async
from aeron_async.counters import (
    KEY_MAX_LENGTH,
    SYSTEM_COUNTER_NAMES,
    TYPE_PER_IMAGE,
    TYPE_PUBLISHER_LIMIT,
    TYPE_PUBLISHER_POSITION,
    TYPE_SYSTEM,
    CounterFilter,
    CounterRates,
    CounterRecord,
    CountersReader,
    parse_counter_type,
)
from conftest import PYTHON, REPO, TEST_DRIVER_SETTINGS, python_env, wait_for

prometheus_parser = pytest.importorskip("prometheus_client.parser")  # the 'monitor' extra (./dev installs it)

DASHBOARD = os.path.join(REPO, "examples", "monitoring", "grafana-dashboard.json")
FRAME = 256  # a 224-byte message takes a 256-byte frame (32-byte header, 32-byte alignment)


def stat(aeron_dir: str, *args: str, timeout: float = 30) -> str:
    out = subprocess.run([PYTHON, "-m", "aeron_async", "stat", "--aeron-dir", aeron_dir, *args], env=python_env(),
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout


class PacedPublisher(threading.Thread):
    """Offers 224-byte messages at `rate` a second on an absolute schedule (a late wake-up catches
    up, so any window holds rate x its length), polling the subscription as it goes."""

    def __init__(self, pub: aeron_async.Publication, sub: aeron_async.Subscription, rate: int) -> None:
        super().__init__(daemon=True)
        self.pub, self.sub, self.rate = pub, sub, rate
        self.stop = threading.Event()
        self.sent = 0

    def run(self) -> None:
        payload = b"r" * (FRAME - 32)
        start = time.monotonic()
        while not self.stop.is_set():
            due = int((time.monotonic() - start) * self.rate)
            while self.sent < due and self.pub.offer(payload) > 0:
                self.sent += 1
            self.sub.poll(lambda data, header: None, 1000)
            time.sleep(0.001)


@pytest.fixture
def streams(client: aeron_async.Aeron) -> Iterator[dict[str, Any]]:
    """Two IPC streams: 1001 on aeron:ipc, 1002 on aeron:ipc?term-length=64k."""
    sub1 = client.add_subscription("aeron:ipc", 1001)
    pub1 = client.add_publication("aeron:ipc", 1001)
    sub2 = client.add_subscription("aeron:ipc?term-length=64k", 1002)
    pub2 = client.add_publication("aeron:ipc?term-length=64k", 1002)
    wait_for(lambda: pub1.is_connected and pub2.is_connected, timeout=10, what="publications connected")
    yield {"pub1": pub1, "sub1": sub1, "pub2": pub2, "sub2": sub2}


def test_stat_rates_match_a_paced_publisher(client: aeron_async.Aeron, streams: dict[str, Any]) -> None:
    rate = 4000  # messages a second: 1,024,000 bytes a second
    publisher = PacedPublisher(streams["pub1"], streams["sub1"], rate)
    publisher.start()
    try:
        wait_for(lambda: publisher.sent > rate // 10, timeout=10, what="the publisher to run")
        out = stat(client.aeron_dir, "--json", "--count", "2", "--interval", "2", "--stream", "1001",
                   "--type", "pub-pos", "--type", "sub-pos")
    finally:
        publisher.stop.set()
        publisher.join(timeout=10)
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["interval"] is None and all(c["rate"] is None for c in first["counters"])
    assert 1.9 < second["interval"] < 4.0
    kinds = sorted(c["type"] for c in second["counters"])
    assert kinds == ["pub-pos", "sub-pos"], second["counters"]
    for c in second["counters"]:
        assert c["stream_id"] == 1001 and c["channel"] == "aeron:ipc"
        assert abs(c["rate"] - rate * FRAME) <= 0.1 * rate * FRAME, (c, rate * FRAME)


def test_stat_json_has_every_counter(client: aeron_async.Aeron, streams: dict[str, Any]) -> None:
    document = json.loads(stat(client.aeron_dir, "--json"))
    with CountersReader(client.aeron_dir) as reader:
        expected = {r.id: r for r in reader}
    got = {c["id"]: c for c in document["counters"]}
    assert got.keys() == expected.keys()
    for counter_id, r in expected.items():
        c = got[counter_id]
        assert (c["type_id"], c["label"], c["registration_id"]) == (r.type_id, r.label, r.registration_id)
    assert document["driver"]["pid"] == os.getpid() and document["driver"]["version"] == aeron_async.__version__
    assert 0 <= document["driver"]["heartbeat_age_ms"] < 2000


def test_counter_filters_select_what_they_say(client: aeron_async.Aeron, streams: dict[str, Any]) -> None:
    pub2 = streams["pub2"]
    with CountersReader(client.aeron_dir) as reader:
        everything = list(reader)
        by_type = reader.select(types=["pub-pos"])
        assert by_type and {r.type_id for r in by_type} == {TYPE_PUBLISHER_POSITION}
        assert len(by_type) == sum(1 for r in everything if r.type_id == TYPE_PUBLISHER_POSITION) == 2
        by_stream = reader.select(stream_id=1002)
        assert {r.type_name for r in by_stream} == {"pub-lmt", "pub-pos", "sub-pos"}
        by_channel = reader.select(channel=r"term-length=64k")
        assert {r.id for r in by_channel} == {r.id for r in by_stream}
        assert all(r.channel == "aeron:ipc?term-length=64k" for r in by_channel)
        by_session = reader.select(session_id=pub2.session_id)
        assert {r.id for r in by_session} == {r.id for r in by_stream}
        by_label = reader.select(label=r"^pub-lmt")
        assert {r.type_id for r in by_label} == {TYPE_PUBLISHER_LIMIT} and len(by_label) == 2
        system = reader.select(CounterFilter(types=["system"], label="^NAKs (sent|received)$"))
        assert {r.label for r in system} == {"NAKs sent", "NAKs received"}
        assert all(r.kind == "count" for r in system)
    assert parse_counter_type("type-1001") == 1001 and parse_counter_type(12) == 12
    with pytest.raises(aeron_async.ConfigurationError, match="unknown counter type 'pub-position'"):
        parse_counter_type("pub-position")
    with pytest.raises(aeron_async.ConfigurationError, match="not a valid regular expression"):
        CounterFilter(label="(")

    # the command line: the same filters, from another process
    lines = stat(client.aeron_dir, "--once", "--type", "pub-pos", "--stream", "1002").splitlines()
    counters = [line for line in lines if re.match(r"^\s*\d+:\s+-?[\d,]+ - ", line)]
    assert len(counters) == 1 and f"pub-pos (sampled): {pub2.registration_id} {pub2.session_id} 1002 " in counters[0]
    assert "driver pid" in lines[0] and aeron_async.__version__ in lines[0]
    document = json.loads(stat(client.aeron_dir, "--json", "--channel", "64k", "--session", str(pub2.session_id),
                               "--label", "^(pub|sub)-"))
    assert sorted(c["type"] for c in document["counters"]) == ["pub-lmt", "pub-pos", "sub-pos"]
    bad = subprocess.run([PYTHON, "-m", "aeron_async", "stat", "--aeron-dir", client.aeron_dir, "--once", "--type",
                          "nonsense"], env=python_env(), capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1 and "unknown counter type 'nonsense'" in bad.stderr


def test_counter_rates_with_a_clock(client: aeron_async.Aeron) -> None:
    counter = client.add_counter(1001, b"", "app requests")
    now = [100.0]
    with CountersReader(client.aeron_dir) as reader:
        rates = CounterRates(reader, CounterFilter(types=[1001]), clock=lambda: now[0])
        assert [s.rate for s in rates.sample().samples] == [None]
        counter.value = 500
        now[0] += 2.0
        snapshot = rates.sample()
        # an application's counter is a gauge unless it says otherwise: no rate
        assert snapshot.interval == 2.0 and [s.rate for s in snapshot.samples] == [None]
        system = CounterRates(reader, CounterFilter(types=["system"], label="^Errors$"), clock=lambda: now[0])
        system.sample()
        now[0] += 0.5
        assert [s.rate for s in system.sample().samples] == [0.0]


def test_stat_live_view_renders_rates(client: aeron_async.Aeron, streams: dict[str, Any]) -> None:
    rich_console = pytest.importorskip("rich.console")
    from aeron_async.monitor import CncReader
    from aeron_async.stat import driver_header, render_table

    with CncReader(client.aeron_dir) as reader:
        rates = CounterRates(reader, CounterFilter(stream_id=1001))
        rates.sample()
        streams["pub1"].offer(b"x" * 224)
        time.sleep(0.05)
        snapshot = rates.sample()
        console = rich_console.Console(record=True, width=200)
        console.print(render_table(driver_header(reader), snapshot, client.aeron_dir))
    text = console.export_text()
    assert f"pid {os.getpid()}" in text and "heartbeat" in text and aeron_async.__version__ in text
    assert re.search(r"pub-pos .*[1-9][0-9.]* [KMG]?B/s", text), text


# ---- the exporter ----


def stream_through_loss(pub: aeron_async.Publication, sub: aeron_async.Subscription, message: bytes,
                        count: int = 300) -> None:
    """Offers `count` copies of `message` and waits until `sub` has them all, losses recovered."""
    received: list[int] = []
    for _ in range(count):
        wait_for(lambda: pub.offer(message) > 0, timeout=10, what="an offer")
    wait_for(lambda: sub.poll(lambda d, h: received.append(1), 100) >= 0 and len(received) >= count, timeout=15,
             what=f"{count} messages, losses recovered")


def scrape(url: str, openmetrics: bool = False) -> str:
    request = urllib.request.Request(url)
    if openmetrics:
        request.add_header("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8")
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(response.read().decode())


@contextlib.contextmanager
def running_exporter(aeron_dir: str) -> Iterator[str]:
    """`aeron-async exporter` in its own process for the driver in `aeron_dir`; yields its /metrics URL."""
    proc = subprocess.Popen([PYTHON, "-m", "aeron_async", "exporter", "--aeron-dir", aeron_dir, "--host",
                             "127.0.0.1", "--port", "0"], env=python_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/metrics)", line)
        assert match, line + (proc.stdout.read() if proc.poll() is not None else "")
        yield match.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def exporter(driver: aeron_async.MediaDriver) -> Iterator[str]:
    with running_exporter(driver.aeron_dir) as url:
        yield url


def samples(text: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for family in prometheus_parser.text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, []).append(s)
    return out


def test_exporter_serves_every_counter_with_labels_and_values_move(client: aeron_async.Aeron, exporter: str) -> None:
    sub = client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 77)
    wait_for(lambda: sub.local_socket_addresses, timeout=10, what="the subscription's bound address")
    channel = f"aeron:udp?endpoint={sub.local_socket_addresses[0]}|fc=min"  # min: an fc-receivers counter too
    pub = client.add_publication(channel, 77)
    wait_for(lambda: pub.is_connected, timeout=10, what="the UDP publication connected")

    before = samples(scrape(exporter))
    with CountersReader(client.aeron_dir) as reader:
        records = {r.id: r for r in reader}
    served = {int(s.labels["counter_id"]): s for name, found in before.items() for s in found
              if "counter_id" in s.labels}
    assert set(records) <= set(served), set(records) - set(served)
    for counter_id, r in records.items():
        labels = served[counter_id].labels
        assert labels["type"] == r.type_name and labels["channel"] == (r.channel or ""), (labels, r)
        assert labels["stream"] == ("" if r.stream_id is None else str(r.stream_id)), (labels, r)
        assert labels["session"] == ("" if r.session_id is None else str(r.session_id)), (labels, r)
    [pub_pos] = [s for s in before["aeron_publisher_position_bytes"] if s.labels["stream"] == "77"]
    assert pub_pos.labels["channel"] == channel and pub_pos.labels["session"] == str(pub.session_id)
    assert pub_pos.labels["type"] == "pub-pos"
    assert {s.labels["type"] for s in before["aeron_sender_position_bytes"]} == {"snd-pos"}
    assert before["aeron_driver_up"][0].value == 1 and before["aeron_clients"][0].value == 1
    assert before["aeron_driver_info"][0].labels["pid"] == str(os.getpid())
    assert "aeron_error_log_observations_total" in before and "aeron_sent_bytes_total" in before

    received: list[int] = []
    for _ in range(200):
        wait_for(lambda: pub.offer(b"m" * 200) > 0, timeout=10, what="an offer")
    wait_for(lambda: sub.poll(lambda d, h: received.append(1), 100) >= 0 and len(received) >= 200, timeout=10,
             what="200 messages")
    after = samples(scrape(exporter))
    [pub_pos_after] = [s for s in after["aeron_publisher_position_bytes"] if s.labels["stream"] == "77"]
    assert pub_pos_after.value >= pub_pos.value + 200 * 256
    assert after["aeron_sent_bytes_total"][0].value > before["aeron_sent_bytes_total"][0].value
    assert after["aeron_received_bytes_total"][0].value > before["aeron_received_bytes_total"][0].value

    # OpenMetrics, parsed by prometheus_client's own OpenMetrics parser
    from prometheus_client.openmetrics import parser as openmetrics_parser

    families = {f.name: f for f in openmetrics_parser.text_string_to_metric_families(scrape(exporter, True))}
    assert families["aeron_sent_bytes"].type == "counter" and families["aeron_publisher_position_bytes"].type == "gauge"

    # the dashboard names only metrics the exporter serves (with these counters present; the loss
    # report's families are served without series until a loss: test_exporter_serves_the_loss_report)
    names = set(after) | families_served(scrape(exporter))
    assert {"aeron_loss_report_entries", "aeron_loss_bytes_total", "aeron_loss_observations_total"} <= names
    used = dashboard_metric_names()
    assert used - names == set(), f"the dashboard names metrics the exporter does not serve: {used - names}"


def families_served(text: str) -> set[str]:
    """The metric names /metrics declares, with or without series (counters with their _total)."""
    return {f.name + ("_total" if f.type == "counter" else "")
            for f in prometheus_parser.text_string_to_metric_families(text)}


def dashboard_metric_names() -> set[str]:
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
    return {name for expr in exprs for name in re.findall(r"\baeron_[a-z0-9_]+", expr)}


def test_dashboard_is_a_grafana_dashboard() -> None:
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    assert dashboard["uid"] and dashboard["title"] and isinstance(dashboard["schemaVersion"], int)
    assert {v["name"] for v in dashboard["templating"]["list"]} == {"datasource", "instance"}
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    titles = set()
    for panel in dashboard["panels"]:
        assert panel["type"] in ("row", "timeseries", "stat"), panel
        grid = panel["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24 and grid["h"] > 0
        titles.add(panel["title"])
        if panel["type"] != "row":
            assert panel["targets"] and all(t["expr"] and t["refId"] for t in panel["targets"])
            assert panel["datasource"]["uid"] == "${datasource}"
    for wanted in ("Publication rate", "Back-pressure events", "NAKs and retransmits", "Bytes lost per image",
                   "Errors", "Connected clients"):
        assert wanted in titles
    assert {"aeron_nak_messages_sent_total", "aeron_retransmits_sent_total", "aeron_sender_back_pressure_events_total",
            "aeron_loss_bytes_total", "aeron_errors_total", "aeron_clients"} <= dashboard_metric_names()


def test_exporter_serves_the_loss_report(aeron_dir: str) -> None:
    """Under induced loss the loss report's totals are served per image, as `read_loss_report` has them."""
    from aeron_async import loss
    settings = dict(TEST_DRIVER_SETTINGS, udp_receive_loss="drop:data:10%", udp_loss_seed=7)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings), \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client, running_exporter(aeron_dir) as url:
        sub = client.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 78)
        wait_for(lambda: sub.local_socket_addresses, timeout=10, what="the subscription's bound address")
        pub = client.add_publication(f"aeron:udp?endpoint={sub.local_socket_addresses[0]}", 78)
        wait_for(lambda: pub.is_connected, timeout=10, what="the UDP publication connected")
        stream_through_loss(pub, sub, b"l" * 500)
        entries = [e for e in loss.read_loss_report(aeron_dir) if e.stream_id == 78]
        assert entries and entries[0].total_bytes_lost > 0
        found = samples(scrape(url))
    [lost] = [s for s in found["aeron_loss_bytes_total"] if s.labels["stream"] == "78"]
    [observed] = [s for s in found["aeron_loss_observations_total"] if s.labels["stream"] == "78"]
    assert lost.labels["session"] == str(pub.session_id) and lost.labels["channel"] == entries[0].channel
    assert lost.value >= entries[0].total_bytes_lost and observed.value >= entries[0].observation_count
    assert found["aeron_loss_report_entries"][0].value >= 1


# ---- the exporter's names: Prometheus' conventions as promtool enforces them ----


def promtool_check(text: str) -> tuple[int, str]:
    """`promtool check metrics` on an exposition: its exit status and everything it printed."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: ./dev setup installs it (Debian's prometheus package)"
    done = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


def test_promtool_finds_nothing_in_a_live_scrape(aeron_dir: str) -> None:
    """A driver with traffic under loss (the loss report), cubic congestion control measuring the RTT,
    min flow control and an application's counter: its live /metrics passes `promtool check metrics`
    without a word, and the values converted to base units bracket the counters they come from."""
    settings = dict(TEST_DRIVER_SETTINGS, udp_receive_loss="drop:data:10%", udp_loss_seed=7,
                    cubiccongestioncontrol_measurertt=True)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings), \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client, running_exporter(aeron_dir) as url:
        sub = client.add_subscription("aeron:udp?endpoint=127.0.0.1:0|cc=cubic", 79)
        wait_for(lambda: sub.local_socket_addresses, timeout=10, what="the subscription's bound address")
        endpoint = sub.local_socket_addresses[0]
        pub = client.add_publication(f"aeron:udp?endpoint={endpoint}|fc=min", 79)
        app = client.add_counter(4242, label="orders processed")
        app.value = 7
        wait_for(lambda: pub.is_connected, timeout=10, what="the UDP publication connected")
        stream_through_loss(pub, sub, b"p" * 500)
        wait_for(lambda: samples(scrape(url))["aeron_loss_report_entries"][0].value >= 1, timeout=10,
                 what="a loss in the loss report")

        def rtt_measured() -> bool:
            rtts = samples(scrape(url)).get("aeron_cubic_rtt_seconds", [])
            return bool(rtts) and all(s.value > 0 for s in rtts)

        wait_for(rtt_measured, timeout=10, what="cubic's RTT measured")
        with CountersReader(aeron_dir) as reader:
            before = {r.id: r.value for r in reader}
        text = scrape(url)
        with CountersReader(aeron_dir) as reader:
            after = {r.id: r.value for r in reader}

    status, output = promtool_check(text)
    assert (status, output) == (0, ""), output
    found = samples(text)
    assert {"aeron_sent_bytes_total", "aeron_received_bytes_total", "aeron_mapped_bytes",
            "aeron_conductor_max_cycle_time_seconds", "aeron_sender_max_cycle_time_seconds",
            "aeron_receiver_max_cycle_time_seconds", "aeron_name_resolver_max_time_seconds",
            "aeron_client_heartbeat_timestamp_seconds", "aeron_cubic_rtt_seconds", "aeron_cubic_window_bytes",
            "aeron_flow_control_receivers", "aeron_sender_back_pressure_events_total",
            "aeron_loss_bytes_total", "aeron_loss_observations_total", "aeron_other_value"} <= set(found)
    # seconds from nanoseconds (the max cycle times only grow) and from epoch milliseconds (heartbeats)
    for name, per_second in (("aeron_conductor_max_cycle_time_seconds", 10**9),
                             ("aeron_sender_max_cycle_time_seconds", 10**9),
                             ("aeron_receiver_max_cycle_time_seconds", 10**9),
                             ("aeron_client_heartbeat_timestamp_seconds", 1000)):
        for sample in found[name]:
            counter_id = int(sample.labels["counter_id"])
            assert before[counter_id] / per_second <= sample.value <= after[counter_id] / per_second, (name, sample)
    [rtt] = [s for s in found["aeron_cubic_rtt_seconds"] if s.labels["stream"] == "79"]
    assert 0 < rtt.value < 1 and rtt.labels["label"].startswith("rcv-cc-cubic-rtt: ")   # loopback: far below 1 s
    [window] = [s for s in found["aeron_cubic_window_bytes"] if s.labels["stream"] == "79"]
    assert window.value >= 1 and window.value.is_integer()   # bytes, not scaled (cwnd x MTU)
    [sent] = found["aeron_sent_bytes_total"]
    assert before[int(sent.labels["counter_id"])] <= sent.value <= after[int(sent.labels["counter_id"])]
    [counter] = [s for s in found["aeron_other_value"] if s.labels["type_id"] == "4242"]
    assert counter.value == 7 and counter.labels["label"] == "orders processed"


def test_promtool_finds_nothing_in_any_name_the_exporter_gives() -> None:
    """Every name the collector can give (each system counter Aeron names, each counter type, each
    per-image counter, another per-image counter and an application's counter), one series each
    from records made here, passes `promtool check metrics`; the ones a live test driver lacks (the
    name resolver's, mdc-num-dest) included."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.registry import Collector

    from aeron_async.exporter import PER_IMAGE_METRICS, TYPE_METRICS, AeronCollector

    def record(counter_id: int, type_id: int, label: str, key: bytes) -> CounterRecord:
        return CounterRecord(id=counter_id, type_id=type_id, value=1_500_000, registration_id=counter_id,
                             owner_id=0, label=label, key=key.ljust(KEY_MAX_LENGTH, b"\0"))

    def stream_key(counter_id: int) -> bytes:
        return struct.pack("<qii", counter_id, 1234, 10)   # registration id, session id, stream id

    records = [record(i, TYPE_SYSTEM, name.replace("_", " "), struct.pack("<i", i))
               for i, name in SYSTEM_COUNTER_NAMES.items()]
    for type_id, spec in TYPE_METRICS.items():
        records.append(record(len(records), type_id, f"{spec.documentation.split(':')[0]}: 1 1234 10 aeron:udp",
                              stream_key(len(records))))
    for per_image in [*PER_IMAGE_METRICS, "rcv-cc-of-a-strategy"]:
        records.append(record(len(records), TYPE_PER_IMAGE, f"{per_image}: 1 1234 10 aeron:udp",
                              stream_key(len(records))))
    records.append(record(len(records), 4242, "an application's counter", b""))

    families = list(AeronCollector("unused")._counters(records))

    class Families(Collector):
        def collect(self) -> Any:
            return families

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Families())
    text = generate_latest(registry).decode()
    # the strategy's per-image counter joins TYPE_METRICS' aeron_per_image; aeron_other_value and aeron_clients
    assert len(samples(text)) == len(SYSTEM_COUNTER_NAMES) + len(TYPE_METRICS) + len(PER_IMAGE_METRICS) + 2
    assert samples(text)["aeron_conductor_max_cycle_time_seconds"][0].value == 0.0015   # 1.5 ms in ns
    status, output = promtool_check(text)
    assert (status, output) == (0, ""), output
