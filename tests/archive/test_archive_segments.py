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
from support.archive_e2e import archive_beside_driver, free_udp_port
from conftest import PYTHON, offer_all, python_env, wait_for

SEG = 65536  # the segment length (the minimum) and the term length: a segment holds one term
CHANNEL = "aeron:ipc?term-length=64k"
STREAM = 4711
BODY = 1000  # a message is a 1056-byte frame: 62 a term, then padding
PER_TERM = 62
RETENTION_COUNTER_TYPE_ID = 1100


def message(index: int) -> bytes:
    return (b"m%05d" % index).ljust(BODY, b".")


def publish(publication: aeron_async.ExclusivePublication, indexes: range) -> dict[int, int]:
    """Offers the messages; the position after each."""
    return {i: offer_all(publication, message(i), pause=0.0005) for i in indexes}


def replayed(archive: AeronArchive, recording_id: int, position: int | None = None) -> list[int]:
    """The indexes of the messages a replay from `position` (default: the start) delivers."""
    with archive.replay(recording_id, position=position, follow=False) as replay:
        return [int(bytes(m.data)[1:6]) for m in replay.messages(timeout=10.0)]


def segment_bases(archive_dir: str, recording_id: int) -> list[int]:
    prefix = f"{recording_id}-"
    return sorted(int(name[len(prefix):-4]) for name in os.listdir(archive_dir)
                  if name.startswith(prefix) and name.endswith(".rec"))


@pytest.fixture
def archive_dir(tmp_path: Any) -> str:
    return os.path.join(str(tmp_path), "archive")


@pytest.fixture
def clients(aeron_dir: str, archive_dir: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    overrides = getattr(request, "param", {})
    with archive_beside_driver(aeron_dir, archive_dir, segment_file_length="64k",
                               low_storage_space_threshold="0", **overrides) as service, \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as aeron, \
            AeronArchive.connect(aeron, timeout=10.0) as archive:
        yield service, aeron, archive


def record(aeron: aeron_async.Aeron, archive: AeronArchive, count: int, channel: str = CHANNEL,
           stop: bool = True, stream_id: int = STREAM) -> tuple[int, dict[int, int], Any]:
    """A recording of `count` messages: (recording id, positions, the publication); not stopped,
    the recording subscription stays too (stop it by recording id with auto-stop semantics: the
    subscription is dropped when the recording stops)."""
    subscription_id = archive.start_recording("aeron:ipc", stream_id, auto_stop=not stop)
    publication = aeron.add_exclusive_publication(channel, stream_id)
    recording_id = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id,
                                           timeout=10.0).recording_id
    positions = publish(publication, range(count))
    wait_for(lambda: archive.max_recorded_position(recording_id) == publication.position, what="recorded")
    if stop:
        archive.stop_recording(subscription_id=subscription_id)
        archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id, timeout=10.0)
        publication.close()
    return recording_id, positions, publication


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


def test_replay_over_a_response_channel_with_a_replay_token(clients: Any) -> None:
    """Aeron's token path (reference aeron-wave3.md 6.4, 1.3): ReplayToken, then the Replay with it
    from a new publication to the control channel whose response-correlation-id names the replay's
    subscription (control-mode=response): the archive answers on the session and replays to that
    subscription. Without a token, or with a wrong one, it refuses saying why."""
    from aeron_async._ffi import lib
    from aeron_async.archive import _codec

    _, aeron, archive = clients
    rid, positions, _ = record(aeron, archive, 200)
    response_channel = "aeron:ipc?control-mode=response"
    with pytest.raises(ArchiveError, match="a replay over a response channel .* needs a replay token"):
        archive.start_replay(rid, channel=response_channel, stream_id=9001)
    token = archive._request(lambda s, c: _codec._encode(lib.AA_ARCHIVE_TEMPLATE_REPLAY_TOKEN_REQUEST,
                                                         "replay_token_request", control_session_id=s,
                                                         correlation_id=c, recording_id=rid), "replay_token")
    assert token.code == 0 and token.relevant_id > 0
    subscription = aeron.add_subscription(response_channel, 9001)
    request_publication = aeron.add_exclusive_publication(
        f"aeron:ipc?term-length=64k|response-correlation-id={subscription.registration_id}", 10)
    wait_for(lambda: request_publication.is_connected, what="the archive's request image")
    session_publication = archive.control_publication

    def replay_with(value: int) -> Any:
        # the request goes out on the new publication, its answer comes on the session's responses
        archive.control_publication = request_publication
        try:
            return archive._request(lambda s, c: _codec.replay(s, c, rid, 0, positions[199], 9001, -1, value,
                                                               response_channel), "replay by token")
        finally:
            archive.control_publication = session_publication

    refused = replay_with(token.relevant_id + 1)
    assert refused.code == 1 and refused.error_message == \
        f"Unknown session or token timeout for replayToken={token.relevant_id + 1}"
    accepted = replay_with(token.relevant_id)
    assert accepted.code == 0, accepted.error_message
    received: list[int] = []
    wait_for(lambda: received.extend(int(bytes(m.data)[1:6]) for m in subscription.poll_messages()) or
             len(received) >= 200, what="the replay on the response subscription")
    assert received == list(range(200))
    again = replay_with(token.relevant_id)  # a token is used once
    assert again.code == 1 and "Unknown session or token timeout" in again.error_message
    request_publication.close()
    subscription.close()


