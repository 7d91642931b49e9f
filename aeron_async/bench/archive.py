"""Archive benchmarks (`aeron-async bench-archive`, docs/benchmarks.md "Archive"):

- recording throughput of an IPC stream (32 B and 4 KiB messages) against the disk's sequential
  write rate, measured in the same run with the same file size, block size (file_io_max_length)
  and sync level in the same directory;
- replay throughput to a local subscriber from the page cache and from a cold file (its pages
  dropped with posix_fadvise(DONTNEED)), against plain sequential reads of the same segment files,
  warm and cold;
- the latency recording adds to a live IPC round trip (ping recorded against not recorded);
- replication of a recording between two archives against the source's record rate
  (`archive_replication.py`, `--replication-megabytes`).
- the persistent subscription: start to live, throughput while replaying against a plain replay,
  and its whole scenario at scale (persistent.py).

One embedded driver and archive in this process (SHARED threading for the driver, the archive's
own agents DEDICATED unless told), in a temporary directory on the disk under test (`--dir`).
"""

from __future__ import annotations

import argparse
import importlib
import json
import mmap
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from ..archive import AeronArchive, RecordingSignal
from ..client import Aeron
from ..driver import MediaDriver
from ..errors import BenchError, BenchTimeoutError
from ..idle import IdleStrategy
from . import archive_replication
from . import persistent

FILE_IO = 1 << 20
TERM = 16 << 20
SEGMENT = 128 << 20


def _frame(size: int) -> int:
    return (32 + size + 31) & ~31


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    idle = IdleStrategy("sleeping:200us")
    while not predicate():
        if time.monotonic() > deadline:
            raise BenchTimeoutError(f"{what}: not done within {timeout} s")
        idle.idle(0)


def disk_write_rate(directory: str, total: int, sync_level: int) -> tuple[float, float]:
    """Bytes/s of writing `total` bytes sequentially in FILE_IO blocks into files of SEGMENT bytes
    created sparse at full length, as the archive writes segments (fdatasync per block at sync
    level 1, fsync at 2), from a thread of its own as the recorder writes from its own: Linux
    throttles a writer of dirty pages by what that thread has dirtied before. Returns the rate and
    the CPU seconds the thread used."""
    result: list[tuple[float, float]] = []

    def write() -> None:
        start = time.thread_time()
        rate = _disk_write_rate(directory, total, sync_level)
        result.append((rate, time.thread_time() - start))

    writer = threading.Thread(target=write, name="disk-write")
    writer.start()
    writer.join()
    if not result:
        raise BenchError("the disk write baseline failed (see the thread's traceback above)")
    return result[0]


def _disk_write_rate(directory: str, total: int, sync_level: int) -> float:
    block = memoryview(os.urandom(FILE_IO))  # sliced without a copy: the recorder copies nothing either
    start = time.perf_counter()
    written = 0
    index = 0
    while written < total:
        path = os.path.join(directory, f"disk-{index}.bin")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.ftruncate(fd, SEGMENT)
            offset = 0
            while offset < SEGMENT and written < total:
                n = min(FILE_IO, total - written)
                os.pwrite(fd, block[:n], offset)
                if sync_level == 1:
                    os.fdatasync(fd)
                elif sync_level >= 2:
                    os.fsync(fd)
                offset += n
                written += n
        finally:
            os.close(fd)
        index += 1
    elapsed = time.perf_counter() - start
    for name in os.listdir(directory):
        if name.startswith("disk-"):
            os.unlink(os.path.join(directory, name))
    return total / elapsed


def ring_read_rates(paths: list[str], limit: int, directory: str) -> tuple[float, float]:
    """The two costs of a replay's one copy without its pipeline, on one thread: (bytes/s of the
    first touch of a new shared-memory file the size of a replay's log, 3 terms in `directory`
    (the driver's), as every replay's new log is touched; bytes/s of sequential 1 MiB preadvs of
    the segment files into that file's pages, now in place, one after the other around the ring,
    as the replayer reads into the log's terms)."""
    length = 3 * TERM
    path = os.path.join(directory, "ring-read.bin")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.ftruncate(fd, length)
        os.posix_fallocate(fd, 0, length)  # as the driver allocates a log's blocks
        ring = mmap.mmap(fd, length)
    finally:
        os.close(fd)
        os.unlink(path)
    try:
        page = mmap.PAGESIZE
        start = time.perf_counter()
        for offset in range(0, length, page):
            ring[offset] = 0
        touch_rate = length / (time.perf_counter() - start)
        view = memoryview(ring)
        try:
            read_rate = _sequential_read_rate(paths, limit, view)
        finally:
            view.release()
    finally:
        ring.close()
    return touch_rate, read_rate


