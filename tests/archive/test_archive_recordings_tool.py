"""`aeron-async recordings` on an archive directory's files (the archive stopped): list, describe,
verify frames and checksums (and find a corrupted frame), migrate recordings into another archive
directory, which an archive started there then replays unchanged."""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Iterator
from typing import Any

import pytest

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal
from aeron_async.cli import main
from support.archive_e2e import Stream, archive_beside_driver, assert_same_stream, collect, record, wait_recorded
from conftest import new_aeron_dir


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["recordings", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def recorded(tmp_path: Any) -> Iterator[tuple[str, Stream, list[int]]]:
    """An archive directory holding two stopped recordings (stream 6001 with CRC-32C frame checksums,
    6002), the archive closed."""
    archive_dir = str(tmp_path / "archive")
    aeron_dir = new_aeron_dir()
    stream = Stream(5000, seed=5)
    ids = []
    try:
        with archive_beside_driver(aeron_dir, archive_dir, record_checksum="CRC-32C") as service, \
                aeron_async.Aeron.connect(service.aeron_dir) as client, AeronArchive.connect(client) as archive:
            for stream_id in (6001, 6002):
                publication = client.add_exclusive_publication("aeron:ipc?term-length=256k", stream_id)
                subscription_id, recording_id = record(archive, "aeron:ipc?term-length=256k", stream_id)
                end = stream.publish(publication)
                wait_recorded(archive, recording_id, end)
                archive.stop_recording(subscription_id=subscription_id)
                archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id)
                publication.close()
                ids.append(recording_id)
        yield archive_dir, stream, ids
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)


