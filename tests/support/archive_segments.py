"""Recordings of many small segments for the archive's segment, retention and response-channel
tests: 64 KiB terms and segments (one term a segment), numbered 1000-byte messages (62 a term)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal
from support.archive_e2e import archive_beside_driver
from conftest import offer_all, wait_for

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


@contextlib.contextmanager
def small_segment_archive(aeron_dir: str, archive_dir: str, **overrides: Any) -> Iterator[Any]:
    """(the archive service, a client, an archive client), the archive with 64 KiB segments."""
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