def test_a_control_session_over_a_response_channel(clients: Any, aeron_dir: str) -> None:
    """A session whose responses come over a response channel (reference aeron-wave3.md 1.3, 6.2):
    the client's request publication names its response subscription, the archive's response
    publication the request image; requests, answers and a replay work."""
    _, aeron, archive = clients
    rid, _, _ = record(aeron, archive, 50)
    with AeronArchive.connect(aeron, response_channel="aeron:ipc?control-mode=response", timeout=10.0) as nat:
        assert "response-correlation-id=" in nat.control_publication.channel
        assert [d.recording_id for d in nat.list_recordings()] == [rid]
        assert replayed(nat, rid) == list(range(50))


@pytest.mark.anyio
async def test_async_control_session_over_a_response_channel(anyio_backend: Any, clients: Any,
                                                             aeron_dir: str) -> None:
    _, aeron, archive = clients
    rid, _, _ = await anyio.to_thread.run_sync(lambda: record(aeron, archive, 20))
    async with aeron_async.connect(aeron_dir) as client:
        async with archive_aio.connect(client, response_channel="aeron:ipc?control-mode=response",
                                       timeout=10.0) as nat:
            assert (await nat.list_recording(rid)).stop_position > 0


def test_the_clients_replay_over_a_response_channel(clients: Any) -> None:
    """`replay(channel="...control-mode=response")` takes the token path itself."""
    _, aeron, archive = clients
    rid, positions, _ = record(aeron, archive, 120)
    with archive.replay(rid, position=positions[19], channel="aeron:ipc?control-mode=response", stream_id=9002,
                        follow=False) as replay:
        assert [int(bytes(m.data)[1:6]) for m in replay.messages(timeout=10.0)] == list(range(20, 120))
    with pytest.raises(UnknownRecordingError):
        archive.replay(rid + 100, channel="aeron:ipc?control-mode=response", stream_id=9002)


@pytest.mark.anyio
async def test_async_replay_over_a_response_channel(anyio_backend: Any, clients: Any, aeron_dir: str) -> None:
    _, aeron, archive = clients
    rid, _, _ = await anyio.to_thread.run_sync(lambda: record(aeron, archive, 60))
    async with aeron_async.connect(aeron_dir) as client:
        async with archive_aio.connect(client, timeout=10.0) as nat:
            with anyio.fail_after(20):
                got = [int(bytes(m.data)[1:6]) async for m in
                       nat.replay(rid, channel="aeron:ipc?control-mode=response", stream_id=9003, follow=False)]
    assert got == list(range(60))


def test_control_and_replay_over_udp_response_channels(aeron_dir: str, archive_dir: str) -> None:
    """The NAT case over UDP (reference aeron-wave3.md 1.2, 1.5): requests to the archive's control
    endpoint, responses and the replay back over response channels whose `control` is the archive's."""
    control, responses, replays = free_udp_port(), free_udp_port(), free_udp_port()
    with archive_beside_driver(aeron_dir, archive_dir, segment_file_length="64k", low_storage_space_threshold="0",
                               control_channel=f"aeron:udp?endpoint=127.0.0.1:{control}"), \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as aeron, \
            AeronArchive.connect(aeron, timeout=10.0) as local:
        rid, _, _ = record(aeron, local, 80)
        with AeronArchive.connect(aeron, control_channel=f"aeron:udp?endpoint=127.0.0.1:{control}",
                                  response_channel=f"aeron:udp?control-mode=response|control=127.0.0.1:{responses}",
                                  timeout=10.0) as nat:
            assert [d.recording_id for d in nat.list_recordings()] == [rid]
            with nat.replay(rid, channel=f"aeron:udp?control-mode=response|control=127.0.0.1:{replays}",
                            stream_id=9004, follow=False) as replay:
                assert [int(bytes(m.data)[1:6]) for m in replay.messages(timeout=10.0)] == list(range(80))


def test_update_channel_is_refused_saying_why(clients: Any) -> None:
    from aeron_async._ffi import lib
    from aeron_async.archive import _codec

    _, aeron, archive = clients
    rid, _, _ = record(aeron, archive, 10)
    update = archive._request(lambda s, c: _codec._encode(lib.AA_ARCHIVE_TEMPLATE_UPDATE_CHANNEL_REQUEST,
                                                          "update_channel_request", control_session_id=s,
                                                          correlation_id=c, recording_id=rid,
                                                          channel=b"aeron:ipc"), "update_channel")
    assert update.error_message == ("UpdateChannelRequest (template 107) is not supported by this archive "
                                    "(channel updates are not implemented)")
    assert replayed(archive, rid) == list(range(10))


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
