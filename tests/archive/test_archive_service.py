"""The archive service (docs/architecture.md, "The service"): crash recovery of the standalone
archive and a full disk, through the archive's own control protocol (the archive client of
aeron_async.archive) against the native service."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal
from aeron_async.archive.service import Archive, read_archive_mark

from conftest import REPO, TEST_DRIVER_SETTINGS, new_aeron_dir, offer_all, wait_for

STREAM = 1017
CHANNEL = "aeron:ipc?term-length=64k"


def payload(index: int) -> bytes:
    """Message `index`: its number, then a deterministic body of a size from 0 to ~3 KiB (every
    50th one is fragmented at the default MTU)."""
    size = 3000 if index % 50 == 49 else (index * 37) % 600
    body = bytes((index + k) & 0xFF for k in range(size))
    return struct.pack("<Q", index) + body


def check_message(data: bytes, expected_index: int) -> None:
    (index,) = struct.unpack_from("<Q", data)
    assert index == expected_index, f"message {index} where {expected_index} was expected"
    assert data == payload(index), f"message {index} is corrupt"


def offer(publication: aeron_async.Publication, data: bytes) -> int:
    """Offers until accepted, leaving the archive half a millisecond between tries."""
    return offer_all(publication, data, pause=0.0005)


def assert_ends_at(last: int, stop: int, term_length: int, next_index: int) -> None:
    """The stop position is after the last complete frame: the last message's, the padding that ends
    its term (a message that did not fit the rest of a term), or whole first fragments of the next
    message (`next_index`, cut short by the kill: a replay delivers whole messages only)."""
    if last == stop:
        return
    term_end = (last // term_length + 1) * term_length
    if stop == term_end:
        return  # padding to the term's end
    cut = stop - (term_end if stop > term_end else last)  # the next message's frames, after any padding
    mtu = 1408
    fragments = -(-len(payload(next_index)) // (mtu - 32))
    assert fragments > 1 and cut % mtu == 0 and 0 < cut // mtu < fragments, \
        f"the replay ends at {last}, the stop position is {stop} (message {next_index}: {fragments} fragment(s))"


def replay_all(archive: AeronArchive, recording_id: int, start: int, stop: int) -> list[Any]:
    messages = []
    with archive.replay(recording_id, position=start, length=stop - start, stream_id=STREAM + 100) as replay:
        for message in replay.messages(timeout=10.0):
            messages.append(message)
    return messages


def connect_archive(aeron: aeron_async.Aeron, timeout: float = 15.0) -> AeronArchive:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return AeronArchive.connect(aeron, timeout=3.0)
        except aeron_async.errors.AeronError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture
def archive_dir() -> Iterator[str]:
    path = tempfile.mkdtemp(prefix="aa-archive-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def start_standalone(archive_dir: str, aeron_dir: str, sync_level: int) -> subprocess.Popen[bytes]:
    # a PYTHONPATH already set (a build under sanitizers) comes first
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), REPO) if p))
    return subprocess.Popen(
        [sys.executable, "-m", "aeron_async", "archive", "--archive-dir", archive_dir, "--aeron-dir", aeron_dir,
         "--threading-mode", "SHARED", "-o", f"AERON_ARCHIVE_FILE_SYNC_LEVEL={sync_level}",
         "-o", f"AERON_ARCHIVE_CATALOG_FILE_SYNC_LEVEL={sync_level}",
         "-o", "AERON_ARCHIVE_SEGMENT_FILE_LENGTH=256k", "-o", "AERON_ARCHIVE_LOW_STORAGE_SPACE_THRESHOLD=0"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=10)


@pytest.mark.parametrize("sync_level", [0, 1])
def test_sigkill_mid_recording_then_restart_recovers_the_stop_position(archive_dir: str, sync_level: int) -> None:
    aeron_dir = new_aeron_dir()
    settings = dict(TEST_DRIVER_SETTINGS, client_liveness_timeout=5.0)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron:
        process = start_standalone(archive_dir, aeron_dir, sync_level)
        try:
            archive = connect_archive(aeron)
            subscription_id = archive.start_recording(CHANNEL, STREAM)
            publication = aeron.add_exclusive_publication(CHANNEL, STREAM)
            start = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id, timeout=10.0)
            recording_id = start.recording_id
            reported = -1
            index = 0
            # publish until the archive has acknowledged a good part of the stream, then kill it
            # while messages are still being offered and recorded
            while index < 20_000:
                offer(publication, payload(index))
                index += 1
                if index % 2000 == 0:
                    position = archive.recording_position(recording_id)
                    assert position is not None
                    reported = max(reported, position)
            for _ in range(200):
                offer(publication, payload(index))
                index += 1
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            archive.close()
            published = index
        finally:
            stop_process(process)
        assert reported > 0

        process = start_standalone(archive_dir, aeron_dir, sync_level)
        try:
            with connect_archive(aeron) as archive:
                descriptor = archive.list_recording(recording_id)
                stop = descriptor.stop_position
                assert stop != -1, "the restarted archive did not recover the stop position"
                assert stop % 32 == 0 and stop > descriptor.start_position
                if sync_level > 0:
                    assert stop >= reported, f"position {reported} was reported recorded, the recovered stop is {stop}"
                messages = replay_all(archive, recording_id, descriptor.start_position, stop)
                assert messages, "nothing replayed"
                for expected, message in enumerate(messages):
                    check_message(bytes(message.data), expected)
                assert_ends_at(messages[-1].position, stop, descriptor.term_buffer_length, len(messages))
                assert len(messages) <= published
                assert archive.stop_position(recording_id) == stop
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            finally:
                stop_process(process)
        publication.close()


@contextlib.contextmanager
def small_tmpfs(size: str) -> Iterator[str]:
    path = tempfile.mkdtemp(prefix="aa-tmpfs-")
    try:
        # mode=0700: the archive refuses a directory others may write (docs/security.md, Files), as a tmpfs's root is
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", path],
                                capture_output=True, text=True)
        if result.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({result.stderr.strip() or result.returncode}); needs root")
        try:
            yield path
        finally:
            subprocess.run(["umount", "-l", path], capture_output=True)
    finally:
        shutil.rmtree(path, ignore_errors=True)


# at sync level 1 the recording's syncer forces each segment before the next is opened, and the
# position the stop signal carries is the last one forced
@pytest.mark.parametrize("sync_level", [0, 1])
def test_full_disk_stops_the_recording_with_an_error_and_replays_still_work(sync_level: int) -> None:
    aeron_dir = new_aeron_dir()
    with small_tmpfs("1m") as archive_dir, \
            aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED",
                           file_sync_level=sync_level, catalog_file_sync_level=sync_level,
                           segment_file_length="64k", low_storage_space_threshold=0,
                           catalog_capacity="64k", error_buffer_length="64k") as archive_service, \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron, \
            AeronArchive.connect(aeron, timeout=5.0) as archive:
        subscription_id = archive.start_recording(CHANNEL, STREAM)
        publication = aeron.add_exclusive_publication(CHANNEL, STREAM)
        start = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id, timeout=10.0)
        recording_id = start.recording_id
        index = 0
        stopped = None
        deadline = time.monotonic() + 30.0
        while stopped is None:
            assert time.monotonic() < deadline, "the recording never stopped on the full disk"
            position = publication.offer(payload(index))
            if position > 0:
                index += 1
            else:
                time.sleep(0.0005)
            if index % 200 == 0 or position <= 0:
                with contextlib.suppress(aeron_async.errors.AeronError):
                    for event in archive.poll_for_recording_signals():
                        if event.signal == RecordingSignal.STOP and event.recording_id == recording_id:
                            stopped = event
        errors = [e.text for e in archive_service.errors()]
        assert any("recording" in text and ("space" in text.lower() or "full" in text.lower()) for text in errors), errors
        stop = archive.stop_position(recording_id)
        assert stop is not None and stop == stopped.position and stop > start.position
        # the archive keeps serving: what it wrote replays intact
        messages = replay_all(archive, recording_id, start.position, stop)
        assert messages
        for expected, message in enumerate(messages):
            check_message(bytes(message.data), expected)
        assert_ends_at(messages[-1].position, stop, 64 * 1024, len(messages))
        publication.close()


def test_a_second_archive_on_the_same_directory_is_refused(archive_dir: str) -> None:
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED") as first:
        with pytest.raises(aeron_async.errors.ConfigurationError, match="already running"):
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED")
        mark = first.mark()
        assert mark.pid == os.getpid() and mark.archive_id == first.archive_id
        wait_for(lambda: read_archive_mark(archive_dir).activity_timestamp_ms > 0, what="mark file activity")
    # closed: a new archive may start there at once
    with aeron_async.MediaDriver.launch(aeron_dir=new_aeron_dir(), **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED"):
        pass


def test_bad_archive_options_are_refused_naming_the_fix(archive_dir: str) -> None:
    with pytest.raises(aeron_async.errors.ConfigurationError, match="power of 2"):
        Archive.launch(archive_dir=archive_dir, segment_file_length="100k")
    with pytest.raises(aeron_async.errors.ConfigurationError, match="CATALOG_FILE_SYNC_LEVEL"):
        Archive.launch(archive_dir=archive_dir, file_sync_level=2, catalog_file_sync_level=0)
    with pytest.raises(aeron_async.errors.ConfigurationError, match="sync level"):
        Archive.launch(archive_dir=archive_dir, file_sync_level=3)
    with pytest.raises(aeron_async.errors.ConfigurationError, match="unknown archive option"):
        Archive.launch(archive_dir=archive_dir, no_such_option=1)


def offer_numbered(publication: aeron_async.Publication, indexes: range) -> None:
    for i in indexes:
        offer(publication, b"m%05d" % i)


def test_operations_live_bounded_extend_truncate_purge(archive_dir: str) -> None:
    """The service's operations end to end, in the DEDICATED threading mode: a live replay follows
    the recording and ends when it stops; a bounded replay from the middle; bad input answered
    with the codes; extend, truncate and purge with their signals."""
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="DEDICATED",
                           idle_strategy="backoff") as service, \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron, \
            AeronArchive.connect(aeron, timeout=5.0) as archive:
        assert archive.archive_id() == service.archive_id
        subscription_id = archive.start_recording(CHANNEL, STREAM)
        [listed] = archive.list_recording_subscriptions()
        assert listed.subscription_id == subscription_id and listed.stripped_channel == "aeron:ipc"
        publication = aeron.add_exclusive_publication(CHANNEL, STREAM)
        recording_id = archive.wait_for_signal(RecordingSignal.START, timeout=10.0).recording_id
        offer_numbered(publication, range(1000))
        with pytest.raises(aeron_async.errors.ArchiveError, match="ACTIVE_RECORDING"):
            archive.truncate_recording(recording_id, 0)
        live = archive.replay(recording_id, position=0)
        offer_numbered(publication, range(1000, 2000))
        received: list[Any] = []
        wait_for(lambda: received.extend(live.poll_messages()) or len(received) >= 2000, what="the live replay")
        wait_for(lambda: archive.recording_position(recording_id) == publication.position, what="recorded")
        # rec-pos: type 100, key recordingId, sessionId, source identity, archiveId; Aeron's label
        with aeron_async.CountersReader(driver.aeron_dir) as counters:
            [rec_pos] = counters.find_by_type_id(100)
            source = b"aeron:ipc"
            assert rec_pos.key[:16 + len(source) + 8] == struct.pack(
                "<qii", recording_id, publication.session_id, len(source)) + source + struct.pack("<q", service.archive_id)
            assert rec_pos.label == (f"rec-pos: {recording_id} {publication.session_id} {STREAM} aeron:ipc "
                                     f"- archiveId={service.archive_id}")
            assert counters.value(rec_pos.id) == publication.position
        assert archive.find_last_matching_recording("aeron:ipc", STREAM) == recording_id
        assert archive.find_last_matching_recording("aeron:ipc", STREAM, session_id=publication.session_id) == recording_id
        assert archive.find_last_matching_recording("aeron:ipc", STREAM, session_id=publication.session_id + 1) is None
        assert archive.find_last_matching_recording("aeron:udp", STREAM) is None
        assert [r.recording_id for r in archive.list_recordings("ipc", STREAM)] == [recording_id]
        assert archive.list_recordings("ipc", STREAM + 1) == []
        assert archive.list_recording(recording_id).stop_position == -1
        archive.stop_recording(subscription_id=subscription_id)
        stop = archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id, timeout=10.0).position
        assert stop == publication.position == archive.stop_position(recording_id)
        received.extend(live.messages(timeout=10.0))  # ends: the recording stopped
        assert [bytes(m.data) for m in received] == [b"m%05d" % i for i in range(2000)]
        live.close()

        middle = received[999].position
        with archive.replay(recording_id, position=middle, length=received[1499].position - middle) as bounded:
            part = list(bounded.messages(timeout=10.0))
        assert [bytes(m.data) for m in part] == [b"m%05d" % i for i in range(1000, 1500)]
        with pytest.raises(aeron_async.errors.ArchiveError, match="INVALID_POSITION"):
            archive.start_replay(recording_id, position=middle + 8)
        with pytest.raises(aeron_async.errors.ArchiveError, match="not the start of a frame"):
            archive.start_replay(recording_id, position=middle + 32)  # inside a 64-byte frame
        with pytest.raises(aeron_async.errors.ArchiveError, match="UNKNOWN_RECORDING"):
            archive.start_replay(recording_id + 100)

        # extend: a publication that continues the stream at its stop position
        publication.close()
        descriptor = archive.list_recording(recording_id)
        term_length = descriptor.term_buffer_length
        term_id = descriptor.initial_term_id + stop // term_length
        extend_channel = (f"{CHANNEL}|init-term-id={descriptor.initial_term_id}|term-id={term_id}"
                          f"|term-offset={stop % term_length}|mtu={descriptor.mtu_length}")
        archive.extend_recording(recording_id, CHANNEL, STREAM)
        extension = aeron.add_exclusive_publication(extend_channel, STREAM)
        assert archive.wait_for_signal(RecordingSignal.EXTEND, timeout=10.0).position == stop
        offer_numbered(extension, range(2000, 2100))
        wait_for(lambda: archive.recording_position(recording_id) == extension.position, what="extension recorded")
        archive.stop_recording(recording_id=recording_id)
        archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id, timeout=10.0)
        with archive.replay(recording_id, position=0) as whole:
            assert [bytes(m.data) for m in whole.messages(timeout=10.0)] == [b"m%05d" % i for i in range(2100)]
        extension.close()

        truncate_at = received[1499].position
        archive.truncate_recording(recording_id, truncate_at)
        assert archive.wait_for_signal(RecordingSignal.DELETE, timeout=10.0).position == truncate_at
        assert archive.stop_position(recording_id) == truncate_at
        with archive.replay(recording_id, position=0) as truncated:
            assert len(list(truncated.messages(timeout=10.0))) == 1500
        assert archive.purge_recording(recording_id) == 1
        archive.wait_for_signal(RecordingSignal.DELETE, timeout=10.0)
        assert archive.list_recordings() == []
        assert not [name for name in os.listdir(archive_dir) if name.endswith(".rec")]
        assert service.errors() == []


def test_malformed_control_messages_are_dropped_and_logged(archive_dir: str) -> None:
    """Garbage, truncated and unknown control messages neither crash the archive nor change its
    catalog; they are logged, and a well-formed session works after them."""
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED") as service, \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron:
        catalog = os.path.join(archive_dir, "archive.catalog")
        with open(catalog, "rb") as f:
            before = f.read()
        control = aeron.add_publication("aeron:ipc?term-length=64k", 10)
        wait_for(lambda: control.is_connected, what="the archive's control subscription")
        header = struct.pack("<HHHH", 16, 58, 101, 14)
        messages = [
            b"",
            b"\x01",
            bytes(range(256)) * 3,
            header,  # AuthConnect cut after its header
            header + struct.pack("<qii", 1, 20, 0) + struct.pack("<I", 1 << 31),  # a var length past the end
            struct.pack("<HHHH", 24, 999, 101, 14) + bytes(24),  # unknown template
            struct.pack("<HHHH", 24, 12, 77, 14) + bytes(24),  # another schema
            struct.pack("<HHHH", 24, 13, 101, 14) + struct.pack("<qqqq", 5, 6, 0, 0)[:20],  # truncated block
        ]
        for message in messages:
            offer(control, message)
        wait_for(lambda: any("control request dropped" in e.text for e in service.errors()), what="logged")
        with AeronArchive.connect(aeron, timeout=5.0) as archive:
            assert archive.list_recordings() == []
            assert archive.archive_id() == service.archive_id
        with open(catalog, "rb") as f:
            assert f.read() == before
        control.close()


def test_invoker_mode_runs_on_do_work(archive_dir: str) -> None:
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="INVOKER") as service, \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron:
        import threading

        stop = threading.Event()

        def run() -> None:
            while not stop.is_set():
                if service.do_work() == 0:
                    time.sleep(0.0005)

        runner = threading.Thread(target=run)
        runner.start()
        try:
            with AeronArchive.connect(aeron, timeout=5.0) as archive:
                archive.start_recording(CHANNEL, STREAM)
                publication = aeron.add_exclusive_publication(CHANNEL, STREAM)
                recording_id = archive.wait_for_signal(RecordingSignal.START, timeout=10.0).recording_id
                offer_numbered(publication, range(100))
                wait_for(lambda: archive.recording_position(recording_id) == publication.position, what="recorded")
                archive.stop_recording(CHANNEL, STREAM)
                archive.wait_for_signal(RecordingSignal.STOP, timeout=10.0)
                with archive.replay(recording_id, position=0) as replay:
                    assert [bytes(m.data) for m in replay.messages(timeout=10.0)] == [b"m%05d" % i for i in range(100)]
                publication.close()
        finally:
            stop.set()
            runner.join(timeout=10)
    with pytest.raises(aeron_async.errors.AeronError, match="INVOKER"):
        with aeron_async.MediaDriver.launch(aeron_dir=new_aeron_dir(), **TEST_DRIVER_SETTINGS) as driver, \
                Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED") as shared:
            shared.do_work()


def test_low_storage_refuses_new_recordings(archive_dir: str) -> None:
    free = shutil.disk_usage(archive_dir).free
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED",
                           low_storage_space_threshold=free * 2), \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron, \
            AeronArchive.connect(aeron, timeout=5.0) as archive:
        with pytest.raises(aeron_async.errors.ArchiveError, match="STORAGE_SPACE") as raised:
            archive.start_recording(CHANNEL, STREAM)
        assert "LOW_STORAGE_SPACE_THRESHOLD" in str(raised.value)
        assert archive.list_recording_subscriptions() == []


def test_archive_options_table_matches_the_docs() -> None:
    """docs/configuration.md's archive table is `aeron-async archive --help-options --markdown`
    (tests/driver/test_options.py: ArchiveContext has a field for every native option, and no other)."""
    result = subprocess.run([sys.executable, "-m", "aeron_async", "archive", "--help-options", "--markdown"],
                            capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                                p for p in (os.environ.get("PYTHONPATH"), REPO) if p)))
    assert result.returncode == 0, result.stderr
    with open(os.path.join(REPO, "docs", "configuration.md")) as f:
        docs = f.read()
    assert result.stdout.strip() in docs, "docs/configuration.md's archive table is out of date"


def test_standalone_archive_with_an_embedded_driver(archive_dir: str) -> None:
    aeron_dir = new_aeron_dir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), REPO) if p),
               AERON_THREADING_MODE="SHARED", AERON_IPC_TERM_BUFFER_LENGTH="1m", AERON_DIR_DELETE_ON_SHUTDOWN="true")
    process = subprocess.Popen(
        [sys.executable, "-m", "aeron_async", "archive", "--embedded-driver", "--aeron-dir", aeron_dir,
         "--archive-dir", archive_dir, "--threading-mode", "SHARED", "-o", "AERON_ARCHIVE_ID=4242"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        def started() -> bool:
            try:  # the mark file may exist before it is sized and filled
                return read_archive_mark(archive_dir).archive_id == 4242
            except aeron_async.errors.ConfigurationError:
                return False

        wait_for(started, timeout=20.0, what="the archive's start")
        with aeron_async.Aeron.connect(aeron_dir) as aeron, AeronArchive.connect(aeron, timeout=5.0) as archive:
            assert archive.archive_id() == 4242
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=20)[0].decode()
        assert process.returncode == 0, output
        assert "archive 4242 running" in output and "embedded" in output
    finally:
        stop_process(process)


def test_auto_stop_drops_the_subscription_when_the_recording_ends(archive_dir: str) -> None:
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED"), \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron, \
            AeronArchive.connect(aeron, timeout=5.0) as archive:
        subscription_id = archive.start_recording(CHANNEL, STREAM, auto_stop=True)
        with pytest.raises(aeron_async.errors.ArchiveError, match="ACTIVE_SUBSCRIPTION"):
            archive.start_recording(CHANNEL + "|mtu=8k", STREAM)  # the same stream, stripped
        publication = aeron.add_exclusive_publication(CHANNEL, STREAM)
        recording_id = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id,
                                               timeout=10.0).recording_id
        offer_numbered(publication, range(10))
        publication.close()  # the image ends: the recording stops, and with it the subscription
        stop = archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id, timeout=10.0)
        assert stop.position == 10 * 64
        wait_for(lambda: archive.list_recording_subscriptions() == [], what="the subscription dropped")
        with pytest.raises(aeron_async.errors.ArchiveError, match="UNKNOWN_SUBSCRIPTION"):
            archive.stop_recording(subscription_id=subscription_id)


def test_a_session_whose_responses_find_no_subscriber_times_out(archive_dir: str) -> None:
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED",
                           connect_timeout=0.3) as service, \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron:
        control = aeron.add_publication("aeron:ipc?term-length=64k", 10)
        wait_for(lambda: control.is_connected, what="the archive's control subscription")
        channel = b"aeron:ipc?session-id=424242"
        request = (struct.pack("<HHHH", 16, 58, 101, 14) + struct.pack("<qii", 77, 20, 68608)
                   + struct.pack("<I", len(channel)) + channel + struct.pack("<I", 0) + struct.pack("<I", 0))
        offer(control, request)
        wait_for(lambda: any("no subscriber on the response channel" in e.text for e in service.errors()),
                 timeout=5.0, what="the session's timeout in the error log")
        # the archive goes on serving
        with AeronArchive.connect(aeron, timeout=5.0) as archive:
            assert archive.archive_id() == service.archive_id
        control.close()


def test_control_over_a_udp_control_channel(archive_dir: str) -> None:
    control = "aeron:udp?endpoint=127.0.0.1:24613"
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED",
                           control_channel=control, control_stream_id=11) as service, \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron, \
            AeronArchive.connect(aeron, control_channel=control, control_stream_id=11,
                                 response_channel="aeron:udp?endpoint=127.0.0.1:24614", timeout=5.0) as archive:
        assert archive.archive_id() == service.archive_id
        assert read_archive_mark(archive_dir).control_stream_id == 11
        assert archive.list_recordings() == []


def test_a_replay_read_to_its_end_before_its_image_was_looked_at_still_ends(archive_dir: str) -> None:
    """A short replay read with poll_messages to its end drains the replay publication, and the
    driver then tells the client that its image is gone, before the Replay has looked for it.
    Iterating the replay then ends at once: the Replay keeps the image from its AVAILABLE event
    (it used to look only at the subscription's current images, find none, and wait out its
    timeout with "the replay stream did not connect")."""
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED"), \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron, \
            AeronArchive.connect(aeron, timeout=5.0) as archive:
        subscription_id = archive.start_recording(CHANNEL, STREAM)
        publication = aeron.add_exclusive_publication(CHANNEL, STREAM)
        recording_id = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id,
                                               timeout=10.0).recording_id
        offer_numbered(publication, range(10))
        publication.close()
        archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id, timeout=10.0)
        with archive.replay(recording_id, follow=False, stream_id=STREAM + 100) as replay:
            read: list[Any] = []
            wait_for(lambda: read.extend(replay.poll_messages()) or len(read) == 10, what="the ten messages")
            # drained: the image leaves the subscription (is_connected reads the native list and
            # takes no image events)
            wait_for(lambda: not replay.subscription.is_connected, what="the replay's image gone")
            assert list(replay.messages(timeout=2.0)) == []
            assert replay.image is not None and replay.image.is_closed
            assert replay.is_done
        assert [bytes(m.data) for m in read] == [b"m%05d" % i for i in range(10)]
