"""Counters a client adds (owned by the client, freed when it closes or dies), the counters reader's
lookups, and `aeron-async stat` showing them."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time

import pytest

import aeron_async
from aeron_async.counters import (
    TYPE_CLIENT_HEARTBEAT,
    TYPE_PUBLISHER_LIMIT,
    TYPE_SUBSCRIBER_POSITION,
    CountersReader,
)
from conftest import PYTHON, python_env, wait_for

APP_TYPE = 1_001


def test_a_client_counter_is_read_and_updated_in_place(client: aeron_async.Aeron) -> None:
    counter = client.add_counter(APP_TYPE, b"orders\x00\x01", "orders processed")
    assert counter.id >= 0 and counter.type_id == APP_TYPE and counter.label == "orders processed"
    assert counter.registration_id >= 0 and not counter.is_closed
    assert counter.value == 0
    assert counter.increment() == 0
    assert counter.add(41) == 1
    assert counter.value == 42
    counter.value = -7
    assert counter.value == -7
    # another reader of the driver's CnC file sees the counter, its owner and its value
    with CountersReader(client.aeron_dir) as reader:
        record = reader.find_by_id(counter.id)
        assert record is not None
        assert (record.type_id, record.label, record.value) == (APP_TYPE, "orders processed", -7)
        assert record.registration_id == counter.registration_id
        assert record.owner_id == client.client_id
        assert record.key.startswith(b"orders\x00\x01") and record.key[8:] == bytes(104)
        assert record.session_id is None and record.stream_id is None
        assert reader.value(counter.id) == -7


def test_increments_from_many_threads_are_atomic(client: aeron_async.Aeron) -> None:
    counter = client.add_counter(APP_TYPE, b"", "hits")

    def work() -> None:
        for _ in range(5_000):
            counter.increment()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert counter.value == 20_000


def test_closing_a_counter_frees_it_in_the_driver(client: aeron_async.Aeron) -> None:
    counter = client.add_counter(APP_TYPE, b"k", "short-lived")
    counter_id = counter.id
    reader = client.counters_reader
    assert reader.find_by_id(counter_id) is not None
    counter.close()
    assert counter.is_closed
    wait_for(lambda: reader.find_by_id(counter_id) is None, timeout=5, what="the counter to be freed")
    with pytest.raises(aeron_async.ClosedError, match="closed"):
        counter.value = 1
    with pytest.raises(aeron_async.ClosedError):
        counter.increment()
    counter.close()  # a second close does nothing


def test_closing_the_client_frees_its_counters(driver: aeron_async.MediaDriver) -> None:
    with CountersReader(driver.aeron_dir) as reader:
        owner = aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0)
        counters = [owner.add_counter(APP_TYPE, bytes([i]), f"owned {i}") for i in range(3)]
        ids = [c.id for c in counters]
        assert all(reader.find_by_id(i) is not None for i in ids)
        owner.close()
        assert all(c.is_closed for c in counters)
        with pytest.raises(aeron_async.ClosedError):
            counters[0].increment()
        wait_for(lambda: all(reader.find_by_id(i) is None for i in ids), timeout=5,
                 what="the closed client's counters to be freed")


CHILD_WITH_COUNTER = """
import sys, time, aeron_async
client = aeron_async.Aeron.connect(sys.argv[1], driver_timeout=5.0)
counter = client.add_counter(1001, b"killed", "counter of a killed client")
counter.value = 99
print(counter.id, client.client_id, flush=True)
time.sleep(60)
"""


def test_a_counter_is_freed_when_its_client_process_is_killed(driver: aeron_async.MediaDriver) -> None:
    proc = subprocess.Popen([PYTHON, "-c", CHILD_WITH_COUNTER, driver.aeron_dir], env=python_env(),
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line, "the child client did not start"
        counter_id, client_id = (int(x) for x in line.split())
        reader = CountersReader(driver.aeron_dir)
        record = reader.find_by_id(counter_id)
        assert record is not None and record.value == 99 and record.owner_id == client_id
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        started = time.monotonic()
        # the test driver's client liveness timeout is 2 s
        wait_for(lambda: reader.find_by_id(counter_id) is None, timeout=10,
                 what="the killed client's counter to be freed")
        assert time.monotonic() - started < 8
        assert not [r for r in reader.find_by_type_id(TYPE_CLIENT_HEARTBEAT) if r.registration_id == client_id]
        reader.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_counters_reader_lookups(client: aeron_async.Aeron) -> None:
    pub = client.add_publication("aeron:ipc", 71)
    sub = client.add_subscription("aeron:ipc", 71)
    wait_for(lambda: sub.images, timeout=5, what="image")
    a = client.add_counter(APP_TYPE, b"\x01\x02\x03", "alpha counter")
    b = client.add_counter(APP_TYPE, b"\x01\x02\x04", "beta counter")
    c = client.add_counter(APP_TYPE + 1, b"\x09", "gamma")
    reader = client.counters_reader

    assert [r.id for r in reader.find_by_type_id(APP_TYPE)] == sorted([a.id, b.id])
    assert [r.id for r in reader.find_by_label("gamma")] == [c.id]
    assert reader.find_by_label("gamm") == []  # a str label matches whole
    assert sorted(r.id for r in reader.find_by_label(re.compile(r"^(alpha|beta) "))) == sorted([a.id, b.id])
    assert [r.id for r in reader.find_by_key(b"\x01\x02")] == sorted([a.id, b.id])
    assert [r.id for r in reader.find_by_key(b"\x01\x02\x04")] == [b.id]
    assert reader.find_by_key(b"\x01\x02", type_id=APP_TYPE + 1) == []
    found = reader.find_by_type_id_and_registration_id(APP_TYPE + 1, c.registration_id)
    assert found is not None and found.id == c.id
    assert reader.find_by_type_id_and_registration_id(APP_TYPE, c.registration_id) is None
    assert {a.id, b.id, c.id} <= {r.id for r in reader.find_by_owner_id(client.client_id)}
    assert reader.find_by_owner_id(client.client_id + 1_000_000) == []
    # the driver's own counters are there too: the publication's limit and the subscriber's position
    limits = [r for r in reader.find_by_type_id(TYPE_PUBLISHER_LIMIT) if r.registration_id == pub.registration_id]
    assert len(limits) == 1 and limits[0].id == pub.position_limit_counter_id
    assert limits[0].stream_id == 71 and limits[0].session_id == pub.session_id
    positions = [r for r in reader.find_by_type_id(TYPE_SUBSCRIBER_POSITION) if r.registration_id == sub.registration_id]
    assert len(positions) == 1 and positions[0].label.startswith("sub-pos")
    assert len(list(reader)) >= 3 + 2
    assert reader.max_counter_id > c.id
    # bad lookups say what was wrong
    with pytest.raises(aeron_async.ConfigurationError, match="outside"):
        reader.find_by_id(reader.max_counter_id + 1)
    with pytest.raises(aeron_async.ConfigurationError, match="outside"):
        reader.value(-1)
    with pytest.raises(TypeError):
        reader.find_by_id("1")  # type: ignore[arg-type]
    with pytest.raises(aeron_async.ConfigurationError, match="112"):
        reader.find_by_key(bytes(113))


def test_bad_counters_are_refused(client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.ConfigurationError, match="key is at most 112"):
        client.add_counter(APP_TYPE, bytes(113), "too long a key")
    with pytest.raises(aeron_async.ConfigurationError, match="label is at most 380"):
        client.add_counter(APP_TYPE, b"", "x" * 381)
    with pytest.raises(TypeError, match="int32"):
        client.add_counter(2**31, b"", "type too big")
    with pytest.raises(TypeError, match="key"):
        client.add_counter(APP_TYPE, "not bytes", "label")  # type: ignore[arg-type]
    # the limits themselves are accepted
    counter = client.add_counter(APP_TYPE, bytes(range(112)), "y" * 380)
    record = client.counters_reader.find_by_id(counter.id)
    assert record is not None and record.key == bytes(range(112)) and record.label == "y" * 380


def test_a_reader_without_a_driver_and_a_closed_reader(aeron_dir: str, client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.DriverNotFoundError):
        CountersReader(aeron_dir + "-none")
    reader = CountersReader(client.aeron_dir)
    reader.close()
    with pytest.raises(aeron_async.ClosedError):
        list(reader)


def test_stat_shows_client_counters(client: aeron_async.Aeron) -> None:
    counter = client.add_counter(APP_TYPE, b"", "requests served")
    counter.value = 1_234_567
    out = subprocess.run([PYTHON, "-m", "aeron_async", "stat", "--aeron-dir", client.aeron_dir, "--count", "1"],
                         env=python_env(), capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if "requests served" in line)
    assert line.split(":")[0].strip() == str(counter.id)
    assert "1,234,567" in line
    assert re.search(rf"client-heartbeat: {client.client_id}\b", out.stdout)


@pytest.mark.anyio
async def test_async_client_adds_a_counter(aeron_dir: str) -> None:
    from conftest import TEST_DRIVER_SETTINGS

    async with aeron_async.connect(aeron_dir, embedded_driver=True, **TEST_DRIVER_SETTINGS) as aclient:
        counter = await aclient.add_counter(APP_TYPE, b"async", "async counter")
        counter.increment()
        record = aclient.counters_reader.find_by_id(counter.id)
        assert record is not None and record.label == "async counter" and record.value == 1
        assert record.owner_id == aclient.client_id
    assert counter.is_closed
