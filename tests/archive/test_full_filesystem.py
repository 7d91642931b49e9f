"""A full disk is an error, not a crash (docs/security.md, Disks): a driver and an archive whose
filesystem (a small tmpfs the test mounts) is filled under them refuse what needs space with an
error naming it, keep serving what was allocated before, log it, and work again once space is
freed; and a truncation updates the catalog before it removes files, so a failure in between
leaves the catalog claiming nothing that is gone."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from typing import Any

import pytest

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal
from aeron_async.archive.service import Archive, read_archive_mark
from aeron_async.monitor import CncReader

from conftest import REPO, TEST_DRIVER_SETTINGS, new_aeron_dir, offer_all, run_proc, start_driver, stop_driver, wait_for
from test_archive_service import archive_dir, small_tmpfs  # noqa: F401  (archive_dir: a fixture)

DRIVER_OPTIONS = ("AERON_IPC_TERM_BUFFER_LENGTH=64k", "AERON_TERM_BUFFER_LENGTH=64k",
                  "AERON_COUNTERS_BUFFER_LENGTH=256k", "AERON_ERROR_BUFFER_LENGTH=64k",
                  "AERON_LOSS_REPORT_BUFFER_LENGTH=64k")
ARCHIVE_OPTIONS = ("AERON_ARCHIVE_CATALOG_CAPACITY=4k", "AERON_ARCHIVE_ERROR_BUFFER_LENGTH=64k",
                   "AERON_ARCHIVE_SEGMENT_FILE_LENGTH=64k", "AERON_ARCHIVE_LOW_STORAGE_SPACE_THRESHOLD=0")


def fill(root: str) -> str:
    """A file taking every free block of the filesystem at `root` (written, so allocated)."""
    path = os.path.join(root, "filler")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for size in (1 << 20, 1 << 16, 1 << 12):
            chunk = b"\x01" * size
            while True:
                try:
                    os.write(fd, chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
                    break
    finally:
        os.close(fd)
    assert os.statvfs(root).f_bavail == 0
    return path


def start_archive(archive_dir: str, aeron_dir: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p))
    options = [arg for option in ARCHIVE_OPTIONS for arg in ("-o", option)]
    process = subprocess.Popen(
        [sys.executable, "-m", "aeron_async", "archive", "--archive-dir", archive_dir, "--aeron-dir", aeron_dir,
         "--threading-mode", "SHARED", "-o", "AERON_ARCHIVE_ID=77", *options],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def started() -> bool:
        assert process.poll() is None, process.communicate()[0].decode()
        try:  # the mark file may exist before it is sized and filled
            return read_archive_mark(archive_dir).archive_id == 77
        except aeron_async.errors.ConfigurationError:
            return False

    wait_for(started, timeout=20.0, what="the archive's start")
    return process


class Client:
    """tests/support/procs/full_disk_client.py: the client that maps the logs."""

    def __init__(self, aeron_dir: str, processes: dict[str, subprocess.Popen[Any]]) -> None:
        self.process = run_proc("full_disk_client.py", aeron_dir, stdin=True)
        self.processes = processes

    def ask(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=10)
            died = {name: p.poll() for name, p in self.processes.items()}
            raise AssertionError(f"the client died on {command!r} (exit status {self.process.returncode}; "
                                 f"driver and archive: {died}): {self.process.stdout.read()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


def exit_statuses(processes: dict[str, subprocess.Popen[Any]]) -> dict[str, int | None]:
    """Each process's exit status (None: running; -7: killed by SIGBUS)."""
    return {name: p.poll() for name, p in processes.items()}


def assert_alive(processes: dict[str, subprocess.Popen[Any]]) -> None:
    assert exit_statuses(processes) == {name: None for name in processes}


