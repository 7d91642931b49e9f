"""An archive with a media driver of its own, in a process of its own (a network namespace's host in
tests/archive/test_archive_replication.py), until stdin closes or it is killed:

  archive_host.py <aeron_dir> <archive_dir> <address> [<replication channel>]

Its control channel is aeron:udp?endpoint=<address>:8010 (stream 10); clients of the test's process
reach it through the driver's directory (IPC control, shared memory). Prints "ready" once it runs.
Short liveness timeouts, so that a peer that is killed is noticed within a second or two.
"""

from __future__ import annotations

import sys

import aeron_async
from aeron_async.archive import service

CONTROL_PORT = 8010
DRIVER_SETTINGS = {
    "threading_mode": "SHARED", "shared_idle_strategy": "backoff", "term_buffer_length": "1m",
    "ipc_term_buffer_length": "1m", "client_liveness_timeout": 2.0, "timer_interval": 0.05,
    "publication_linger_timeout": 0.5, "publication_unblock_timeout": 1.0, "counters_free_to_reuse_timeout": 0.1,
    "image_liveness_timeout": 1.0, "publication_connection_timeout": 1.0, "driver_timeout": 2.0,
    "spies_simulate_connection": True, "dir_delete_on_shutdown": True,
}


def main() -> int:
    aeron_dir, archive_dir, address = sys.argv[1:4]
    replication_channel = sys.argv[4] if len(sys.argv) > 4 else None
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **DRIVER_SETTINGS) as driver, \
            service.Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir, threading_mode="SHARED",
                                   idle_strategy="backoff", control_channel=f"aeron:udp?endpoint={address}:{CONTROL_PORT}",
                                   replication_channel=replication_channel, connect_timeout=2.0):
        print("ready", flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
