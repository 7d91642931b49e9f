"""The loss report (docs/architecture.md, "The loss report"): under induced loss (the loss generator
dropping received data) the driver's loss-report.dat lists each image that lost data, with counts
that match the receiver's counters, and `aeron-async loss` prints it (LossStat's format, and JSON).

What "match" means: the receiver records one loss observation each time a gap's NAK timer fires
(Aeron's onGapDetected): the first NAK of a gap and every retry of a gap still open. A reliable image
sends a NAK on each (counted in "NAKs sent" when the send succeeds, always on loopback), an unreliable
one fills the gap with padding instead (counted in "Loss gap fills"). So on one driver the
observations of its reliable images add up to "NAKs sent" exactly, and those of its unreliable
images to "Loss gap fills". Each observation adds the gap's length to total_bytes_lost (a gap NAKed
twice counts twice, as in Aeron), so total_bytes_lost is at least 32 bytes (one frame) an observation.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time

import pytest

import aeron_async
from aeron_async.errors import ConfigurationError, DriverNotFoundError
from aeron_async.cli import main
from aeron_async.loss import HEADER, LossEntry, parse_loss_report, read_loss_report
from conftest import PYTHON, REPO, TEST_DRIVER_SETTINGS, python_env, system_counter, udp_channel, wait_for

LOSS_SETTINGS = dict(TEST_DRIVER_SETTINGS, term_buffer_length="64k", udp_receive_loss="drop:data:4%",
                     udp_loss_seed=18)


def _transfer(client: aeron_async.Aeron, channel: str, stream_id: int, count: int) -> aeron_async.Image:
    """count 200-byte messages from a publication to a subscription on channel; all of them arrive
    (a reliable stream repairs every gap; an unreliable one delivers past them)."""
    sub = client.add_subscription(channel, stream_id)
    pub = client.add_publication(channel.split("|reliable")[0], stream_id)
    wait_for(lambda: pub.is_connected and sub.images, timeout=10, what="connected")
    sent = 0
    deadline = time.monotonic() + 20
    while sent < count:
        assert time.monotonic() < deadline, f"stalled at {sent} of {count}"
        if pub.offer(sent.to_bytes(4, "little") * 50) > 0:
            sent += 1
        sub.poll_messages()
    image = sub.images[0]

    def caught_up() -> bool:
        sub.poll_messages()
        return image.position == pub.position

    wait_for(caught_up, timeout=10, what="the subscriber past the last message")
    return image


def test_loss_report_lists_each_image_with_its_naks_and_gap_fills(
        aeron_dir: str, capsys: pytest.CaptureFixture[str]) -> None:
    started_ms = int(time.time() * 1000)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **LOSS_SETTINGS) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        assert read_loss_report(driver.aeron_dir) == []   # the file is there from the start, empty
        reliable_channel = udp_channel()
        unreliable_channel = udp_channel() + "|reliable=false"
        reliable = _transfer(client, reliable_channel, 31, 1500)
        unreliable = _transfer(client, unreliable_channel, 32, 1500)
        time.sleep(0.05)   # no NAK timer is left running: every gap is repaired or filled
        entries = {e.stream_id: e for e in read_loss_report(driver.aeron_dir)}
        naks_sent = system_counter(driver.aeron_dir, "NAKs sent")
        gap_fills = system_counter(driver.aeron_dir, "Loss gap fills")
        ended_ms = int(time.time() * 1000)

        assert set(entries) == {31, 32}, entries
        for entry, image, channel in ((entries[31], reliable, reliable_channel),
                                      (entries[32], unreliable, unreliable_channel)):
            assert entry.session_id == image.session_id
            assert entry.channel == channel
            assert entry.source == image.source_identity
            assert entry.observation_count > 0
            assert entry.total_bytes_lost >= 32 * entry.observation_count
            assert started_ms <= entry.first_observation_timestamp <= entry.last_observation_timestamp <= ended_ms
        assert entries[31].observation_count == naks_sent, (entries[31], naks_sent)
        assert entries[32].observation_count == gap_fills, (entries[32], gap_fills)

        # `aeron-async loss` prints LossStat's lines (one per image) and the same entries as JSON
        run = subprocess.run([PYTHON, "-m", "aeron_async", "loss", "--aeron-dir", driver.aeron_dir],
                             env=python_env(), cwd=REPO, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        lines = run.stdout.splitlines()
        assert lines[0] == HEADER and lines[-1] == "2 entries read", lines
        fields = lines[1].split(",")
        first = entries[int(fields[5])]
        assert fields[:2] == [str(first.observation_count), str(first.total_bytes_lost)]
        assert fields[4] == str(first.session_id) and fields[6:] == [first.channel, first.source]
        capsys.readouterr()
        assert main(["loss", "--aeron-dir", driver.aeron_dir, "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert sorted((LossEntry(**e) for e in listed), key=lambda e: e.stream_id) == [entries[31], entries[32]]


def test_loss_command_json_and_a_directory_without_a_report(aeron_dir: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["loss", "--aeron-dir", aeron_dir, "--json"]) == 1
    err = capsys.readouterr().err
    assert "no loss report at" in err and "--aeron-dir" in err
    with pytest.raises(DriverNotFoundError, match="no media driver has run"):
        read_loss_report(aeron_dir)
    os.makedirs(aeron_dir)
    entry = GOLDEN_ENTRY
    with open(os.path.join(aeron_dir, "loss-report.dat"), "wb") as f:
        f.write(_encode([entry]) + bytes(4096))
    assert main(["loss", "--aeron-dir", aeron_dir, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [entry.as_dict()]
    assert main(["loss", "--aeron-dir", aeron_dir]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0] == HEADER and text[2] == "1 entries read"
    assert text[1].startswith("3,480,") and text[1].endswith(",-5,7,aeron:udp?endpoint=h:1,10.0.0.2:9")


def _encode(entries: list[LossEntry], aligned: bool = True) -> bytes:
    """Entries as Aeron's LossReport writes them (its layout, by hand): count, bytes, first, last,
    session, stream, the channel as int32 length + ASCII padded to 4 bytes, the source as int32
    length + ASCII, 64-aligned; aligned=False: without the padding, as aeron_async wrote them before."""
    out = b""
    for e in entries:
        record = struct.pack("<qqqqii", e.observation_count, e.total_bytes_lost, e.first_observation_timestamp,
                             e.last_observation_timestamp, e.session_id, e.stream_id)
        channel = struct.pack("<i", len(e.channel)) + e.channel.encode("ascii")
        record += channel + (bytes(-len(channel) % 4) if aligned else b"")
        record += struct.pack("<i", len(e.source)) + e.source.encode("ascii")
        out += record + bytes(-len(record) % 64)
    return out


# One entry of Aeron's loss report, byte for byte (LossReport.createEntry: the channel's 22 bytes
# padded to 24, so the source's length field is at 44 + 24 = 68).
GOLDEN_ENTRY = LossEntry(3, 480, 1_700_000_000_123, 1_700_000_000_456, -5, 7, "aeron:udp?endpoint=h:1", "10.0.0.2:9")
GOLDEN_BYTES = bytes.fromhex(
    "0300000000000000" "e001000000000000" "7b68e5cf8b010000" "c869e5cf8b010000"   # count, bytes, first, last
    "fbffffff" "07000000"                                                       # session -5, stream 7
    "16000000" + b"aeron:udp?endpoint=h:1".hex() + "0000"                        # channel, padded to 4
    "0a000000" + b"10.0.0.2:9".hex()                                             # source at 68
    + "00" * 46)                                                                 # 82 bytes, to 128


def test_parse_reads_aerons_golden_bytes_and_the_unaligned_layout() -> None:
    assert len(GOLDEN_BYTES) == 128 and _encode([GOLDEN_ENTRY]) == GOLDEN_BYTES
    assert parse_loss_report(GOLDEN_BYTES + bytes(64)) == [GOLDEN_ENTRY]
    # entries of files written before the source's length was aligned, around an aligned one
    odd = LossEntry(2, 64, 5, 6, 1, 2, "aeron:udp?endpoint=127.0.0.1:40123", "127.0.0.1:51000")   # 34 bytes
    old = _encode([odd], aligned=False)
    assert parse_loss_report(old + GOLDEN_BYTES + old + bytes(64)) == [odd, GOLDEN_ENTRY, odd]


def test_the_driver_writes_aerons_layout(aeron_dir: str) -> None:
    """The driver's own entries (a channel whose length is not a multiple of 4) carry the source's
    length where Aeron's LossReportReader reads it: 44 + the channel's length rounded up to 4."""
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **LOSS_SETTINGS) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        channel = udp_channel()
        channel += "|alias=" + "x" * (4 + (1 - len(channel) - 7) % 4)   # length 1 past a multiple of 4
        assert len(channel) % 4 == 1
        image = _transfer(client, channel, 33, 400)
        with open(os.path.join(driver.aeron_dir, "loss-report.dat"), "rb") as f:
            data = f.read(4096)
    (channel_length,) = struct.unpack_from("<i", data, 40)
    assert data[44:44 + channel_length].decode() == channel
    assert data[44 + channel_length:44 + channel_length + 3] == bytes(3)   # the padding
    (source_length,) = struct.unpack_from("<i", data, 44 + channel_length + 3)
    assert data[48 + channel_length + 3:48 + channel_length + 3 + source_length].decode() == image.source_identity


def test_bad_loss_report_length_is_refused(aeron_dir: str) -> None:
    with pytest.raises(ConfigurationError, match="AERON_LOSS_REPORT_BUFFER_LENGTH=100 must be from 1k"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **dict(TEST_DRIVER_SETTINGS, loss_report_buffer_length=100))


def test_loss_report_length_is_rounded_up_to_the_page_size(aeron_dir: str) -> None:
    settings = dict(TEST_DRIVER_SETTINGS, loss_report_buffer_length="5000")
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        assert os.path.getsize(os.path.join(driver.aeron_dir, "loss-report.dat")) == 8192


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
