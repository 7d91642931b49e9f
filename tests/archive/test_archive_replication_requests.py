"""Replication's requests and its connection to the source (docs/architecture.md, "Replication";
reference aeron-wave3.md 7): two archives in this process, each beside a driver of its own, the
source's control channel on the loopback. Credentials reach the source (a `read` principal is
enough to be replicated from), a source that challenges or rejects ends the replication with
REPLICATION_CONNECTION_FAILURE, and the up-front refusals have Aeron's codes and texts."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

import aeron_async
from aeron_async.archive import AeronArchive, ArchiveErrorCode, RecordingSignal
from aeron_async.errors import ArchiveError
from support.archive_e2e import archive_beside_driver, free_udp_port, record, wait_recorded
from conftest import new_aeron_dir

CHANNEL, STREAM_ID = "aeron:ipc?term-length=64k", 1001


@contextlib.contextmanager
def archive(tmp_path: Any, name: str, client_credentials: bytes | None = None,
            **overrides: Any) -> Iterator[tuple[AeronArchive, aeron_async.Aeron]]:
    """An archive beside a driver of its own, and a client of it (with `client_credentials`)."""
    aeron_dir = new_aeron_dir()
    try:
        with archive_beside_driver(aeron_dir, str(tmp_path / name), **overrides), \
                aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client, \
                AeronArchive.connect(client, timeout=10.0, credentials=client_credentials) as a:
            yield a, client
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)


def stopped_recording(archive: AeronArchive, client: aeron_async.Aeron, count: int = 200) -> int:
    publication = client.add_exclusive_publication(CHANNEL, STREAM_ID)
    _, recording_id = record(archive, CHANNEL, STREAM_ID)
    end = 0
    for i in range(count):
        while (end := publication.offer(i.to_bytes(4, "little") * 8)) < 0:
            pass
    wait_recorded(archive, recording_id, end)
    archive.stop_recording(recording_id=recording_id)
    archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id, timeout=10)
    publication.close()
    return recording_id


def test_credentials_reach_the_source_and_a_read_principal_is_enough(tmp_path: Any) -> None:
    control = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    with archive(tmp_path, "src", b"admin:s3cret", control_channel=control, authenticator="credentials",
                 credentials="admin:s3cret:admin,reader:r34d:read") as (src, src_client), \
            archive(tmp_path, "dst", replication_channel="aeron:udp?endpoint=127.0.0.1:0") as (dst, _):
        src_id = stopped_recording(src, src_client)
        stop = src.list_recording(src_id).stop_position
        replication_id = dst.replicate(src_id, control, 10, encoded_credentials=b"reader:r34d")
        assert dst.wait_for_replication(replication_id, RecordingSignal.SYNC, timeout=20).position == stop
        end = dst.wait_for_replication(replication_id, timeout=20)
        assert dst.list_recording(end.recording_id).stop_position == stop

        # tagged: the recording subscription is a multi-destination one with tags=<channel>,<subscription>
        # and the replication endpoint its destination; the new recording copies the source's descriptor
        tagged = dst.replicate(src_id, control, 10, encoded_credentials=b"reader:r34d", channel_tag_id=3001,
                               subscription_tag_id=3002)
        extend = dst.wait_for_replication(tagged, RecordingSignal.EXTEND, timeout=20)
        assert dst.list_recording(extend.recording_id).original_channel == CHANNEL
        assert dst.wait_for_replication(tagged, timeout=20).position == stop
        assert dst.list_recording(extend.recording_id).stop_position == stop

        rejected = dst.replicate(src_id, control, 10, encoded_credentials=b"reader:wrong")
        with pytest.raises(ArchiveError, match="refused the connect") as failed:
            dst.wait_for_replication(rejected, timeout=20)
        assert failed.value.archive_code == ArchiveErrorCode.REPLICATION_CONNECTION_FAILURE


def test_a_challenging_source_ends_the_replication(tmp_path: Any) -> None:
    control = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    src_dir = new_aeron_dir()
    try:
        with archive_beside_driver(src_dir, str(tmp_path / "src"), control_channel=control,
                                   authenticator="python:support.archive_auth:ChallengeAuthenticator"), \
                archive(tmp_path, "dst", replication_channel="aeron:udp?endpoint=127.0.0.1:0") as (dst, _):
            replication_id = dst.replicate(0, control, 10, encoded_credentials=b"alice")
            with pytest.raises(ArchiveError, match="Replication does not support challenge/response authentication") as e:
                dst.wait_for_replication(replication_id, timeout=20)
            assert e.value.archive_code == ArchiveErrorCode.REPLICATION_CONNECTION_FAILURE
    finally:
        shutil.rmtree(src_dir, ignore_errors=True)


def test_up_front_refusals(tmp_path: Any) -> None:
    control = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    with archive(tmp_path, "dst") as (dst, client):
        recording_id = stopped_recording(dst, client, 10)
        with pytest.raises(ArchiveError, match="unknown recording id 77") as e:
            dst.replicate(0, control, 10, dst_recording_id=77, replication_channel="aeron:udp?endpoint=127.0.0.1:0")
        assert e.value.archive_code == ArchiveErrorCode.UNKNOWN_RECORDING
        with pytest.raises(ArchiveError, match="AERON_ARCHIVE_REPLICATION_CHANNEL"):
            dst.replicate(0, control, 10, dst_recording_id=recording_id)  # no channel given nor configured
        response = "aeron:udp?control-mode=response|control=127.0.0.1:9999"
        with pytest.raises(ArchiveError, match="response channels can't be used with live destinations"):
            dst.replicate(0, control, 10, live_destination="aeron:udp?endpoint=127.0.0.1:9998",
                          src_response_channel=response, replication_channel="aeron:udp?endpoint=127.0.0.1:0")
        with pytest.raises(ArchiveError, match="response channels can't be used with tagged replication"):
            dst.replicate(0, control, 10, channel_tag_id=5, src_response_channel=response,
                          replication_channel="aeron:udp?endpoint=127.0.0.1:0")
        with pytest.raises(ArchiveError, match="unknown replication id 12345") as e:
            dst.stop_replication(12345)
        assert e.value.archive_code == ArchiveErrorCode.UNKNOWN_REPLICATION
        # an active destination recording
        publication = client.add_exclusive_publication(CHANNEL + "|session-id=4242", STREAM_ID + 1)
        _, active = record(dst, CHANNEL, STREAM_ID + 1)
        with pytest.raises(ArchiveError, match=f"cannot replicate to active recording {active}") as e:
            dst.replicate(0, control, 10, dst_recording_id=active, replication_channel="aeron:udp?endpoint=127.0.0.1:0")
        assert e.value.archive_code == ArchiveErrorCode.ACTIVE_RECORDING
        publication.close()
