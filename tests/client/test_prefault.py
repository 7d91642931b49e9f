"""Log buffers are pre-faulted in the background: every mapping of a log (the driver's, the publisher's,
the subscriber's) is populated by its conductor soon after it is made, so that offers and polls never
take a page fault on first touch; a sparse=true log too, as it is allocated whole when it is created
(docs/security.md, Disks: a full disk fails its creation, never a write with a SIGBUS)."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator

import pytest

import aeron_async
from conftest import free_udp_port, log_mappings, logs_resident, logs_settled, wait_for


def minor_faults() -> int:
    """This thread's minor page faults: the message path's (offer and poll run here). The conductors'
    populating is counted to their own threads (MADV_POPULATE_WRITE faults pages in as the caller)."""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


@pytest.fixture(params=["ipc", "udp"])
def channel(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "ipc":
        yield "aeron:ipc?term-length=1m"
    else:
        yield f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|term-length=1m"


def stream_through_whole_log(pub: aeron_async.Publication, sub: aeron_async.Subscription, count: int) -> None:
    payload = bytes(200)
    received = 0
    for _ in range(count):
        while pub.offer(payload) < 0:
            received += len(sub.poll_messages(256))
        received += len(sub.poll_messages(256))

    def drained() -> bool:
        nonlocal received
        received += len(sub.poll_messages(256))
        return received >= count

    wait_for(drained, timeout=10, what=f"all {count} messages")
    assert received == count


@pytest.mark.parametrize("sparse", [False, True], ids=["allocated", "sparse"])
def test_logs_are_populated_ahead_of_the_stream(client: aeron_async.Aeron, channel: str, sparse: bool) -> None:
    if sparse:
        channel += "|sparse=true"
    sub = client.add_subscription(channel, 70)
    pub = client.add_publication(channel, 70)
    wait_for(lambda: pub.is_connected and sub.images, timeout=5, what="connected")
    # this process holds the driver's, the publisher's and the subscriber's mappings of the log(s)
    mappings = wait_for(lambda: len(found := log_mappings()) >= 3 and found, timeout=5, what="log mappings")
    # sparse=true or not, every log file (the publication's, and a UDP image's) has all its blocks
    for path in {m[0] for m in mappings}:
        st = os.stat(path)
        assert st.st_blocks * 512 >= st.st_size, f"{path} is sparse: {st.st_blocks * 512} of {st.st_size} bytes"
    assert bool([m for m in mappings if "/images/" in m[0]]) == ("udp" in channel), mappings
    wait_for(logs_resident, timeout=10, what=f"every log mapping resident: {log_mappings()}")

    # 20,000 messages of 200 B (232 B frames, 4.4 MiB) go round the 3 MiB log once and more
    before = minor_faults()
    stream_through_whole_log(pub, sub, 20_000)
    faults = minor_faults() - before
    pages = 3 * 1024 * 1024 // 4096
    print(f"{'sparse' if sparse else 'allocated'} {channel}: {faults} minor page faults streaming 4.4 MiB "
          f"through a {pages}-page log")
    if os.environ.get("AERON_ASYNC_UNDER_SANITIZERS") != "1":  # ASan's shadow memory and quarantine fault too
        assert faults < pages // 4


def test_long_terms_are_populated_a_lead_ahead_of_the_stream(client: aeron_async.Aeron) -> None:
    """With 16 MiB terms (a 48 MiB log) only a lead of 4 MiB (a quarter of a term, at least 4 MiB) is
    populated up front; as the stream moves on, the conductors top the lead up whenever half of it is
    used, so a quiet stream costs little and a moving one takes few faults."""
    channel = "aeron:ipc?term-length=16m"
    sub = client.add_subscription(channel, 71)
    pub = client.add_publication(channel, 71)
    wait_for(lambda: pub.is_connected and sub.images, timeout=5, what="connected")
    wait_for(logs_settled, timeout=10, what="pre-faulting to settle")
    lead_kb = 4 * 1024
    mappings = log_mappings()
    assert len(mappings) == 3, mappings  # the driver's, the publisher's, the subscriber's
    for _, size, rss in mappings:
        assert size > 48 * 1024 and lead_kb <= rss <= lead_kb + 512, mappings

    # 1 MiB steps paced like a real stream (each well inside the lead), 12 MiB in all
    payload = bytes(200)
    frames_per_step = (1024 * 1024) // 256  # 200 B messages take 256-byte frames (32-byte header, aligned)
    before = minor_faults()
    received = 0
    for _ in range(12):
        for _ in range(frames_per_step):
            while pub.offer(payload) < 0:
                received += len(sub.poll_messages(256))
            received += len(sub.poll_messages(256))
        time.sleep(0.02)
    deadline = time.monotonic() + 10
    while received < 12 * frames_per_step:
        assert time.monotonic() < deadline, f"received {received}"
        received += len(sub.poll_messages(256))
    faults = minor_faults() - before
    streamed_kb = pub.position // 1024
    print(f"16 MiB terms: {faults} minor page faults streaming {streamed_kb} KiB; resident "
          f"{[rss for _, _, rss in log_mappings()]} KiB")
    wait_for(logs_settled, timeout=10, what="pre-faulting to settle")
    for _, _, rss in log_mappings():  # the lead moved on with the stream (topped up once half of it is used)
        assert rss >= streamed_kb + lead_kb // 2, log_mappings()
    if os.environ.get("AERON_ASYNC_UNDER_SANITIZERS") != "1":
        assert faults < (streamed_kb // 4) // 4  # a quarter of the pages one mapping would fault lazily
