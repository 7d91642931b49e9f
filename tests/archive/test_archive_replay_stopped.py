"""Replays of a stopped recording (`follow=False`), many in a row, quickly: each gets its image and
every message of its range, whole or a tiny tail (docs/architecture.md, "Archive", the client part: **Replay**)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal
from aeron_async.archive import aio as archive_aio
from conftest import wait_for
from support.archive_e2e import archive_beside_driver, record

ROUNDS = 100


@pytest.fixture
def stopped(aeron_dir: str, tmp_path: Any) -> Any:
    """An archive beside a driver with three stopped recordings of a few messages each:
    (service, [(recording id, [(data, position)])])."""
    with archive_beside_driver(aeron_dir, str(tmp_path / "archive")) as service:
        recordings = []
        with aeron_async.Aeron.connect(service.aeron_dir) as client, AeronArchive.connect(client) as archive:
            for n, count in enumerate((1, 3, 40)):
                publication = client.add_exclusive_publication("aeron:ipc?term-length=64k", 6201)
                subscription_id, recording_id = record(archive, "aeron:ipc?term-length=64k", 6201)
                sent = []
                for i in range(count + 1):  # the last one empty: a bare 32-byte frame, as the Spark sink's end marker
                    data = f"r{n}-{i}".encode() * (1 + i % 5) if i < count else b""
                    position = wait_for(lambda: max(publication.offer(data), 0), 10, what="offer")
                    sent.append((data, position))
                publication.close()
                archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id, timeout=10)
                archive.stop_recording(subscription_id=subscription_id)
                recordings.append((recording_id, sent))
        yield service, recordings


def test_replays_of_stopped_recordings_always_get_their_image(stopped: Any) -> None:
    service, recordings = stopped
    with aeron_async.Aeron.connect(service.aeron_dir) as client, AeronArchive.connect(client) as archive:
        for round_ in range(ROUNDS):
            for recording_id, sent in recordings:
                with archive.replay(recording_id, follow=False) as replay:
                    got = [(bytes(m.data), m.position) for m in replay.messages(timeout=10)]
                assert got == sent, f"round {round_}, recording {recording_id}"
                # the last frame alone, 32 bytes (the Spark sink's probe for its end marker)
                with archive.replay(recording_id, sent[-1][1] - 32, 32, follow=False) as tail:
                    got = [(bytes(m.data), m.position) for m in tail.messages(timeout=10)]
                assert got == sent[-1:], f"round {round_}, tail of recording {recording_id}"


@pytest.mark.anyio
async def test_async_replays_of_stopped_recordings_always_get_their_image(anyio_backend: Any, stopped: Any) -> None:
    service, recordings = stopped
    async with aeron_async.connect(service.aeron_dir) as aeron, archive_aio.connect(aeron) as archive:
        for round_ in range(ROUNDS // 3):
            for recording_id, sent in recordings:
                async with archive.replay(recording_id, follow=False) as replay:
                    got = [(bytes(m.data), m.position) async for m in replay]
                assert got == sent, f"round {round_}, recording {recording_id}"


@pytest.mark.anyio
async def test_async_replay_read_to_its_end_before_its_image_was_looked_at_still_ends(
        anyio_backend: Any, stopped: Any) -> None:
    """The race behind replays of stopped recordings that never got their image: a replay that has
    sent everything is drained as soon as its subscriber has read it, and the driver withdraws its
    image (at its next publication check); a client that looks for the image in the subscription's
    current images, rather than keeping it from the AVAILABLE event, then finds none and waits out
    its timeout ("the replay stream did not connect"). Here the replay is read natively and drained
    before the AsyncReplay looks: it must end at once, with nothing more."""
    service, recordings = stopped
    recording_id, sent = recordings[1]
    async with aeron_async.connect(service.aeron_dir) as aeron, \
            archive_aio.connect(aeron, timeout=3.0) as archive:
        for _ in range(3):
            async with archive.replay(recording_id, follow=False) as replay:
                assert replay.subscription is not None
                native = replay.subscription.subscription
                read: list[Any] = []
                wait_for(lambda: read.extend(native.poll_messages()) or len(read) == len(sent), what="the replay")
                wait_for(lambda: not native.is_connected, what="the drained replay's image withdrawn")
                with anyio.fail_after(2.0):  # not the archive client's timeout
                    assert [m async for m in replay] == []
            assert [(bytes(m.data), m.position) for m in read] == sent
