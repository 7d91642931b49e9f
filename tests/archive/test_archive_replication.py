"""Replication between archives (docs/architecture.md, "Replication"; reference aeron-wave3.md 7):
two archives, each with a media driver of its own in a network namespace of its own, over UDP. The
destination replicates a stopped recording and a live one; a source archive killed mid-replication
ends it with an error and REPLICATE_END, and once restarted the replication resumes from where it
stopped by extending the destination recording. Each time the destination recording is the
source's byte for byte (its segment files, `aeron-async recordings verify`, a checksum of the
replayed stream) and its catalog entry has the source's start and stop positions.

The test's own clients reach each archive through its driver's directory (shared memory, IPC
control), which a network namespace does not separate."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal
from aeron_async.archive import aio as archive_aio
from aeron_async.bench import netns
from aeron_async.errors import ArchiveError
from support.archive_e2e import Stream, record, wait_recorded
from conftest import new_aeron_dir, python_env, run_proc

pytestmark = pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))

CHANNEL, STREAM_ID = "aeron:ipc?term-length=256k", 1001
CONTROL_PORT = 8010


class Site:
    """An archive (with its driver) in a process inside `host`'s namespace."""

    def __init__(self, host: netns.Host, archive_dir: str, replication_channel: str | None = None) -> None:
        self.host, self.archive_dir, self.replication_channel = host, archive_dir, replication_channel
        self.proc: subprocess.Popen[str] | None = None
        self.aeron_dir = ""
        self.clients: list[Any] = []

    @property
    def control_channel(self) -> str:
        return f"aeron:udp?endpoint={self.host.address}:{CONTROL_PORT}"

    def start(self) -> None:
        self.aeron_dir = new_aeron_dir()
        extra = [self.replication_channel] if self.replication_channel else []
        self.proc = run_proc("archive_host.py", self.aeron_dir, self.archive_dir, self.host.address, *extra,
                             prefix=self.host.command(), stdin=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.proc.kill()
            raise AssertionError(f"archive in {self.host.namespace} did not start: {line}{self.proc.stdout.read()}")

    def connect(self) -> tuple[aeron_async.Aeron, AeronArchive]:
        client = aeron_async.Aeron.connect(self.aeron_dir, driver_timeout=5.0)
        archive = AeronArchive.connect(client, timeout=10.0)
        self.clients += [archive, client]
        return client, archive

    def close_clients(self) -> None:
        for c in self.clients:
            with contextlib.suppress(Exception):
                c.close()
        self.clients = []

    def kill(self) -> None:
        self.close_clients()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        shutil.rmtree(self.aeron_dir, ignore_errors=True)

    def stop(self) -> None:
        """A clean shutdown (the archive writes its stop positions): stdin closes."""
        self.close_clients()
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        shutil.rmtree(self.aeron_dir, ignore_errors=True)


@pytest.fixture
def sites(tmp_path: Any) -> Iterator[tuple[Site, Site]]:
    with netns.two_hosts() as (a, b):
        src = Site(a, str(tmp_path / "src"))
        dst = Site(b, str(tmp_path / "dst"), f"aeron:udp?endpoint={b.address}:0")
        try:
            src.start()
            dst.start()
            yield src, dst
        finally:
            dst.kill()
            src.kill()


def record_stream(client: aeron_async.Aeron, archive: AeronArchive, count: int, seed: int) -> tuple[Any, int, int, Stream]:
    """A publication on the source recorded (LOCAL) with `count` messages published: (publication,
    subscription id, recording id, stream)."""
    publication = client.add_exclusive_publication(CHANNEL, STREAM_ID)
    subscription_id, recording_id = record(archive, CHANNEL, STREAM_ID)
    stream = Stream(count, seed)
    end = stream.publish(publication)
    wait_recorded(archive, recording_id, end)
    return publication, subscription_id, recording_id, stream


def segments(archive_dir: str, recording_id: int) -> dict[str, bytes]:
    return {name.split("-", 1)[1]: open(os.path.join(archive_dir, name), "rb").read()
            for name in sorted(os.listdir(archive_dir)) if name.startswith(f"{recording_id}-") and name.endswith(".rec")}


def replayed_digest(archive: AeronArchive, recording_id: int) -> str:
    """sha256 over every replayed message's position and bytes."""
    digest = hashlib.sha256()
    with archive.replay(recording_id, follow=False) as replay:
        for message in replay.messages(timeout=10.0):
            digest.update(message.position.to_bytes(8, "little"))
            digest.update(bytes(message.data))
    return digest.hexdigest()


def assert_identical(src: Site, src_archive: AeronArchive, src_id: int, dst: Site, dst_archive: AeronArchive,
                     dst_id: int) -> None:
    s, d = src_archive.list_recording(src_id), dst_archive.list_recording(dst_id)
    assert (d.start_position, d.stop_position) == (s.start_position, s.stop_position)
    assert (d.initial_term_id, d.term_buffer_length, d.mtu_length, d.stream_id, d.session_id) == \
        (s.initial_term_id, s.term_buffer_length, s.mtu_length, s.stream_id, s.session_id)
    assert replayed_digest(dst_archive, dst_id) == replayed_digest(src_archive, src_id)
    src_files, dst_files = segments(src.archive_dir, src_id), segments(dst.archive_dir, dst_id)
    assert dst_files.keys() == src_files.keys()
    for base, data in src_files.items():
        assert dst_files[base] == data, f"segment {base} differs"


def verify_cli(archive_dir: str, recording_id: int) -> None:
    out = subprocess.run([sys.executable, "-m", "aeron_async", "recordings", "verify", "--archive-dir", archive_dir,
                          str(recording_id)], env=python_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and f"recording {recording_id}: OK" in out.stdout, out.stdout + out.stderr


def signals_of(archive: AeronArchive, replication_id: int) -> list[RecordingSignal]:
    return [RecordingSignal(e.signal) for e in archive.poll_for_recording_signals() if e.correlation_id == replication_id]


def test_replicate_a_stopped_recording(sites: tuple[Site, Site]) -> None:
    src, dst = sites
    src_client, src_archive = src.connect()
    _, dst_archive = dst.connect()
    publication, _, src_id, stream = record_stream(src_client, src_archive, 3000, seed=1)
    src_archive.stop_recording(recording_id=src_id)
    src_archive.wait_for_signal(RecordingSignal.STOP, recording_id=src_id, timeout=10)
    publication.close()

    replication_id = dst_archive.replicate(src_id, src.control_channel, 10)
    replicate = dst_archive.wait_for_replication(replication_id, RecordingSignal.REPLICATE, timeout=20)
    dst_id = replicate.recording_id
    end = dst_archive.wait_for_replication(replication_id, timeout=20)
    assert end.recording_id == dst_id and end.position == src_archive.list_recording(src_id).stop_position
    # Aeron's order for a new copy: REPLICATE, EXTEND, SYNC, STOP, REPLICATE_END (the two taken above aside)
    left = [RecordingSignal.REPLICATE] + signals_of(dst_archive, replication_id) + [RecordingSignal.REPLICATE_END]
    assert left == [RecordingSignal.REPLICATE, RecordingSignal.EXTEND, RecordingSignal.SYNC, RecordingSignal.STOP,
                    RecordingSignal.REPLICATE_END], left
    assert_identical(src, src_archive, src_id, dst, dst_archive, dst_id)
    # replicating again into it: already in sync
    again = dst_archive.replicate(src_id, src.control_channel, 10, dst_recording_id=dst_id)
    assert dst_archive.wait_for_replication(again, RecordingSignal.SYNC, timeout=20).recording_id == dst_id
    dst_archive.wait_for_replication(again, timeout=20)
    dst.stop()
    verify_cli(dst.archive_dir, dst_id)


def test_replicate_a_live_recording_and_resume_after_the_source_restarts(sites: tuple[Site, Site]) -> None:
    src, dst = sites
    src_client, src_archive = src.connect()
    _, dst_archive = dst.connect()
    publication, _, src_id, stream = record_stream(src_client, src_archive, 2000, seed=2)
    replication_id = dst_archive.replicate(src_id, src.control_channel, 10)
    dst_id = dst_archive.wait_for_replication(replication_id, RecordingSignal.EXTEND, timeout=20).recording_id
    first_end = stream.positions[-1]
    wait_recorded(dst_archive, dst_id, first_end, timeout=20)
    # live: more is published and followed
    more = Stream(1500, seed=3)
    second_end = more.publish(publication)
    wait_recorded(src_archive, src_id, second_end)
    wait_recorded(dst_archive, dst_id, second_end, timeout=20)

    # the destination's host stops receiving; the source records a third part and is killed (kill -9
    # of the archive and its driver) with the replication behind it
    dst.host.drop_udp(100)
    third_end = Stream(2500, seed=5).publish(publication)
    wait_recorded(src_archive, src_id, third_end)
    src.kill()
    with pytest.raises(ArchiveError, match="went away") as failed:
        dst_archive.wait_for_replication(replication_id, timeout=30)
    assert f"dst recording id {dst_id}" in str(failed.value)
    assert dst_archive.list_recording(dst_id).stop_position == second_end
    dst.host.stop_dropping_udp()

    src.start()  # the same archive directory: it recovers the recording's stop position
    _, src_archive = src.connect()
    assert src_archive.list_recording(src_id).stop_position == third_end
    resumed = dst_archive.replicate(src_id, src.control_channel, 10, dst_recording_id=dst_id)
    extend = dst_archive.wait_for_replication(resumed, RecordingSignal.EXTEND, timeout=20)
    assert (extend.recording_id, extend.position) == (dst_id, second_end)  # from where it stopped
    assert dst_archive.wait_for_replication(resumed, RecordingSignal.SYNC, timeout=20).position == third_end
    dst_archive.wait_for_replication(resumed, timeout=20)
    assert_identical(src, src_archive, src_id, dst, dst_archive, dst_id)
    dst.stop()
    verify_cli(dst.archive_dir, dst_id)


@pytest.mark.anyio
async def test_replicate_up_to_a_stop_position_then_follow_and_stop_replication(
        anyio_backend: Any, sites: tuple[Site, Site]) -> None:
    """A replication up to a stop position, then the rest into the same recording, following the
    live source until stop_replication ends it (REPLICATE_END); the async client."""
    src, dst = sites
    src_client, src_archive = src.connect()
    publication, _, src_id, stream = record_stream(src_client, src_archive, 1000, seed=4)
    middle, end = stream.positions[499], stream.positions[-1]
    async with aeron_async.connect(dst.aeron_dir) as aeron:
        async with archive_aio.connect(aeron) as archive:
            first = await archive.replicate(src_id, src.control_channel, 10, stop_position=middle)
            dst_id = (await archive.wait_for_replication(first, RecordingSignal.REPLICATE, timeout=20)).recording_id
            await archive.wait_for_replication(first, timeout=20)
            assert (await archive.list_recording(dst_id)).stop_position == middle

            following = await archive.replicate(src_id, src.control_channel, 10, dst_recording_id=dst_id)
            extend = await archive.wait_for_replication(following, RecordingSignal.EXTEND, timeout=20)
            assert extend.recording_id == dst_id and extend.position == middle
            with anyio.fail_after(20):
                while await archive.max_recorded_position(dst_id) < end:
                    await anyio.sleep(0.01)
            await archive.stop_replication(following)
            assert (await archive.wait_for_replication(following, timeout=20)).position == end
            with pytest.raises(ArchiveError, match="unknown replication id"):
                await archive.stop_replication(following)
    # the recording stopped while its publication is still open (closing it first ends the recording
    # too, racing the request: "no active recording" on a slow machine)
    src_archive.stop_recording(recording_id=src_id)
    src_archive.wait_for_signal(RecordingSignal.STOP, recording_id=src_id, timeout=10)
    publication.close()
    _, dst_archive = dst.connect()
    assert_identical(src, src_archive, src_id, dst, dst_archive, dst_id)


def test_replicate_and_merge_into_the_live_stream(sites: tuple[Site, Site]) -> None:
    """With a live destination the replication catches up from the source's recording of a UDP
    stream, joins the live stream (MERGE) and the destination goes on recording it from there: the
    two recordings are the same when the stream ends."""
    src, dst = sites
    b = dst.host.address
    dst_client, dst_archive = dst.connect()
    _, src_archive = src.connect()
    # the live publisher beside the destination: manual MDC to the source archive's recording
    # endpoint and to the destination's live endpoint
    publication = dst_client.add_exclusive_publication(
        f"aeron:udp?control-mode=manual|control={b}:40460|term-length=256k", STREAM_ID)
    recording_channel = f"aeron:udp?endpoint={src.host.address}:40470"
    live_destination = f"aeron:udp?endpoint={b}:40471"
    publication.add_destination(recording_channel)
    publication.add_destination(live_destination)
    subscription_id, src_id = record(src_archive, recording_channel, STREAM_ID, source_location="remote")
    first = Stream(2000, seed=6)
    wait_recorded(src_archive, src_id, first.publish(publication))

    replication_id = dst_archive.replicate(src_id, src.control_channel, 10, live_destination=live_destination)
    dst_id = dst_archive.wait_for_replication(replication_id, RecordingSignal.REPLICATE, timeout=20).recording_id
    merged = dst_archive.wait_for_replication(replication_id, RecordingSignal.MERGE, timeout=30)
    assert merged.recording_id == dst_id
    dst_archive.wait_for_replication(replication_id, timeout=20)  # REPLICATE_END: the recording goes on
    assert dst_archive.recording_position(dst_id) is not None
    second_end = Stream(2000, seed=7).publish(publication)  # now only over the live stream
    wait_recorded(dst_archive, dst_id, second_end, timeout=20)
    wait_recorded(src_archive, src_id, second_end, timeout=20)
    publication.close()  # the stream ends: both recordings stop at its end
    dst_archive.wait_for_signal(RecordingSignal.STOP, recording_id=dst_id, timeout=20)
    src_archive.stop_recording(subscription_id=subscription_id)
    assert dst_archive.list_recording(dst_id).stop_position == second_end
    assert_identical(src, src_archive, src_id, dst, dst_archive, dst_id)
