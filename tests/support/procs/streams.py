"""Deterministic message streams for multi-process tests: both sides derive message i from i
(and a publishing process's wait for its subscribers, `await_connected`).

Message layout: sequence (u64), length (u32), crc32 of the body (u32), then the body: a slice of
a fixed pseudo-random pool chosen by the sequence. The subscriber checks sequence order, length,
the CRC and that the body equals the expected slice.
"""

from __future__ import annotations

import os
import random
import struct
import time
import zlib
from typing import Any

HEADER = struct.Struct("<QII")
POOL_SIZE = 8 * 1024 * 1024
_POOL = random.Random(20261122).randbytes(POOL_SIZE)
POOL = memoryview(_POOL)
# Largest "small" message; tests over slower links (namespaces with loss) set it lower.
MAX_SMALL = int(os.environ.get("AA_STREAM_MAX_SMALL", 64 * 1024))
# Sizes of the small messages: "wide" (0..MAX_SMALL, uniform) or "mtu": bodies of 0..MTU_BODY bytes
# (one frame each at the default MTU of 1408: 32 bytes of frame header + 16 of message header), and
# one in FRAGMENTED_EVERY of MTU_BODY+1..16 KiB (2..12 fragments). Many messages, few gigabytes.
PROFILE = os.environ.get("AA_STREAM_PROFILE", "wide")
MTU_BODY = 1408 - 32 - HEADER.size
FRAGMENTED_EVERY = 20
FRAGMENTED_MAX = 16 * 1024
# "small": a million messages that a loaded machine moves in seconds: bodies of 0..SMALL_BODY_MAX
# bytes, and one in SMALL_FRAGMENTED_EVERY of MTU_BODY+1..MTU_BODY+SMALL_FRAGMENTED_EXTRA (2 or 3
# fragments at the default MTU).
SMALL_BODY_MAX = 64
SMALL_FRAGMENTED_EVERY = 100
SMALL_FRAGMENTED_EXTRA = 2000


def _mix(seq: int) -> int:
    """A cheap, well-spread 64-bit hash of seq (splitmix64 finaliser)."""
    z = (seq * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def message_size(seq: int, small_count: int, profile: str | None = None) -> int:
    if seq < small_count and (profile or PROFILE) == "small":
        h = _mix(seq)
        if h % SMALL_FRAGMENTED_EVERY == 0:
            return MTU_BODY + 1 + (h >> 8) % SMALL_FRAGMENTED_EXTRA
        return (h >> 8) % (SMALL_BODY_MAX + 1)
    if seq < small_count and (profile or PROFILE) == "mtu":
        h = _mix(seq)
        if h % FRAGMENTED_EVERY == 0:
            return MTU_BODY + 1 + (h >> 8) % (FRAGMENTED_MAX - MTU_BODY)
        return (h >> 8) % (MTU_BODY + 1)
    rng = random.Random(seq * 7919 + 17)
    if seq < small_count:
        return rng.randint(0, MAX_SMALL)
    return rng.randint(1024 * 1024, 4 * 1024 * 1024)


def body(seq: int, size: int) -> memoryview:
    start = (seq * 104729) % (POOL_SIZE - size + 1) if size else 0
    return POOL[start:start + size]


def await_connected(pub: Any, seconds: float) -> bool:
    """Waits up to `seconds` for a publication to connect; when it does not, prints "never
    connected" (for the test reading this process's output) and returns False."""
    deadline = time.monotonic() + seconds
    while not pub.is_connected:
        if time.monotonic() > deadline:
            print("never connected", flush=True)
            return False
        time.sleep(0.001)
    return True


def build(seq: int, small_count: int) -> list[memoryview | bytes]:
    size = message_size(seq, small_count)
    b = body(seq, size)
    return [HEADER.pack(seq, size, zlib.crc32(b)), b]


def verify(data: memoryview | bytes, expected_seq: int, small_count: int) -> None:
    seq, size, crc = HEADER.unpack_from(data, 0)
    if seq != expected_seq:
        raise AssertionError(f"expected message {expected_seq}, got {seq}")
    if size != message_size(seq, small_count) or len(data) != HEADER.size + size:
        raise AssertionError(f"message {seq}: length {len(data) - HEADER.size}, expected {message_size(seq, small_count)}")
    payload = memoryview(data)[HEADER.size:]
    if payload != body(seq, size):
        raise AssertionError(f"message {seq}: body corrupted")
    if seq % 1000 == 0 and zlib.crc32(payload) != crc:
        raise AssertionError(f"message {seq}: crc mismatch")
