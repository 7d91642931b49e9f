"""Replication between two archives on this machine (`aeron-async bench-archive`, docs/benchmarks.md
"Archive replication"): a source archive records an IPC stream of 4 KiB messages (its record rate:
log bytes over the time from the first offer to the recording position reaching the end), then a
destination archive, with a media driver of its own, replicates that recording over UDP on the
loopback (the rate: its bytes over the time from the replicate request to REPLICATE_END, the
recording stopped at the source's stop position). Same run, same disk, same segment and block sizes.
"""

from __future__ import annotations

import importlib
import os
import shutil
import socket
import tempfile
import time
from typing import Any

from ..archive import AeronArchive, RecordingSignal
from ..client import Aeron
from ..driver import MediaDriver
from ..errors import BenchError
from ..idle import IdleStrategy

FILE_IO = 1 << 20
TERM = 16 << 20
SEGMENT = 128 << 20
SIZE = 4096
CONTROL_STREAM_ID = 10


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _frame(size: int) -> int:
    return (size + 32 + 31) & ~31


def run(directory: str | None, total_mb: int, threading_mode: str, sync_level: int = 0, mtu: int = 1408,
        driver_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Record `total_mb` MiB on the source (an IPC stream of `mtu`: the recording's MTU is its
    replay's and so the replication's datagram size), replicate it to the destination; the two
    rates. `driver_options`: more settings of both media drivers."""
    Archive = importlib.import_module("aeron_async.archive.service").Archive  # noqa: N806
    base = tempfile.mkdtemp(prefix="aeron-replication-bench-", dir=directory)
    shm = tempfile.mkdtemp(prefix="aeron-replication-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    control = f"aeron:udp?endpoint=127.0.0.1:{_free_port()}"
    opened: list[Any] = []
    try:
        archives = []
        for name, extra in (("src", {"control_channel": control}),
                            ("dst", {"replication_channel": "aeron:udp?endpoint=127.0.0.1:0"})):
            driver = MediaDriver.launch(aeron_dir=os.path.join(shm, name), threading_mode="SHARED",
                                        shared_idle_strategy="backoff", dir_delete_on_shutdown=True,
                                        spies_simulate_connection=True, **(driver_options or {}))
            opened.append(driver)
            service = Archive.launch(archive_dir=os.path.join(base, name), aeron_dir=driver.aeron_dir,
                                     threading_mode=threading_mode, file_sync_level=sync_level,
                                     catalog_file_sync_level=sync_level, file_io_max_length=FILE_IO,
                                     segment_file_length=SEGMENT, **extra)
            opened.append(service)
            client = Aeron.connect(driver.aeron_dir)
            opened.append(client)
            archive = AeronArchive.connect(client, timeout=30.0)
            opened.append(archive)
            archives.append((client, archive))
        (src_client, src), (_, dst) = archives
        channel = f"aeron:ipc?term-length={TERM}|mtu={mtu}"
        publication = src_client.add_exclusive_publication(channel, 7100)
        subscription_id = src.start_recording(channel, 7100)
        recording_id = src.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id).recording_id
        batch = [b"\x01" * SIZE] * ((TERM // 4) // _frame(SIZE))
        count = (total_mb << 20) // _frame(SIZE)
        idle = IdleStrategy("backoff")
        start = time.perf_counter()
        sent = 0
        while sent < count:
            n = publication.offer_batch(batch[:min(len(batch), count - sent)])
            if n > 0:
                sent += n
            idle.idle(max(n, 0))
        end = publication.position
        deadline = time.monotonic() + 300
        while src.max_recorded_position(recording_id) < end:
            if time.monotonic() > deadline:
                raise BenchError(f"the source recording did not reach {end} in 300 s")
            time.sleep(0.001)
        record_rate = end / (time.perf_counter() - start)
        src.stop_recording(subscription_id=subscription_id)
        src.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id)
        publication.close()
        os.sync()  # what the recording left dirty is not the replication's to write back

        from .archive import _cpu_since, thread_cpu  # this module is a part of that one's run
        before = thread_cpu()
        start = time.perf_counter()
        replication_id = dst.replicate(recording_id, control, CONTROL_STREAM_ID)
        replicated = dst.wait_for_replication(replication_id, timeout=600)
        replication_rate = end / (time.perf_counter() - start)
        cpu = _cpu_since(before)
        stop = dst.list_recording(replicated.recording_id).stop_position
        if stop != end:
            raise BenchError(f"the replicated recording stopped at {stop}, not at the source's {end}")
        return {"bytes": end, "size": SIZE, "mtu": mtu, "record_rate": record_rate, "replication_rate": replication_rate,
                "ratio": replication_rate / record_rate, "cpu": cpu}
    finally:
        for thing in reversed(opened):
            thing.close()
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)


def markdown(result: dict[str, Any]) -> str:
    mb = 1 << 20
    return "\n".join([
        "| archive replication (UDP, loopback) | MiB | MiB/s | source record MiB/s | ratio (target >= 0.5) |",
        "|---|---|---|---|---|",
        f"| {result['size']} B messages, MTU {result['mtu']} | {result['bytes'] / mb:.0f} | {result['replication_rate'] / mb:.0f} | "
        f"{result['record_rate'] / mb:.0f} | {result['ratio']:.2f} |", "",
        "CPU seconds by thread during the replication (both drivers' and both archives' threads of this process): "
        + ", ".join(f"{name} {seconds:.2f}" for name, seconds in sorted(result["cpu"].items(), key=lambda i: -i[1])
                    if seconds >= 0.005)])