def thread_cpu() -> dict[str, float]:
    """CPU seconds (user + system) each thread of this process has used, summed by thread name
    (the driver's, the archive's and the client's agents name their threads): where a figure's
    time goes, whatever else the machine runs."""
    used: dict[str, float] = {}
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/self/task/{task}/schedstat") as f:  # nanoseconds on a CPU, first
                seconds = int(f.read().split()[0]) / 1e9
        except (OSError, IndexError, ValueError):
            continue  # the thread ended
        used[name] = used.get(name, 0.0) + seconds
    return used


def _cpu_since(before: dict[str, float]) -> dict[str, float]:
    after = thread_cpu()
    return {name: after[name] - before.get(name, 0.0) for name in after if after[name] > before.get(name, 0.0)}


def _median_cpu(samples: list[dict[str, float]]) -> dict[str, float]:
    names = sorted({name for sample in samples for name in sample})
    return {name: statistics.median(sample.get(name, 0.0) for sample in samples) for name in names}


def drop_cache(paths: list[str]) -> None:
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _sequential_read_rate(paths: list[str], limit: int, destination: memoryview) -> float:
    """Bytes/s of reading the first `limit` bytes of the files with sequential preadvs of at most
    FILE_IO bytes, one after the other around `destination`."""
    start = time.perf_counter()
    done = 0
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            offset = 0
            while done < limit:
                at = done % len(destination)
                n = os.preadv(fd, [destination[at:at + min(FILE_IO, limit - done, len(destination) - at)]], offset)
                if n <= 0:
                    break
                offset += n
                done += n
        finally:
            os.close(fd)
    return done / (time.perf_counter() - start)


def plain_read_rate(paths: list[str], limit: int) -> float:
    """Bytes/s of reading the first `limit` bytes of the segment files with sequential preads into
    one buffer."""
    return _sequential_read_rate(paths, limit, memoryview(bytearray(FILE_IO)))