def test_list_describe_verify_and_find_a_corrupt_frame(recorded: tuple[str, Stream, list[int]],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    archive_dir, stream, ids = recorded
    end = stream.positions[-1]
    code, out = run(capsys, "list", "--archive-dir", archive_dir)
    assert code == 0
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [(int(r[0]), r[1], int(r[2]), int(r[3]), int(r[4])) for r in rows] == [
        (ids[0], "VALID", 0, end, 6001), (ids[1], "VALID", 0, end, 6002)]
    code, out = run(capsys, "describe", "--archive-dir", archive_dir, str(ids[1]))
    assert code == 0 and f"stop_position        {end}" in out and "original_channel     aeron:ipc?term-length=256k" in out
    assert f"segment {ids[1]}-0.rec" in out
    code, out = run(capsys, "verify", "--archive-dir", archive_dir, "--checksum", "crc-32c")
    assert code == 0, out
    frames = len(stream)  # every message is a frame or more (fragments), plus pads
    lines = out.splitlines()
    assert [line.split(",")[0] for line in lines] == [f"recording {i}: OK" for i in ids], out
    assert all(line.endswith(f"frames up to {end}") and int(line.split()[3]) >= frames for line in lines), out

    # flip a payload byte of the 100th frame of the first recording: its checksum no longer matches
    frame = stream.positions[98]
    path = os.path.join(archive_dir, f"{ids[0]}-0.rec")
    with open(path, "r+b") as f:
        f.seek(frame + 32)
        byte = f.read(1)
        f.seek(frame + 32)
        f.write(bytes([byte[0] ^ 0xFF]))
    code, out = run(capsys, "verify", "--archive-dir", archive_dir, str(ids[0]), "--checksum", "crc-32c")
    assert code == 1 and f"position {frame}: " in out and "checksum" in out, out
    # and a frame that says another stream: found without checksums too
    with open(path, "r+b") as f:
        f.seek(frame + 16)
        f.write(struct.pack("<i", 7777))
    code, out = run(capsys, "verify", "--archive-dir", archive_dir, str(ids[0]))
    assert code == 1 and f"position {frame}: " in out and "another stream id" in out, out
    code, out = run(capsys, "verify", "--archive-dir", archive_dir, str(ids[1]))
    assert code == 0, out
    code, out = run(capsys, "list", "--archive-dir", os.path.dirname(archive_dir))
    assert code == 1 and "has no archive.catalog" in out


def test_migrate_into_another_archive_which_replays_it(recorded: tuple[str, Stream, list[int]], tmp_path: Any,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    archive_dir, stream, ids = recorded
    destination = str(tmp_path / "other")
    code, out = run(capsys, "migrate", "--archive-dir", archive_dir, destination, str(ids[1]), "--move")
    assert code == 0 and out.strip() == f"recording {ids[1]} -> {destination} recording 0", out
    code, out = run(capsys, "list", "--archive-dir", archive_dir, "--all")
    states = {int(line.split()[0]): line.split()[1] for line in out.splitlines()[1:]}
    assert states == {ids[0]: "VALID", ids[1]: "DELETED"}
    assert not os.path.exists(os.path.join(archive_dir, f"{ids[1]}-0.rec"))
    code, out = run(capsys, "migrate", "--archive-dir", archive_dir, destination, "99")
    assert code == 1 and "recording 99 is not a valid recording" in out
    aeron_dir = new_aeron_dir()
    try:
        with archive_beside_driver(aeron_dir, destination) as service, \
                aeron_async.Aeron.connect(service.aeron_dir) as client, AeronArchive.connect(client) as archive:
            (descriptor,) = archive.list_recordings()
            assert (descriptor.recording_id, descriptor.stream_id, descriptor.stop_position) == (
                0, 6002, stream.positions[-1])
            with archive.replay(0, position=0) as replay:
                assert_same_stream(stream, 0, len(stream), collect(replay))
            code, out = run(capsys, "migrate", "--archive-dir", destination, str(tmp_path / "third"))
            assert code == 1 and "is running" in out
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)


def test_an_active_recording_is_listed_and_verified_while_the_archive_runs(
        tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    archive_dir = str(tmp_path / "archive")
    aeron_dir = new_aeron_dir()
    stream = Stream(3000, seed=8)
    try:
        with archive_beside_driver(aeron_dir, archive_dir) as service, \
                aeron_async.Aeron.connect(service.aeron_dir) as client, AeronArchive.connect(client) as archive:
            publication = client.add_exclusive_publication("aeron:ipc?term-length=256k", 6003)
            _, recording_id = record(archive, "aeron:ipc?term-length=256k", 6003)
            end = stream.publish(publication)
            wait_recorded(archive, recording_id, end)
            code, out = run(capsys, "list", "--archive-dir", archive_dir)
            assert code == 0 and out.splitlines()[1].split()[:4] == [str(recording_id), "VALID", "0", "active"], out
            code, out = run(capsys, "verify", "--archive-dir", archive_dir)
            assert code == 0 and out.strip().endswith(f"frames up to {end}"), out
            publication.close()
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)


def test_replay_checksums_deliver_up_to_a_corrupt_frame_then_fail(recorded: tuple[str, Stream, list[int]]) -> None:
    """An archive verifying CRC-32C on replay (the replayer reads segments straight into the replay
    log and checks each frame there) replays an intact recording unchanged, and a corrupted one up
    to the last whole message before the corrupt frame, then stops it."""
    archive_dir, stream, ids = recorded
    frame = stream.positions[98]  # message 99's first frame
    with open(os.path.join(archive_dir, f"{ids[0]}-0.rec"), "r+b") as f:
        f.seek(frame + 40)
        byte = f.read(1)
        f.seek(frame + 40)
        f.write(bytes([byte[0] ^ 0x5A]))
    aeron_dir = new_aeron_dir()
    try:
        with archive_beside_driver(aeron_dir, archive_dir, replay_checksum="CRC-32C") as service, \
                aeron_async.Aeron.connect(service.aeron_dir) as client, AeronArchive.connect(client) as archive:
            with archive.replay(ids[1], position=0) as replay:
                assert_same_stream(stream, 0, len(stream), collect(replay))
            with archive.replay(ids[0], position=0) as replay:
                assert_same_stream(stream, 0, 99, collect(replay))
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)
