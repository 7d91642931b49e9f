"""Who may use the archive (docs/security.md, "The archive"; reference aeron-wave3.md 6): the
credentials authenticator refuses a client without credentials and lets one with them in (sync and
async); a read-only principal lists and replays but may not purge, truncate or record
(UNAUTHORISED_ACTION); an authenticator written in Python challenges and decides off the archive's
threads; the caps on control sessions, response term lengths and replays per session refuse the
extra one with a message that names the option."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import Any

import pytest

import aeron_async
from aeron_async.archive import AeronArchive, ArchiveContext, ArchiveErrorCode, CredentialsSupplier
from aeron_async.archive import aio as archive_aio
from aeron_async.errors import ArchiveError, ArchiveLimitError, AuthenticationError, ConfigurationError
from support.archive_auth import answer
from support.archive_e2e import archive_beside_driver, record, wait_recorded
from conftest import offer_all

ENTRIES = "admin:s3cret:admin\nreader:r34d:read\n# a comment\n\nrecorder:r3c:record\n"
CHANNEL = "aeron:ipc"
STREAM = 7301


@pytest.fixture
def archive_dir(tmp_path: Any) -> str:
    return os.path.join(str(tmp_path), "archive")


@pytest.fixture
def credentials_file(tmp_path: Any) -> str:
    path = os.path.join(str(tmp_path), "archive-credentials")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write(ENTRIES)
    return path


@pytest.fixture
def guarded(aeron_dir: str, archive_dir: str, credentials_file: str) -> Iterator[Any]:
    with archive_beside_driver(aeron_dir, archive_dir, authenticator="credentials",
                               credentials_file=credentials_file) as service:
        yield service


@pytest.fixture
def client(guarded: Any) -> Iterator[aeron_async.Aeron]:
    with aeron_async.Aeron.connect(guarded.aeron_dir, driver_timeout=5.0) as c:
        yield c


def recorded(archive: AeronArchive, client: aeron_async.Aeron, count: int = 50) -> int:
    """A stopped recording of `count` messages (recorded by an admin session); its id."""
    publication = client.add_exclusive_publication(CHANNEL, STREAM)
    subscription_id, recording_id = record(archive, CHANNEL, STREAM)
    end = 0
    for i in range(count):
        end = offer_all(publication, b"message %d" % i)
    wait_recorded(archive, recording_id, end)
    archive.stop_recording(subscription_id=subscription_id)
    publication.close()
    return recording_id


def test_an_unauthenticated_client_is_refused_and_one_with_credentials_works(client: aeron_async.Aeron) -> None:
    for credentials in (b"", b"admin:wrong", b"admin:s3cre", b"nobody:s3cret", b"admin"):
        with pytest.raises(AuthenticationError, match="AUTHENTICATION_REJECTED: authentication rejected") as info:
            AeronArchive.connect(client, timeout=5.0, credentials=credentials)
        assert info.value.archive_code == ArchiveErrorCode.AUTHENTICATION_REJECTED
    with AeronArchive.connect(client, timeout=5.0, credentials=b"admin:s3cret") as archive:
        assert archive.list_recordings() == []
    with AeronArchive.connect(client, timeout=5.0, credentials=CredentialsSupplier(b"reader:r34d")) as archive:
        assert archive.list_recordings() == []


@pytest.mark.anyio
async def test_async_an_unauthenticated_client_is_refused_and_one_with_credentials_works(
        anyio_backend: Any, guarded: Any) -> None:
    async with aeron_async.connect(guarded.aeron_dir) as aeron:
        with pytest.raises(AuthenticationError) as info:
            async with archive_aio.connect(aeron, timeout=5.0):
                pass
        assert info.value.archive_code == ArchiveErrorCode.AUTHENTICATION_REJECTED
        async with archive_aio.connect(aeron, timeout=5.0, credentials=b"reader:r34d") as archive:
            assert await archive.list_recordings() == []
            with pytest.raises(AuthenticationError, match="unauthorised action") as refused:
                await archive.start_recording(CHANNEL, STREAM)
            assert refused.value.archive_code == ArchiveErrorCode.UNAUTHORISED_ACTION


def test_a_read_only_principal_lists_and_replays_but_cannot_purge_truncate_or_record(
        client: aeron_async.Aeron) -> None:
    with AeronArchive.connect(client, timeout=5.0, credentials=b"admin:s3cret") as admin:
        recording_id = recorded(admin, client)
        with AeronArchive.connect(client, timeout=5.0, credentials=b"reader:r34d") as reader:
            descriptor = reader.list_recording(recording_id)
            assert [d.recording_id for d in reader.list_recordings()] == [recording_id]
            with reader.replay(recording_id, follow=False) as replay:
                got = [bytes(m.data) for m in replay.messages(timeout=10.0)]
            assert got == [b"message %d" % i for i in range(50)]
            refusals = [
                (lambda: reader.purge_recording(recording_id), "PurgeRecordingRequest"),
                (lambda: reader.truncate_recording(recording_id, descriptor.start_position), "TruncateRecordingRequest"),
                (lambda: reader.start_recording(CHANNEL, STREAM + 1), "StartRecording"),
            ]
            for attempt, request in refusals:
                with pytest.raises(AuthenticationError) as info:
                    attempt()
                assert info.value.archive_code == ArchiveErrorCode.UNAUTHORISED_ACTION
                text = str(info.value)
                assert "unauthorised action" in text and request in text and "principal 'reader' (role read)" in text
            # the refused requests changed nothing, and the session is still usable
            assert reader.list_recording(recording_id).stop_position == descriptor.stop_position
        with AeronArchive.connect(client, timeout=5.0, credentials=b"recorder:r3c") as recorder:
            with pytest.raises(AuthenticationError, match="needs the role admin"):
                recorder.purge_recording(recording_id)
            subscription_id = recorder.start_recording(CHANNEL, STREAM + 2)
            recorder.stop_recording(subscription_id=subscription_id)
        admin.purge_recording(recording_id)
        assert admin.list_recordings() == []


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_credentials_file_others_may_read_is_refused(aeron_dir: str, archive_dir: str, credentials_file: str,
                                                       mode: int) -> None:
    os.chmod(credentials_file, mode)
    with pytest.raises(ConfigurationError, match=f"mode {mode:04o}.*chmod 600"):
        with archive_beside_driver(aeron_dir, archive_dir, authenticator="credentials",
                                   credentials_file=credentials_file):
            pass


def test_credentials_from_the_environment_on_both_sides(aeron_dir: str, archive_dir: str, tmp_path: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AERON_ARCHIVE_CREDENTIALS", "ops:0ps-pw:admin,viewer:v:read")
    client_file = os.path.join(str(tmp_path), "client-credentials")
    with open(os.open(client_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write("viewer:v\n")
    with archive_beside_driver(aeron_dir, archive_dir, authenticator="credentials") as service:
        assert "0ps-pw" not in repr(service.context)
        assert "hidden" not in repr(ArchiveContext(credentials="x:hidden:admin"))
        with aeron_async.Aeron.connect(service.aeron_dir, driver_timeout=5.0) as client:
            monkeypatch.setenv("AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE", client_file)
            with AeronArchive.connect(client, timeout=5.0) as archive:
                with pytest.raises(AuthenticationError, match="role read"):
                    archive.start_recording(CHANNEL, STREAM)
            os.chmod(client_file, 0o644)
            with pytest.raises(ConfigurationError, match="chmod 600"):
                AeronArchive.connect(client, timeout=5.0)
            monkeypatch.setenv("AERON_ARCHIVE_CLIENT_CREDENTIALS", "ops:0ps-pw")
            with AeronArchive.connect(client, timeout=5.0) as archive:
                subscription_id = archive.start_recording(CHANNEL, STREAM)
                archive.stop_recording(subscription_id=subscription_id)


def test_a_python_authenticator_challenges_and_decides(aeron_dir: str, archive_dir: str) -> None:
    with archive_beside_driver(aeron_dir, archive_dir,
                               authenticator="python:support.archive_auth:ChallengeAuthenticator") as service:
        with aeron_async.Aeron.connect(service.aeron_dir, driver_timeout=5.0) as client:
            heard: list[bytes] = []

            def on_challenge(challenge: bytes) -> bytes:
                heard.append(challenge)
                return answer(challenge)

            with AeronArchive.connect(client, timeout=5.0, credentials=b"alice", on_challenge=on_challenge) as alice:
                assert alice.list_recordings() == []
                with pytest.raises(AuthenticationError, match="principal 'alice' \\(role read\\)"):
                    alice.start_recording(CHANNEL, STREAM)
            assert len(heard) == 1 and len(heard[0]) == 16
            supplier = CredentialsSupplier(b"bob", on_challenge=answer)
            with AeronArchive.connect(client, timeout=5.0, credentials=supplier) as bob:
                subscription_id = bob.start_recording(CHANNEL, STREAM)
                bob.stop_recording(subscription_id=subscription_id)
            with pytest.raises(AuthenticationError, match="AUTHENTICATION_REJECTED"):
                AeronArchive.connect(client, timeout=5.0, credentials=b"alice", on_challenge=lambda c: b"guess")
            with pytest.raises(AuthenticationError, match="AUTHENTICATION_REJECTED"):
                AeronArchive.connect(client, timeout=5.0, credentials=b"mallory", on_challenge=answer)


def test_a_python_authenticator_that_raises_rejects_and_the_archive_lives(aeron_dir: str, archive_dir: str) -> None:
    with archive_beside_driver(aeron_dir, archive_dir,
                               authenticator="python:support.archive_auth:FailingAuthenticator") as service:
        with aeron_async.Aeron.connect(service.aeron_dir, driver_timeout=5.0) as client:
            for _ in range(2):
                with pytest.raises(AuthenticationError, match="AUTHENTICATION_REJECTED"):
                    AeronArchive.connect(client, timeout=5.0, credentials=b"anyone")


def test_an_unknown_python_authenticator_fails_the_launch(aeron_dir: str, archive_dir: str) -> None:
    with pytest.raises(ConfigurationError, match="archive authenticator class 'support.archive_auth:Missing'"):
        with archive_beside_driver(aeron_dir, archive_dir, authenticator="python:support.archive_auth:Missing"):
            pass


def _logs_over(aeron_dir: str, size: int) -> list[tuple[str, int, int]]:
    """(name, length, allocated bytes) of the log buffers in the aeron directory longer than `size`."""
    found = []
    for root, _, files in os.walk(aeron_dir):
        for name in files:
            st = os.stat(os.path.join(root, name))
            if name.endswith(".logbuffer") and stat.S_ISREG(st.st_mode) and st.st_size > size:
                found.append((name, st.st_size, st.st_blocks * 512))
    return found


def test_a_huge_response_channel_is_refused_and_a_served_one_stays_within_the_cap(aeron_dir: str,
                                                                                  archive_dir: str) -> None:
    with archive_beside_driver(aeron_dir, archive_dir) as service:
        with aeron_async.Aeron.connect(service.aeron_dir, driver_timeout=5.0) as client:
            with pytest.raises(ArchiveError, match="term-length=256m is over the archive's limit of 1048576 bytes "
                                                   "\\(AERON_ARCHIVE_MAX_RESPONSE_TERM_LENGTH\\)"):
                AeronArchive.connect(client, timeout=5.0, response_channel="aeron:ipc?term-length=256m|sparse=false")
            assert _logs_over(service.aeron_dir, 4 << 20) == [], "a log of the refused term length was created"
            # a term length within the cap is served: its log is three such terms, allocated whole as every log is
            # (docs/security.md, Disks), so the cap is what bounds the space a client can make the driver take
            with AeronArchive.connect(client, timeout=5.0,
                                      response_channel="aeron:ipc?term-length=1m|sparse=false") as archive:
                assert archive.list_recordings() == []
                logs = _logs_over(service.aeron_dir, 3 << 20)
                assert logs and all(length < 4 << 20 and allocated >= length for _, length, allocated in logs), logs
            with AeronArchive.connect(client, timeout=5.0) as archive:
                assert archive.list_recordings() == []


def test_control_session_and_replay_caps_refuse_the_extra_one(aeron_dir: str, archive_dir: str) -> None:
    with archive_beside_driver(aeron_dir, archive_dir, max_control_sessions=2, max_replays_per_session=1) as service:
        with aeron_async.Aeron.connect(service.aeron_dir, driver_timeout=5.0) as client:
            first = AeronArchive.connect(client, timeout=5.0)
            second = AeronArchive.connect(client, timeout=5.0)
            with pytest.raises(ArchiveError, match="too many control sessions: the archive runs 2 "
                                                   "\\(AERON_ARCHIVE_MAX_CONTROL_SESSIONS\\)"):
                AeronArchive.connect(client, timeout=5.0)
            second.close()
            publication = client.add_exclusive_publication(CHANNEL, STREAM)
            subscription_id, recording_id = record(first, CHANNEL, STREAM)
            wait_recorded(first, recording_id, offer_all(publication, b"live"))
            # a live recording followed: the replay runs until it is stopped
            replay_session_id = first.start_replay(recording_id, follow=True)
            with pytest.raises(ArchiveLimitError, match="AERON_ARCHIVE_MAX_REPLAYS_PER_SESSION") as info:
                first.start_replay(recording_id, follow=True)
            assert info.value.archive_code == ArchiveErrorCode.MAX_REPLAYS
            with AeronArchive.connect(client, timeout=5.0) as third:
                other = third.start_replay(recording_id, follow=True)
                third.stop_replay(other)
            first.stop_replay(replay_session_id)
            first.stop_recording(subscription_id=subscription_id)
            publication.close()
            first.close()
