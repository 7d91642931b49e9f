"""`dropRepeats=true`: read a recorded sink stream as the output of the finished task attempts only.

A retried task (a failure, a lost executor, a speculative copy, a micro-batch re-run after a
restart) publishes its partition again. The sink publishes each task attempt on its own session,
so the archive keeps each attempt as its own recording, and an attempt that finished ends with an
empty end-marker message (provenance.py). The rule, decided per recording when the read is planned:

- a recording whose messages the sink did not write (no sink tag) is read as it is;
- of the finished attempts of one task (same kind, batch and partition), the first recorded (lowest
  recording id) is read and the others are dropped (they repeat it, whatever the row order);
- an attempt that did not finish (no end marker: it died half way, or is still writing) is dropped,
  whether or not a retry of it finished: what of it arrived is not the task's committed output;
- the end markers themselves are dropped from what the finished attempts return.

The decision looks only at the catalog and at two tiny replays per recording (the 32-byte frame
before its stop position, and its first message when that frame is not an end marker), so it is
the same on every re-run of a plan over stopped recordings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..archive import AeronArchive
from ..errors import ArchiveError
from . import provenance

END_MARKER_FRAME = 32  # an empty message: a bare DATA frame header
PROBE_TIMEOUT = 5.0


Replays = tuple[str, int]  # the channel and stream id the probes are replayed to
LOCAL_REPLAYS: Replays = ("aeron:ipc", 1001)


def _first_reserved(archive: AeronArchive, recording_id: int, position: int, length: int,
                    replays: Replays) -> int | None:
    """The reserved value of the first message from `position` within `length`, if any."""
    with archive.replay(recording_id, position, length, follow=False, channel=replays[0],
                        stream_id=replays[1]) as replay:
        for message in replay.messages(timeout=PROBE_TIMEOUT):
            return message.reserved_value
    return None


def classify(archive: AeronArchive, descriptor: Any,
             replays: Replays = LOCAL_REPLAYS) -> tuple[provenance.Provenance | None, bool]:
    """(provenance of the recording's attempt, or None when the sink did not write it; finished)."""
    start, stop = descriptor.start_position, descriptor.stop_position
    if stop < 0:
        stop = archive.max_recorded_position(descriptor.recording_id)
        active = True
    else:
        active = False
    if stop <= start:
        return None, False
    if not active and stop - start >= END_MARKER_FRAME:
        try:
            last = _first_reserved(archive, descriptor.recording_id, stop - END_MARKER_FRAME, END_MARKER_FRAME,
                                   replays)
        except ArchiveError:  # not a frame boundary: the last message is longer than a bare header
            last = None
        found = provenance.decode(last) if last is not None else None
        if found is not None and found.end:
            return found, True
    first = _first_reserved(archive, descriptor.recording_id, start, stop - start, replays)
    return (provenance.decode(first) if first is not None else None), False


def recordings_to_drop(archive: AeronArchive, descriptors: Sequence[Any], replays: Replays = LOCAL_REPLAYS) -> set[int]:
    """The ids, among `descriptors` (RecordingDescriptors), of recordings that dropRepeats leaves
    out: repeats of a finished attempt read from another recording, and unfinished attempts."""
    finished: dict[tuple[int, int, int], list[int]] = {}
    drop: set[int] = set()
    for descriptor in descriptors:
        found, done = classify(archive, descriptor, replays)
        if found is None:
            continue
        if done:
            finished.setdefault(found.group, []).append(descriptor.recording_id)
        else:
            drop.add(descriptor.recording_id)
    for recording_ids in finished.values():
        drop.update(sorted(recording_ids)[1:])
    return drop


def drop_end_markers(batch: Any) -> Any:
    """The rows of an Arrow RecordBatch (with a `reserved_value` int64 column) that are not the
    sink's end markers. Vectorised: the marker bits are compared on the whole column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mask = provenance.TAG_AND_END_MASK
    want = provenance.TAG_AND_END_VALUE
    column = batch.column("reserved_value")
    marked = pc.equal(pc.bit_wise_and(column, pa.scalar(mask, pa.int64())), pa.scalar(want, pa.int64()))
    if not pc.any(marked).as_py():
        return batch
    return batch.filter(pc.invert(marked))
