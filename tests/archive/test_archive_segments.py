"""Segment management (detach, delete detached, purge, attach, migrate: reference aeron-wave3.md 9)
and retention (docs/architecture.md, "Segments and retention") on recordings of many 64 KiB
segments: what is removed is gone from disk and from the recording's start position, replays of
what remains deliver exactly it, and invalid requests are refused with Aeron's texts."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal
from aeron_async.archive import aio as archive_aio
from aeron_async.errors import ActiveRecordingError, ArchiveError, UnknownRecordingError
from support.archive_e2e import archive_beside_driver
from support.archive_segments import (
    CHANNEL, PER_TERM, RETENTION_COUNTER_TYPE_ID, SEG, STREAM, publish, record, replayed, segment_bases,
    small_segment_archive,
)
from conftest import PYTHON, python_env, wait_for


@pytest.fixture
def archive_dir(tmp_path: Any) -> str:
    return os.path.join(str(tmp_path), "archive")


@pytest.fixture
def clients(aeron_dir: str, archive_dir: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    with small_segment_archive(aeron_dir, archive_dir, **getattr(request, "param", {})) as clients:
        yield clients


def test_detach_attach_delete_detached_and_purge(clients: Any, archive_dir: str) -> None:
    service, aeron, archive = clients
    rid, positions, _ = record(aeron, archive, 700)  # 11+ segments
    stop = archive.list_recording(rid).stop_position
    assert stop == positions[699] and stop > 11 * SEG
    assert segment_bases(archive_dir, rid) == [k * SEG for k in range(stop // SEG + 1)]

    # Aeron's checks (isValidDetach), GENERIC errors with its texts
    with pytest.raises(ArchiveError, match=f"invalid segment start: newStartPosition={SEG + 32}"):
        archive.detach_segments(rid, SEG + 32)
    with pytest.raises(ArchiveError, match=f"invalid detach: newStartPosition=0 lowerBound={SEG}"):
        archive.detach_segments(rid, 0)
    upper = stop - stop % SEG
    with pytest.raises(ArchiveError, match=f"invalid detach: in use, newStartPosition={upper + SEG} "
                                           f"upperBound={upper}"):
        archive.detach_segments(rid, upper + SEG)
    with pytest.raises(UnknownRecordingError):
        archive.detach_segments(rid + 100, SEG)
    with pytest.raises(UnknownRecordingError):
        archive.attach_segments(rid + 100)

    # detach: the start moves, the files stay; a replay from the start begins there
    archive.detach_segments(rid, 2 * SEG)
    assert archive.list_recording(rid).start_position == 2 * SEG
    assert segment_bases(archive_dir, rid)[:2] == [0, SEG]
    assert replayed(archive, rid) == list(range(2 * PER_TERM, 700))
    with pytest.raises(ArchiveError, match="INVALID_POSITION"):
        archive.start_replay(rid, position=0)

    # attach walks back over the detached files: the start is 0 again
    assert archive.attach_segments(rid) == 2
    assert archive.list_recording(rid).start_position == 0
    assert replayed(archive, rid) == list(range(700))

    # delete detached: OK with the count, files deleted one per duty cycle, then DELETE
    archive.detach_segments(rid, 2 * SEG)
    assert archive.delete_detached_segments(rid) == 2
    assert archive.wait_for_signal(RecordingSignal.DELETE, recording_id=rid, timeout=10.0).recording_id == rid
    assert segment_bases(archive_dir, rid)[0] == 2 * SEG
    assert archive.attach_segments(rid) == 0  # nothing left to attach
    assert archive.delete_detached_segments(rid) == 0  # nothing to delete: OK(0), then DELETE at once
    archive.wait_for_signal(RecordingSignal.DELETE, recording_id=rid, timeout=10.0)

    # purge: detach and delete in one
    assert archive.purge_segments(rid, 5 * SEG) == 3
    archive.wait_for_signal(RecordingSignal.DELETE, recording_id=rid, timeout=10.0)
    assert archive.list_recording(rid).start_position == 5 * SEG
    assert segment_bases(archive_dir, rid)[0] == 5 * SEG
    assert replayed(archive, rid) == list(range(5 * PER_TERM, 700))
    middle = positions[8 * PER_TERM + 3]
    assert replayed(archive, rid, middle) == list(range(8 * PER_TERM + 4, 700))
    assert service.errors() == []


def test_detach_refuses_a_replayed_segment_and_purge_works_while_recording(clients: Any, archive_dir: str) -> None:
    service, aeron, archive = clients
    rid, positions, publication = record(aeron, archive, 400, stop=False)
    # a replay holds segment 1: detaching past it is refused
    with archive.replay(rid, position=positions[PER_TERM + 10], follow=True) as replay:
        wait_for(lambda: replay.poll_messages(1), what="the replay's first message")
        with pytest.raises(ArchiveError, match="invalid detach: replay in progress"):
            archive.detach_segments(rid, 3 * SEG)
    # while recording: purge up to the segment being recorded, not into it
    recorded = archive.recording_position(rid)
    with pytest.raises(ArchiveError, match="invalid detach: in use"):
        archive.purge_segments(rid, recorded - recorded % SEG + SEG)
    assert archive.purge_segments(rid, 4 * SEG) == 4
    archive.wait_for_signal(RecordingSignal.DELETE, recording_id=rid, timeout=10.0)
    more = publish(publication, range(400, 500))
    wait_for(lambda: archive.recording_position(rid) == more[499], what="recorded")
    archive.stop_recording(recording_id=rid)
    archive.wait_for_signal(RecordingSignal.STOP, recording_id=rid, timeout=10.0)
    assert segment_bases(archive_dir, rid)[0] == 4 * SEG
    assert replayed(archive, rid) == list(range(4 * PER_TERM, 500))
    publication.close()
    assert service.errors() == []


def test_migrate_round_trip(clients: Any, archive_dir: str) -> None:
    service, aeron, archive = clients
    src, positions, _ = record(aeron, archive, 300)
    live, _, live_publication = record(aeron, archive, 1, stop=False)
    with pytest.raises(ActiveRecordingError, match=f"recording {live} is still active"):
        archive.migrate_segments(live, src)
    live_publication.close()  # auto-stop: the recording and its subscription end
    archive.wait_for_signal(RecordingSignal.STOP, recording_id=live, timeout=10.0)
    with pytest.raises(ArchiveError, match=f"invalid migrate: srcRecordingId={src} .* do not match"):
        archive.migrate_segments(src, live)  # another initial term id
    d = archive.list_recording(src)
    # src: [0, 2 segments); dst: a new recording of the same stream continuing at 2 segments
    archive.truncate_recording(src, 2 * SEG)
    archive.wait_for_signal(RecordingSignal.DELETE, recording_id=src, timeout=10.0)
    with pytest.raises(ArchiveError, match="invalid migrate: src and dst are not contiguous"):
        archive.migrate_segments(src, src)
    subscription_id = archive.start_recording("aeron:ipc", STREAM)
    continuing = aeron.add_exclusive_publication(
        f"{CHANNEL}|init-term-id={d.initial_term_id}|term-id={d.initial_term_id + 2}|term-offset=0|mtu={d.mtu_length}",
        STREAM)
    dst = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id, timeout=10.0).recording_id
    tail = publish(continuing, range(2 * PER_TERM, 300))
    wait_for(lambda: archive.max_recorded_position(dst) == tail[299], what="recorded")
    archive.stop_recording(subscription_id=subscription_id)
    archive.wait_for_signal(RecordingSignal.STOP, recording_id=dst, timeout=10.0)
    continuing.close()
    assert archive.list_recording(dst).start_position == 2 * SEG
    with pytest.raises(UnknownRecordingError):
        archive.migrate_segments(src, dst + 100)

    # prepend src to dst: its two files become dst's, dst starts at 0, src is empty
    assert archive.migrate_segments(src, dst) == 2
    assert archive.wait_for_signal(RecordingSignal.DELETE, timeout=10.0).recording_id == src
    assert archive.list_recording(dst).start_position == 0
    s = archive.list_recording(src)
    assert s.start_position == s.stop_position == 0
    assert segment_bases(archive_dir, src) == []
    assert segment_bases(archive_dir, dst)[:3] == [0, SEG, 2 * SEG]
    assert replayed(archive, dst) == list(range(300))

    # and back: dst appended to the empty src (src stop 0 == dst start 0)
    moved = len(segment_bases(archive_dir, dst))
    assert archive.migrate_segments(dst, src) == moved
    archive.wait_for_signal(RecordingSignal.DELETE, timeout=10.0)
    assert archive.list_recording(src).stop_position == tail[299]
    assert segment_bases(archive_dir, dst) == []
    assert replayed(archive, src) == list(range(300))
    assert service.errors() == []


@pytest.mark.parametrize("clients", [{"retention_max_bytes": "192k", "retention_check_interval": "10ms"}],
                         indirect=True)
def test_retention_by_bytes_keeps_the_newest_bytes_while_recording(clients: Any, archive_dir: str,
                                                                   aeron_dir: str) -> None:
    service, aeron, archive = clients
    rid, positions, publication = record(aeron, archive, 700, stop=False)
    recorded = positions[699]
    keep_from = recorded - 3 * SEG
    expected_start = keep_from - keep_from % SEG  # the segments wholly older than the newest 192 KiB go
    wait_for(lambda: archive.list_recording(rid).start_position == expected_start, what="retention's new start")
    wait_for(lambda: segment_bases(archive_dir, rid)[0] == expected_start, what="the old segments deleted")
    assert replayed(archive, rid, expected_start) == list(range(expected_start // SEG * PER_TERM, 700))
    with aeron_async.CountersReader(aeron_dir) as counters:
        [counter] = counters.find_by_type_id(RETENTION_COUNTER_TYPE_ID)
        assert counter.label == f"archive retention deleted segments: archiveId={service.archive_id}"
        wait_for(lambda: counters.value(counter.id) == expected_start // SEG, what="the counter")
    assert any(f"retention: recording {rid} now starts" in e.text for e in service.errors())
    publication.close()


@pytest.mark.parametrize("clients", [{"retention_max_age": "300ms", "retention_check_interval": "10ms"}],
                         indirect=True)
def test_retention_by_age_keeps_the_last_segment(clients: Any, archive_dir: str) -> None:
    _, aeron, archive = clients
    rid, positions, _ = record(aeron, archive, 400)
    stop = positions[399]
    last = stop - stop % SEG
    wait_for(lambda: segment_bases(archive_dir, rid) == [last], what="the aged segments deleted")
    assert archive.list_recording(rid).start_position == last
    assert replayed(archive, rid) == list(range(last // SEG * PER_TERM, 400))


@pytest.mark.parametrize("clients", [{"retention_recording_max_age": "200ms", "retention_check_interval": "10ms"}],
                         indirect=True)
def test_retention_purges_old_stopped_recordings(clients: Any, archive_dir: str) -> None:
    _, aeron, archive = clients
    rid, _, publication = record(aeron, archive, 200, stop=False)
    old, _, _ = record(aeron, archive, 100, stream_id=STREAM + 1)
    wait_for(lambda: [r.recording_id for r in archive.list_recordings()] == [rid], what="the old recording purged")
    wait_for(lambda: segment_bases(archive_dir, old) == [], what="its files deleted")
    assert segment_bases(archive_dir, rid)  # the active one stays
    publication.close()


def test_recordings_retention_dry_run_shows_what_the_archive_then_removes(aeron_dir: str, archive_dir: str) -> None:
    with archive_beside_driver(aeron_dir, archive_dir, segment_file_length="64k",
                               low_storage_space_threshold="0") as _service, \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as aeron, \
            AeronArchive.connect(aeron, timeout=10.0) as archive:
        rid, positions, _ = record(aeron, archive, 500)
    before = segment_bases(archive_dir, rid)
    stop = positions[499]
    keep_from = stop - 2 * SEG
    new_start = keep_from - keep_from % SEG

    def tool(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([PYTHON, "-m", "aeron_async", "recordings", "retention", "--archive-dir", archive_dir,
                               *args], env=python_env(), capture_output=True, text=True, timeout=60)

    result = tool("--dry-run", "--max-bytes", "128k")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    going = [b for b in before if b < new_start]
    assert lines[0] == (f"recording {rid}: would move its start 0 -> {new_start} and delete {len(going)} segment "
                        f"file(s), {len(going) * SEG} bytes")
    assert lines[1:] == [f"  {rid}-{b}.rec" for b in going]
    assert segment_bases(archive_dir, rid) == before  # a dry run removes nothing
    assert tool("--dry-run").stdout == "retention would remove nothing\n"
    refused = tool("--max-bytes", "128k")
    assert refused.returncode == 2 and "--dry-run" in refused.stdout
    # the archive's retention removes exactly what the dry run listed
    with archive_beside_driver(aeron_dir, archive_dir, segment_file_length="64k", low_storage_space_threshold="0",
                               retention_max_bytes="128k", retention_check_interval="10ms"), \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as aeron, \
            AeronArchive.connect(aeron, timeout=10.0) as archive:
        wait_for(lambda: segment_bases(archive_dir, rid) == [b for b in before if b >= new_start],
                 what="retention")
        assert archive.list_recording(rid).start_position == new_start


def test_recordings_delete_orphaned_segments(aeron_dir: str, archive_dir: str) -> None:
    """`aeron-async recordings delete-orphaned-segments`: a recording's detached files and the
    files of a recording the catalog does not hold go; the archive must be stopped."""
    def tool(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([PYTHON, "-m", "aeron_async", "recordings", "delete-orphaned-segments",
                               "--archive-dir", archive_dir, *args], env=python_env(), capture_output=True,
                              text=True, timeout=60)

    with archive_beside_driver(aeron_dir, archive_dir, segment_file_length="64k",
                               low_storage_space_threshold="0"), \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as aeron, \
            AeronArchive.connect(aeron, timeout=10.0) as archive:
        rid, _, _ = record(aeron, archive, 300)
        archive.detach_segments(rid, 2 * SEG)
        running = tool()
        assert running.returncode != 0 and "is running" in running.stdout + running.stderr
    with open(os.path.join(archive_dir, f"{rid}-0.rec"), "rb") as f, \
            open(os.path.join(archive_dir, f"{rid + 50}-0.rec"), "wb") as orphan:
        orphan.write(f.read())
    kept = [b for b in segment_bases(archive_dir, rid) if b >= 2 * SEG]
    going = [f"{rid}-0.rec", f"{rid}-{SEG}.rec", f"{rid + 50}-0.rec"]
    dry = tool("--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert sorted(dry.stdout.splitlines()) == sorted(f"would delete {name}" for name in going)
    assert os.path.exists(os.path.join(archive_dir, f"{rid + 50}-0.rec"))
    done = tool()
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == sorted(f"deleted {name}" for name in going)
    assert segment_bases(archive_dir, rid) == kept and segment_bases(archive_dir, rid + 50) == []
    assert tool().stdout == "no orphaned segment files\n"


@pytest.mark.anyio
async def test_async_segment_operations(anyio_backend: Any, clients: Any, archive_dir: str, aeron_dir: str) -> None:
    _, aeron, sync_archive = clients
    rid, _, _ = await anyio.to_thread.run_sync(lambda: record(aeron, sync_archive, 300))
    async with aeron_async.connect(aeron_dir) as client:
        async with archive_aio.connect(client, timeout=10.0) as archive:
            await archive.detach_segments(rid, 2 * SEG)
            assert (await archive.list_recording(rid)).start_position == 2 * SEG
            assert await archive.attach_segments(rid) == 2
            assert await archive.purge_segments(rid, 3 * SEG) == 3
            with anyio.fail_after(10):
                await archive.wait_for_signal(RecordingSignal.DELETE, recording_id=rid)
            assert await archive.delete_detached_segments(rid) == 0
            with pytest.raises(ArchiveError, match="invalid migrate|not contiguous"):
                await archive.migrate_segments(rid, rid)
    assert segment_bases(archive_dir, rid)[0] == 3 * SEG


def test_retention_plan_rules() -> None:
    """The plan the archive and the dry run share (aa_archive_retention_new_start)."""
    from aeron_async._ffi import ffi, lib

    def plan(start: int, end: int, bases: list[int], mtimes: list[int], *, max_bytes: int = 0, max_age_ms: int = 0,
             now_ms: int = 1_000_000) -> int:
        policy = ffi.new("aa_archive_retention_policy_t *")
        policy.max_bytes, policy.max_age_ms = max_bytes, max_age_ms
        return int(lib.aa_archive_retention_new_start(policy, start, end, SEG, SEG, ffi.new("int64_t[]", bases or [0]),
                                                      ffi.new("int64_t[]", mtimes or [0]), len(bases), now_ms))

    files = [k * SEG for k in range(11)]
    new = [1_000_000] * 11
    assert plan(0, 10 * SEG + 100, files, new, max_bytes=3 * SEG) == 7 * SEG
    assert plan(0, 10 * SEG, files, new, max_bytes=3 * SEG) == 7 * SEG
    assert plan(0, 10 * SEG, files, new, max_bytes=20 * SEG) == 0  # all of it is within the newest bytes
    assert plan(0, 10 * SEG + 100, files, new, max_bytes=1) == 10 * SEG  # never the segment being written
    assert plan(0, 10 * SEG, files, new) == 0  # no rule: nothing goes
    old = [0] * 3 + [1_000_000] * 8
    assert plan(0, 10 * SEG + 5, files, old, max_age_ms=1000) == 3 * SEG
    assert plan(0, 10 * SEG + 5, files, [0] * 11, max_age_ms=1000) == 10 * SEG
    gap = [b for b in files if b != SEG]
    assert plan(0, 10 * SEG + 5, gap, [0] * 10, max_age_ms=1000) == SEG  # a missing file stops the walk
    assert plan(100, 10 * SEG + 5, files, [0] * 11, max_age_ms=1000) == 10 * SEG  # a start inside a segment
    assert plan(100, 2 * SEG - 32, files[:2], [0] * 2, max_age_ms=1000) == SEG
    assert plan(3 * SEG, 10 * SEG + 5, files[3:], new[3:], max_bytes=3 * SEG) == 7 * SEG
    policy = ffi.new("aa_archive_retention_policy_t *")
    policy.max_recording_age_ms = 1000
    assert lib.aa_archive_retention_recording_expired(policy, -1, 0, 10_000) == 0  # active
    assert lib.aa_archive_retention_recording_expired(policy, 64, 0, 10_000) == 1
    assert lib.aa_archive_retention_recording_expired(policy, 64, 9_500, 10_000) == 0


def test_attach_checks_each_file(clients: Any, archive_dir: str) -> None:
    """attach_segments refuses a detached file of the wrong length, one whose first term holds no
    frame, and one whose frames are another segment's (Aeron's texts); the start stays."""
    _, aeron, archive = clients
    rid, _, _ = record(aeron, archive, 300)
    d = archive.list_recording(rid)
    archive.detach_segments(rid, 2 * SEG)
    path = os.path.join(archive_dir, f"{rid}-{SEG}.rec")
    with open(os.path.join(archive_dir, f"{rid}-0.rec"), "rb") as f:
        first = f.read()
    os.truncate(path, SEG - 4096)
    with pytest.raises(ArchiveError, match=f"fileLength={SEG - 4096} not equal to segmentLength={SEG}"):
        archive.attach_segments(rid)
    with open(path, "wb") as f:
        f.write(bytes(SEG))
    with pytest.raises(ArchiveError, match=f"fragment not found in first term of segment {rid}-{SEG}.rec"):
        archive.attach_segments(rid)
    with open(path, "wb") as f:
        f.write(first)  # segment 0's frames where segment 1's belong
    with pytest.raises(ArchiveError, match=f"term id does not match: actual={d.initial_term_id} "
                                           f"expected={d.initial_term_id + 1}"):
        archive.attach_segments(rid)
    assert archive.list_recording(rid).start_position == 2 * SEG
    assert replayed(archive, rid) == list(range(2 * PER_TERM, 300))
