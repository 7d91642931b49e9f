"""Failure handling inside one process: a writer that never commits its claim is unblocked by
the driver, and the subscriber moves on without losing committed messages."""

from __future__ import annotations

import time

import aeron_async
from conftest import offer_all, system_counter, wait_for


def test_abandoned_claim_is_unblocked(client: aeron_async.Aeron, driver: aeron_async.MediaDriver) -> None:
    sub = client.add_subscription("aeron:ipc", 30)
    pub = client.add_publication("aeron:ipc", 30)
    other = client.add_publication("aeron:ipc", 30)  # same concurrent publication, another writer
    wait_for(lambda: pub.is_connected)
    offer_all(pub, b"one")
    claim = pub.try_claim(100)
    assert not isinstance(claim, int)
    # the writer "dies" here: its claim is never committed; another writer keeps publishing
    offer_all(other, b"two")
    offer_all(other, b"three")
    got: list[bytes] = []
    started = time.monotonic()
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or len(got) >= 3, timeout=10,
             what="messages after the abandoned claim")
    waited = time.monotonic() - started
    assert got == [b"one", b"two", b"three"]
    assert waited >= 0.5, "the subscriber skipped an in-progress claim before the unblock timeout"
    assert system_counter(driver.aeron_dir, "Unblocked Publications") == 1