def test_a_full_filesystem_under_a_driver_and_an_archive_is_an_error_not_a_crash() -> None:
    with small_tmpfs("16m") as root:
        aeron_dir, archive_dir = os.path.join(root, "aeron"), os.path.join(root, "archive")
        driver = start_driver(aeron_dir, *(arg for option in DRIVER_OPTIONS for arg in ("-o", option)))
        processes: dict[str, subprocess.Popen[Any]] = {"driver": driver}
        client = None
        try:
            processes["archive"] = start_archive(archive_dir, aeron_dir)
            client = Client(aeron_dir, processes)
            assert client.ask("setup") == {"ok": True}
            filler = fill(root)

            # a new log: refused, naming the filesystem, the size, the log and the fix
            answer = client.ask("add_publication")
            assert not answer["ok"] and answer["error"].startswith("StorageSpaceError"), answer
            assert f"no space left on {root} for a 196 KiB log of publication" in answer["error"], answer
            assert "lower term-length" in answer["error"], answer
            # what was allocated before keeps working: the archive answers through its response log
            # (a sparse log before: its next page was a SIGBUS)
            answer = client.ask("requests 300")
            assert answer == {"ok": True, "archive_ids": 1}, (answer, exit_statuses(processes))
            # a recording into a segment the disk has no room for stops with an error
            answer = client.ask("record")
            assert answer["ok"] and answer["stopped"], answer
            # recordings whose entries outgrow the catalog's allocated pages: refused once it cannot grow
            answer = client.ask("record_many")
            assert not answer["ok"] and 1 <= answer["started"] < 10, answer
            # a new archive session needs new logs: refused with an error
            answer = client.ask("connect")
            assert not answer["ok"], answer
            assert_alive(processes)

            os.unlink(filler)
            assert client.ask("add_publication") == {"ok": True}
            assert client.ask("connect") == {"ok": True}
            assert client.ask("requests 5") == {"ok": True, "archive_ids": 1}
            assert_alive(processes)

            driver_errors = [e.text for e in CncReader(aeron_dir).errors()]
            assert any(f"no space left on {root}" in text and "log of publication" in text
                       for text in driver_errors), driver_errors
            archive_errors = [e.text for e in read_archive_mark(archive_dir).errors]
            assert any(f"recording {answer_id(archive_errors)}" in text and "full" in text
                       for text in archive_errors), archive_errors
            assert any(text.startswith("could not add a recording to the catalog: no space left on "
                                       f"{root} for a ") and "archive catalog's next chunk" in text
                       for text in archive_errors), archive_errors
            # the operator's view of the same log (docs/security.md: `aeron-async errors --archive-dir`)
            listed = subprocess.run([sys.executable, "-m", "aeron_async", "errors", "--archive-dir", archive_dir],
                                    capture_output=True, text=True, timeout=60)
            assert listed.returncode == 0, listed.stderr
            assert "archive catalog's next chunk" in listed.stdout, listed.stdout
            assert f"{len(archive_errors)} distinct errors" in listed.stdout, listed.stdout
            assert client.ask("quit") == {"ok": True}
        finally:
            if client is not None:
                client.close()
            archive = processes.get("archive")
            if archive is not None:
                if archive.poll() is None:
                    archive.terminate()
                archive.wait(timeout=20)
            stop_driver(driver)


def answer_id(errors: list[str]) -> str:
    """The recording id the archive's storage error names ("recording N stopped at ...")."""
    for text in errors:
        if text.startswith("recording ") and "stopped at position" in text:
            return text.split()[1]
    raise AssertionError(f"no recording stopped for lack of space in the archive's errors: {errors}")


def test_a_truncation_that_fails_removing_files_leaves_the_catalog_truncated(archive_dir: str) -> None:  # noqa: F811
    """The catalog first, then the files: a segment that cannot be removed (a directory where a
    segment file would be) fails the truncation after the catalog already stops the recording
    there, so the catalog never claims data whose files are gone."""
    channel, stream = "aeron:ipc?term-length=64k", 4343
    with aeron_async.MediaDriver.launch(aeron_dir=new_aeron_dir(), **TEST_DRIVER_SETTINGS) as driver, \
            Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED",
                           segment_file_length="64k"), \
            aeron_async.Aeron.connect(driver.aeron_dir) as aeron, \
            AeronArchive.connect(aeron, timeout=5.0) as archive:
        subscription_id = archive.start_recording(channel, stream)
        with aeron.add_exclusive_publication(channel, stream) as publication:
            start = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id, timeout=10.0)
            for _ in range(100):
                offer_all(publication, bytes(1000))
            end = publication.position
            wait_for(lambda: archive.recording_position(start.recording_id) == end, what="the recording's catch-up")
        archive.wait_for_signal(RecordingSignal.STOP, recording_id=start.recording_id, timeout=10.0)
        recording_id = start.recording_id
        segments = sorted(n for n in os.listdir(archive_dir) if n.startswith(f"{recording_id}-"))
        assert len(segments) == 2, segments  # 100 KB in 64 KiB segments
        # the fault: a later "segment" unlink() cannot remove
        os.mkdir(os.path.join(archive_dir, f"{recording_id}-{64 * 1024 * 1000}.rec"))
        with pytest.raises(aeron_async.errors.ArchiveError, match="could not all be removed"):
            archive.truncate_recording(recording_id, start.position)
        assert archive.stop_position(recording_id) == start.position
        # the segments before the fault are gone, and nothing in the catalog claims them
        assert [n for n in os.listdir(archive_dir) if n.endswith(".rec")] == [f"{recording_id}-{64 * 1024 * 1000}.rec"]
        (descriptor,) = archive.list_recordings()
        assert descriptor.stop_position == descriptor.start_position == start.position
