"""Where a message written by the aeron sink came from: the reserved value layout (docs/spark.md).

Every message the sink publishes carries, in the 64-bit reserved value of its DATA frame header:

    bits 62-63  tag       0b10: written by the aeron sink (so the value is not the user's own)
    bit  61     kind      0: a Structured Streaming micro-batch (batch = Spark's batch id)
                          1: a batch write (batch = a random 32-bit id of that write)
    bit  60     end       1 only on the empty message that ends a task attempt that finished
    bits 28-59  batch     the micro-batch id, or the batch write's id (32 bits)
    bits 8-27   partition the Spark partition id (20 bits)
    bits 0-7    attempt   the task attempt number (modulo 256; informational)

The value is stored as a signed 64-bit integer (so with the tag it is negative). Each task attempt
publishes on its own exclusive publication (its own session, so its own recording), and a finished
attempt ends with one empty message whose reserved value has the `end` bit set.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import InvalidArgumentError

TAG = 0b10
KIND_STREAM = 0
KIND_BATCH_WRITE = 1

_TAG_SHIFT = 62
_KIND_SHIFT = 61
_END_SHIFT = 60
_BATCH_SHIFT = 28
_PARTITION_SHIFT = 8

BATCH_MAX = (1 << 32) - 1
PARTITION_MAX = (1 << 20) - 1
ATTEMPT_MASK = 0xFF


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


# the bits that tell an end marker (tag and end bit), as signed 64-bit values for Arrow compute
TAG_AND_END_MASK = _signed((0b11 << _TAG_SHIFT) | (1 << _END_SHIFT))
TAG_AND_END_VALUE = _signed((TAG << _TAG_SHIFT) | (1 << _END_SHIFT))


class Provenance(NamedTuple):
    """The sink's identification of one task attempt (and whether a message ends it)."""

    kind: int
    batch: int
    partition: int
    attempt: int
    end: bool = False

    @property
    def group(self) -> tuple[int, int, int]:
        """What all attempts of the same task share: (kind, batch, partition)."""
        return (self.kind, self.batch, self.partition)


def encode(kind: int, batch: int, partition: int, attempt: int, end: bool = False) -> int:
    """The reserved value (a signed 64-bit integer) for a message of this task attempt."""
    if kind not in (KIND_STREAM, KIND_BATCH_WRITE):
        raise InvalidArgumentError(f"kind={kind!r}: 0 (micro-batch) or 1 (batch write)")
    if not 0 <= batch <= BATCH_MAX:
        raise InvalidArgumentError(f"batch id {batch} does not fit the sink's 32-bit field of the reserved value")
    if not 0 <= partition <= PARTITION_MAX:
        raise InvalidArgumentError(f"partition id {partition} is past the sink's limit of {PARTITION_MAX + 1} partitions: "
                         "repartition the DataFrame into fewer partitions before writing it")
    value = ((TAG << _TAG_SHIFT) | (kind << _KIND_SHIFT) | (int(end) << _END_SHIFT) | (batch << _BATCH_SHIFT)
             | (partition << _PARTITION_SHIFT) | (attempt & ATTEMPT_MASK))
    return _signed(value)


def decode(reserved_value: int) -> Provenance | None:
    """The provenance in a reserved value, or None when the sink did not write it."""
    value = reserved_value & ((1 << 64) - 1)
    if value >> _TAG_SHIFT != TAG:
        return None
    return Provenance(
        kind=(value >> _KIND_SHIFT) & 1,
        batch=(value >> _BATCH_SHIFT) & BATCH_MAX,
        partition=(value >> _PARTITION_SHIFT) & PARTITION_MAX,
        attempt=value & ATTEMPT_MASK,
        end=bool((value >> _END_SHIFT) & 1),
    )


def is_end_marker(reserved_value: int) -> bool:
    """True for the empty message that closes a finished task attempt of the sink: subscribers
    reading a sink stream directly skip these (the aeron source does with dropRepeats=true)."""
    found = decode(reserved_value)
    return found is not None and found.end