class Bench:
    def __init__(self, directory: str, sync_level: int, threading_mode: str) -> None:
        Archive = importlib.import_module("aeron_async.archive.service").Archive  # noqa: N806

        self.directory = directory
        self.sync_level = sync_level
        # the log buffers in shared memory, as the driver's default puts them: a log on the disk
        # under test would be written back to it and charge the archive for the driver's paging
        self.aeron_dir = tempfile.mkdtemp(prefix="aeron-archive-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        self.driver = MediaDriver.launch(aeron_dir=os.path.join(self.aeron_dir, "aeron"), threading_mode="SHARED",
                                         shared_idle_strategy="backoff", dir_delete_on_shutdown=True,
                                         spies_simulate_connection=True)
        self.archive_dir = os.path.join(directory, "archive")
        self.service = Archive.launch(archive_dir=self.archive_dir, aeron_dir=self.driver.aeron_dir,
                                      threading_mode=threading_mode, file_sync_level=sync_level,
                                      catalog_file_sync_level=sync_level, file_io_max_length=FILE_IO,
                                      segment_file_length=SEGMENT)
        self.client = Aeron.connect(self.driver.aeron_dir)
        self.archive = AeronArchive.connect(self.client, timeout=30.0)
        self.stream_id = 7000

    def close(self) -> None:
        self.archive.close()
        self.client.close()
        self.service.close()
        self.driver.close()
        shutil.rmtree(self.aeron_dir, ignore_errors=True)

    def record(self, size: int, total_bytes: int) -> dict[str, Any]:
        """Record an IPC stream of `size`-byte messages, about `total_bytes` of log; the rate is log
        bytes over the time from the first offer to the recording position reaching the end."""
        self.stream_id += 1
        channel = f"aeron:ipc?term-length={TERM}"
        publication = self.client.add_exclusive_publication(channel, self.stream_id)
        subscription_id = self.archive.start_recording(channel, self.stream_id)
        recording_id = self.archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id).recording_id
        batch = [b"\x01" * size] * max(1, min(4096, (TERM // 4) // _frame(size)))
        count = total_bytes // _frame(size)
        idle = IdleStrategy("backoff")
        start = time.perf_counter()
        sent = 0
        while sent < count:
            n = publication.offer_batch(batch[:min(len(batch), count - sent)])
            if n > 0:
                sent += n
            idle.idle(max(n, 0))
        end = publication.position
        _wait(lambda: self.archive.max_recorded_position(recording_id) >= end, 120, "recording")
        elapsed = time.perf_counter() - start
        self.archive.stop_recording(subscription_id=subscription_id)
        self.archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id)
        publication.close()
        return {"recording_id": recording_id, "size": size, "messages": count, "bytes": end,
                "rate": end / elapsed, "msgs_per_s": count / elapsed}

    def segment_files(self, recording_id: int) -> list[str]:
        names = sorted((n for n in os.listdir(self.archive_dir) if n.startswith(f"{recording_id}-")
                        and n.endswith(".rec")), key=lambda n: int(n.split("-")[1].split(".")[0]))
        return [os.path.join(self.archive_dir, n) for n in names]

    def replay(self, recording_id: int, length: int) -> float:
        """Bytes/s of a replay to a local subscriber reading whole blocks of frames."""
        consumed = 0

        def on_block(buffer: memoryview, offset: int, block_length: int, session_id: int, term_id: int) -> None:
            nonlocal consumed
            consumed += block_length

        with self.archive.replay(recording_id, position=0, length=length, stream_id=self.stream_id + 5000) as replay:
            _wait(lambda: replay.image is not None, 30, "replay image")
            image = replay.image
            assert image is not None
            idle = IdleStrategy("backoff")
            start = time.perf_counter()
            while consumed < length:
                work = image.block_poll(on_block, FILE_IO)
                if not work and image.is_end_of_stream:
                    break
                idle.idle(work)
            elapsed = time.perf_counter() - start
        return consumed / elapsed

    def round_trips(self, recorded: bool, count: int) -> list[float]:
        """Round-trip times (s) of 32-byte ping/pong over IPC between this process and an echo
        process (both spinning), the ping stream recorded by the archive or not."""
        self.stream_id += 2
        channel = "aeron:ipc?term-length=1m"
        ping = self.client.add_exclusive_publication(channel, self.stream_id)
        pong_sub = self.client.add_subscription(channel, self.stream_id + 1)
        subscription_id = None
        if recorded:
            subscription_id = self.archive.start_recording(channel, self.stream_id)
            self.archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id)
        total = count + 1000
        echo = subprocess.Popen([sys.executable, "-c", _ECHO, self.driver.aeron_dir, channel, str(self.stream_id),
                                 str(total)])
        times = []
        payload = b"p" * 32
        try:
            _wait(lambda: ping.is_connected and pong_sub.is_connected, 30, "echo process connected")
            for i in range(total):
                start = time.perf_counter()
                while ping.offer(payload) < 0:
                    pass
                while not pong_sub.poll_messages(1):
                    pass
                if i >= 1000:
                    times.append(time.perf_counter() - start)
        finally:
            if echo.wait(30) != 0:
                raise BenchError(f"echo process exited with {echo.returncode}")
        if subscription_id is not None:
            self.archive.stop_recording(subscription_id=subscription_id)
        ping.close()
        pong_sub.close()
        return times


# The echo side of the round trip, in a process of its own (two spinning threads of one process
# would take turns on the GIL): sys.argv = aeron dir, channel, ping stream, count.
_ECHO = """
import sys, aeron_async
aeron_dir, channel, stream, total = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with aeron_async.Aeron.connect(aeron_dir) as client:
    ping = client.add_subscription(channel, stream)
    pong = client.add_exclusive_publication(channel, stream + 1)
    echoed = 0
    while echoed < total:
        for message in ping.poll_messages(16):
            while pong.offer(message.data) < 0:
                pass
            echoed += 1
"""


def _settle() -> None:
    """Write back what earlier phases left dirty, so that no phase pays for another's pages."""
    os.sync()


def run(directory: str | None, sync_level: int, total_mb: int, threading_mode: str, round_trips: int,
        repeats: int = 3, persistent_messages: int = 0, persistent_behind: int = 0) -> dict[str, Any]:
    """Each figure and its baseline are taken in turns, `repeats` times each (a recording, then the
    disk write of the same bytes; a plain read, then a replay), each after a write-back of dirty
    pages: on a shared machine the load moves between seconds, and pairs taken side by side see
    the same load. Reported: the medians and every pair's ratio."""
    base = tempfile.mkdtemp(prefix="aeron-archive-bench-", dir=directory)
    results: dict[str, Any] = {"dir": base, "sync_level": sync_level, "repeats": repeats, "recording": [],
                               "replay": [], "latency": {}}
    bench = Bench(base, sync_level, threading_mode)
    try:
        total = total_mb << 20
        last: dict[str, Any] = {}
        for size in (32, 4096):
            trials, disks, cpu, disk_cpu = [], [], [], []
            for _ in range(repeats):
                _settle()
                before = thread_cpu()
                last = bench.record(size, total)
                cpu.append(_cpu_since(before))
                trials.append(last)
                _settle()
                rate, seconds = disk_write_rate(base, last["bytes"], sync_level)
                disks.append(rate)
                disk_cpu.append({"disk-write": seconds})
            rec = dict(last)
            rec["rate"] = statistics.median(t["rate"] for t in trials)
            rec["msgs_per_s"] = statistics.median(t["msgs_per_s"] for t in trials)
            rec["disk_write_rate"] = statistics.median(disks)
            rec["ratios"] = [t["rate"] / d for t, d in zip(trials, disks)]
            rec["cpu"], rec["disk_write_cpu"] = _median_cpu(cpu), _median_cpu(disk_cpu)
            results["recording"].append(rec)
        files = bench.segment_files(last["recording_id"])
        length = last["bytes"]
        for cache in ("page cache", "cold"):
            plain, replay, cpu, plain_cpu = [], [], [], []
            for _ in range(repeats):
                if cache == "cold":
                    drop_cache(files)
                before = thread_cpu()
                plain.append(plain_read_rate(files, length))
                plain_cpu.append(_cpu_since(before))
                if cache == "cold":
                    drop_cache(files)
                before = thread_cpu()
                replay.append(bench.replay(last["recording_id"], length))
                cpu.append(_cpu_since(before))
            entry: dict[str, Any] = {}
            if cache == "page cache":
                touches, rings = zip(*(ring_read_rates(files, length, bench.aeron_dir) for _ in range(repeats)))
                entry = {"new_log_touch_rate": statistics.median(touches), "ring_read_rate": statistics.median(rings)}
            results["replay"].append({**entry, "cache": cache, "rate": statistics.median(replay),
                                      "plain_read_rate": statistics.median(plain),
                                      "ratios": [r / p for r, p in zip(replay, plain)],
                                      "rates": replay, "plain_read_rates": plain,
                                      "cpu": _median_cpu(cpu), "plain_read_cpu": _median_cpu(plain_cpu)})
        if persistent_messages > 0:
            results["persistent"] = persistent.run(bench, persistent_messages, persistent_behind, repeats)
        off = bench.round_trips(False, round_trips)
        on = bench.round_trips(True, round_trips)
        for name, times in (("off", off), ("on", on)):
            times.sort()
            results["latency"][name] = {"median_us": statistics.median(times) * 1e6,
                                        "p99_us": times[int(len(times) * 0.99)] * 1e6}
    finally:
        bench.close()
        shutil.rmtree(base, ignore_errors=True)
    return results


def _ratios(r: dict[str, Any], rate: float, baseline: float) -> str:
    ratios = r.get("ratios") or [rate / baseline]
    return f"{rate / baseline:.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def markdown(results: dict[str, Any]) -> str:
    mb = 1 << 20
    lines = [f"sync level {results['sync_level']}, medians of {results.get('repeats', 1)} interleaved runs; ratio: "
             "of the medians (range over the pairs)", "",
             "| recording | msgs/s | MiB/s | disk write MiB/s | ratio (target >= 0.8) |", "|---|---|---|---|---|"]
    for r in results["recording"]:
        lines.append(f"| IPC {r['size']} B | {r['msgs_per_s'] / 1e6:.2f} M | {r['rate'] / mb:.0f} | "
                     f"{r['disk_write_rate'] / mb:.0f} | {_ratios(r, r['rate'], r['disk_write_rate'])} |")
    lines += ["", "| replay | MiB/s | plain sequential read MiB/s | ratio (target >= 0.8) |", "|---|---|---|---|"]
    for r in results["replay"]:
        lines.append(f"| {r['cache']} | {r['rate'] / mb:.0f} | {r['plain_read_rate'] / mb:.0f} | "
                     f"{_ratios(r, r['rate'], r['plain_read_rate'])} |")
    for r in results["replay"]:
        if "ring_read_rate" in r:
            lines += ["", f"The replay's one copy alone, one thread, no pipeline: preadv into the pages of a "
                          f"shared-memory file the size of its log, {r['ring_read_rate'] / mb:.0f} MiB/s "
                          f"({r['ring_read_rate'] / r['plain_read_rate']:.2f}x the plain read); the first touch "
                          f"of a new such file (every replay's log is new) {r['new_log_touch_rate'] / mb:.0f} MiB/s."]
    rows = []
    for r in results["recording"]:
        rows += [(f"recording IPC {r['size']} B", r["cpu"]), ("  disk write, same bytes", r["disk_write_cpu"])]
    for r in results["replay"]:
        rows += [(f"replay, {r['cache']}", r["cpu"]), ("  plain read, same bytes", r["plain_read_cpu"])]
    threads = sorted({name for _, cpu in rows for name, seconds in cpu.items() if seconds >= 0.005})
    lines += ["", "CPU seconds by thread (medians over the repeats; the phase's wall time is bytes / rate; the "
              "main thread publishes, subscribes and reads the plain baseline)", "",
              "| phase | " + " | ".join(threads) + " | all |", "|---" * (len(threads) + 2) + "|"]
    for label, cpu in rows:
        lines.append(f"| {label} | " + " | ".join(f"{cpu.get(t, 0.0):.2f}" for t in threads)
                     + f" | {sum(cpu.values()):.2f} |")
    off, on = results["latency"]["off"], results["latency"]["on"]
    lines += ["", "| IPC round trip, 32 B, echo process | median us | p99 us |", "|---|---|---|",
              f"| not recorded | {off['median_us']:.1f} | {off['p99_us']:.1f} |",
              f"| ping stream recorded | {on['median_us']:.1f} | {on['p99_us']:.1f} |"]
    if "persistent" in results:
        lines += ["", persistent.markdown(results["persistent"])]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", help="directory on the disk under test (default: the temp directory)")
    parser.add_argument("--sync-level", type=int, default=0, choices=(0, 1, 2))
    parser.add_argument("--megabytes", type=int, default=512, help="log bytes recorded per message size")
    parser.add_argument("--threading-mode", default="DEDICATED", help="the archive's threading mode")
    parser.add_argument("--round-trips", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each figure and its baseline, taken in turns (medians reported)")
    parser.add_argument("--replication-megabytes", type=int, default=512,
                        help="log bytes of the recording replicated between two archives (0: no replication row)")
    parser.add_argument("--replication-mtu", type=int, default=1408,
                        help="MTU of the recording replicated (its replay's datagram size; 1408: Aeron's default)")
    parser.add_argument("--persistent-messages", type=int, default=1_000_000,
                        help="messages of the persistent subscription's scenario (0: leave it out)")
    parser.add_argument("--persistent-behind", type=int, default=100_000,
                        help="messages recorded ahead of the persistent subscription when it starts")
    parser.add_argument("--json", help="write the results to this file too")


def command(args: argparse.Namespace) -> int:
    if args.repeats < 1:
        raise SystemExit(f"--repeats {args.repeats}: give at least 1")
    results = run(args.dir, args.sync_level, args.megabytes, args.threading_mode, args.round_trips, args.repeats,
                  args.persistent_messages, args.persistent_behind)
    text = markdown(results)
    if args.replication_megabytes > 0:
        results["replication"] = archive_replication.run(args.dir, args.replication_megabytes, args.threading_mode,
                                                         args.sync_level, args.replication_mtu)
        text += "\n\n" + archive_replication.markdown(results["replication"])
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0
