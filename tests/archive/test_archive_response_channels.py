"""Response channels at the archive (reference aeron-wave3.md 1.3-1.5, 6.2, 6.4; docs/architecture.md,
"Replays over response channels"): a control session whose responses come over a response channel,
replays over response channels with a replay token (the archive's side, driven by hand, and the
clients' own), over IPC and UDP; UpdateChannel refused saying why."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import aeron_async
from aeron_async._ffi import lib
from aeron_async.archive import AeronArchive, _codec
from aeron_async.archive import aio as archive_aio
from aeron_async.errors import ArchiveError, UnknownRecordingError
from support.archive_e2e import free_udp_port
from support.archive_segments import record, replayed, small_segment_archive
from conftest import wait_for


@pytest.fixture
def archive_dir(tmp_path: Any) -> str:
    return os.path.join(str(tmp_path), "archive")


@pytest.fixture
def clients(aeron_dir: str, archive_dir: str) -> Iterator[Any]:
    with small_segment_archive(aeron_dir, archive_dir) as clients:
        yield clients


def test_replay_over_a_response_channel_with_a_replay_token(clients: Any) -> None:
    """Aeron's token path (reference aeron-wave3.md 6.4, 1.3): ReplayToken, then the Replay with it
    from a new publication to the control channel whose response-correlation-id names the replay's
    subscription (control-mode=response): the archive answers on the session and replays to that
    subscription. Without a token, or with a wrong one, it refuses saying why."""
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
    with small_segment_archive(aeron_dir, archive_dir,
                               control_channel=f"aeron:udp?endpoint=127.0.0.1:{control}") as (_, aeron, local):
        rid, _, _ = record(aeron, local, 80)
        with AeronArchive.connect(aeron, control_channel=f"aeron:udp?endpoint=127.0.0.1:{control}",
                                  response_channel=f"aeron:udp?control-mode=response|control=127.0.0.1:{responses}",
                                  timeout=10.0) as nat:
            assert [d.recording_id for d in nat.list_recordings()] == [rid]
            with nat.replay(rid, channel=f"aeron:udp?control-mode=response|control=127.0.0.1:{replays}",
                            stream_id=9004, follow=False) as replay:
                assert [int(bytes(m.data)[1:6]) for m in replay.messages(timeout=10.0)] == list(range(80))


def test_update_channel_is_refused_saying_why(clients: Any) -> None:
    _, aeron, archive = clients
    rid, _, _ = record(aeron, archive, 10)
    update = archive._request(lambda s, c: _codec._encode(lib.AA_ARCHIVE_TEMPLATE_UPDATE_CHANNEL_REQUEST,
                                                          "update_channel_request", control_session_id=s,
                                                          correlation_id=c, recording_id=rid,
                                                          channel=b"aeron:ipc"), "update_channel")
    assert update.error_message == ("UpdateChannelRequest (template 107) is not supported by this archive "
                                    "(channel updates are not implemented)")
    assert replayed(archive, rid) == list(range(10))
