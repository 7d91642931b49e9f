"""A client (tests/driver/test_cnc_input.py) that holds a publication (its log is what a forged image
names) and a subscription, prints `ready <subscription registration id>`, waits on stdin while the test
corrupts its driver's to-clients buffer or counters, then asks the driver for another subscription and
reads every counter, and prints the error it gets, as `<class>: <message>`, or `no error`."""

from __future__ import annotations

import sys

import aeron_async

aeron_dir = sys.argv[1]
with aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client:
    publication = client.add_publication("aeron:ipc?term-length=64k", 1)
    subscription = client.add_subscription("aeron:ipc", 2)
    print(f"ready {subscription.registration_id}", flush=True)
    sys.stdin.readline()
    try:
        client.add_subscription("aeron:ipc", 3)
        subscription.poll_messages()
        with aeron_async.CountersReader(aeron_dir) as reader:
            assert all(isinstance(counter.label, str) for counter in reader.counters())
        print("no error", flush=True)
    except aeron_async.AeronError as error:
        print(f"{type(error).__name__}: {error}", flush=True)
