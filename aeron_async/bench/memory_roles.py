"""Memory and idle benchmarks.

- `aeron-memory-receiver`: receives N messages through the batch receive path (sync
  `poll_messages(4096)` or `async for batch in sub.batches(4096)` on asyncio, uvloop or trio) with
  tracemalloc on from the start of the warm-up, and samples RSS (anonymous and total),
  tracemalloc's traced Python memory and glibc's heap in use (mallinfo2) after the warm-up and every
  N/10 messages, between batches. A flat path ends where it started.
- `native-alloc`: the native message path alone (`aa_publication_offer` and
  `aa_subscription_poll_messages` into preallocated buffers, called through cffi, no Python
  objects per message) for N messages. It compares glibc's heap in use (mallinfo2) before and
  after, and, when the harness attaches gdb, marks the window with two `getppid()` calls so that
  gdb's breakpoint hit counts on malloc/calloc/realloc/free give the number of calls made in it.
- `idle`: an async subscriber waiting in `async for` with an embedded driver (SHARED threading)
  in the same process; the process's CPU time over a quiet interval, after a settling time.
"""

from __future__ import annotations

import ctypes
import gc
import os
import resource
import time
import tracemalloc
from typing import Any

from ..errors import BenchError, BenchTimeoutError, last_error
from .worker import emit, role, run_backend, subscribed, wait_until

BATCH = 4096
FIRST_MESSAGE_TIMEOUT = 30.0


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


_mallinfo2: Any = None


def heap_in_use() -> int | None:
    """Bytes glibc malloc has handed out and not taken back (all arenas plus mmapped chunks), from
    mallinfo2(3); None where there is no mallinfo2 (not glibc, or glibc < 2.33)."""
    global _mallinfo2
    if _mallinfo2 is None:
        try:
            fn = ctypes.CDLL(None).mallinfo2
        except (AttributeError, OSError):
            _mallinfo2 = False
            return None
        fn.restype = _Mallinfo2
        fn.argtypes = []
        _mallinfo2 = fn
    if _mallinfo2 is False:
        return None
    info = _mallinfo2()
    return int(info.uordblks + info.hblkhd)


def rss() -> dict[str, int]:
    """RSS of this process in bytes: total, anonymous (heap and stacks), shared memory (log buffers)."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssShmem", "RssFile"):
                out[key] = int(value.split()[0]) * 1024
    return {"rss": out.get("VmRSS", 0), "rss_anon": out.get("RssAnon", 0), "rss_shmem": out.get("RssShmem", 0)}


class _Sampler:
    def __init__(self, messages: int, samples: int) -> None:
        self.samples: list[dict[str, Any]] = []
        self.step = max(1, messages // samples)
        self.base = 0
        self.next = 0
        self.started = 0.0

    def trace(self) -> None:
        """Start tracing before the warm-up, so that tracemalloc's own tables (which count in RSS and
        the heap, not in the traced figure) reach their steady size before the baseline."""
        tracemalloc.start()

    def start(self, count: int) -> None:
        gc.collect()
        self.base = count
        self.next = count + self.step
        self.started = time.perf_counter()
        self.sample(count)

    def sample(self, count: int) -> None:
        seconds = time.perf_counter() - self.started
        current, peak = tracemalloc.get_traced_memory()
        # The traced figure leaves out what this module (these samples) and tracemalloc's Python
        # side (its snapshots) allocated: the rest is the receive path and the client.
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, __file__), tracemalloc.Filter(False, tracemalloc.__file__)])
        traced = sum(stat.size for stat in snapshot.statistics("filename"))
        del snapshot
        self.samples.append({"messages": count - self.base, "seconds": seconds, "traced": traced,
                             "traced_all": current, "traced_peak": peak,
                             "tracemalloc_overhead": tracemalloc.get_tracemalloc_memory(),
                             "heap_in_use": heap_in_use(), **rss()})

    def maybe(self, count: int) -> None:
        if count >= self.next:
            self.sample(count)
            self.next += self.step

    def result(self, path: str) -> dict[str, Any]:
        tracemalloc.stop()
        first, last = self.samples[0], self.samples[-1]
        step = self.samples[1] if len(self.samples) > 2 else first
        growth = {key: last[key] - first[key] for key in ("traced", "rss", "rss_anon", "rss_shmem")}
        growth["heap_in_use"] = (last["heap_in_use"] - first["heap_in_use"]) if first["heap_in_use"] is not None else None
        after_first_step = {key: last[key] - step[key] for key in ("traced", "rss_anon")}
        seconds = last["seconds"]
        return {
            "path": path,
            "messages": last["messages"],
            "seconds": seconds,
            "msgs_per_s_traced": last["messages"] / seconds if seconds > 0 else 0.0,
            "growth": growth,
            "growth_after_first_tenth": after_first_step,
            "samples": self.samples,
        }


@role("aeron-memory-receiver")
def memory_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    if spec["path"] == "sync":
        return _memory_sync(spec)
    return run_backend(spec["path"], _memory_async, spec)


def _memory_sync(spec: dict[str, Any]) -> dict[str, Any]:
    sampler = _Sampler(spec["messages"], spec["samples"])
    with subscribed(spec) as sub:
        poll = sub.poll_messages
        deadline = time.monotonic() + FIRST_MESSAGE_TIMEOUT
        n = 0
        sampler.trace()
        while n < spec["warmup_messages"]:
            got = len(poll(BATCH))
            if not got and not n and time.monotonic() > deadline:
                raise BenchTimeoutError(f"no message within {FIRST_MESSAGE_TIMEOUT:.0f} s")
            n += got
        sampler.start(n)
        target = n + spec["messages"]
        while n < target:
            n += len(poll(BATCH))
            sampler.maybe(n)
        return sampler.result("sync poll_messages(4096)")


async def _memory_async(spec: dict[str, Any]) -> dict[str, Any]:
    import anyio

    import aeron_async

    sampler = _Sampler(spec["messages"], spec["samples"])
    async with aeron_async.connect(spec["aeron_dir"]) as client:
        sub = await client.add_subscription(spec["channel"], spec["stream"])
        emit("READY")
        n = 0
        sampler.trace()
        with anyio.fail_after(FIRST_MESSAGE_TIMEOUT):
            n += len(await sub.receive_batch(BATCH))
        batches = sub.batches(BATCH)
        async for batch in batches:
            n += len(batch)
            if n >= spec["warmup_messages"]:
                break
        del batch  # samples are taken between batches, with none alive (as in the sync loop)
        sampler.start(n)
        target = n + spec["messages"]
        async for batch in batches:
            n += len(batch)
            del batch
            sampler.maybe(n)
            if n >= target:
                break
        return sampler.result(f"{spec['path']} async for batch in sub.batches(4096)")


def _traced() -> bool:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return int(line.split()[1]) != 0
    return False


@role("native-alloc")
def native_alloc(spec: dict[str, Any]) -> dict[str, Any]:
    from aeron_async import Aeron
    from aeron_async._ffi import ffi, lib

    size = spec["size"]
    with Aeron.connect(spec["aeron_dir"]) as client:
        sub = client.add_subscription(spec["channel"], spec["stream"])
        pub = client.add_publication(spec["channel"], spec["stream"])
        wait_until(lambda: pub.is_connected and sub.is_connected, 30, "the publication to connect")
        pptr, sptr = pub._checked(), sub._checked()
        payload = ffi.new("uint8_t[]", size)
        capacity = 1 << 20
        out = ffi.new("uint8_t[]", capacity)
        messages = ffi.new("aa_message_t[]", 256)
        required = ffi.new("size_t *")
        offer = lib.aa_publication_offer
        poll = lib.aa_subscription_poll_messages

        def run(count: int) -> int:
            received = 0
            while received < count:
                for _ in range(256):
                    if offer(pptr, payload, size, 0) < 0:
                        break
                got = poll(sptr, out, capacity, messages, 256, 1 << 30, required)
                if got < 0:
                    raise last_error(BenchError, "aa_subscription_poll_messages failed: ")
                received += got
            return received

        run(spec["warmup_messages"])
        gc.collect()
        if spec.get("gdb"):
            emit("ATTACH", {"pid": os.getpid()})
            wait_until(_traced, 60, "gdb to attach")
        heap0, rss0 = heap_in_use(), rss()
        os.getppid()  # window start marker for gdb
        t0 = time.perf_counter()
        received = run(spec["messages"])
        t1 = time.perf_counter()
        os.getppid()  # window end marker
        heap1, rss1 = heap_in_use(), rss()
        return {
            "messages": received,
            "seconds": t1 - t0,
            "msgs_per_s": received / (t1 - t0),
            "heap_in_use_before": heap0,
            "heap_in_use_after": heap1,
            "heap_growth": None if heap0 is None or heap1 is None else heap1 - heap0,
            "rss_anon_growth": rss1["rss_anon"] - rss0["rss_anon"],
        }


@role("idle")
def idle(spec: dict[str, Any]) -> dict[str, Any]:
    return run_backend(spec["backend"], _idle, spec)


async def _idle(spec: dict[str, Any]) -> dict[str, Any]:
    import anyio

    import aeron_async

    async def consume(sub: Any) -> None:
        async for _ in sub:
            raise BenchError("the idle benchmark's subscription received a message")

    async with aeron_async.connect(spec["aeron_dir"], embedded_driver=True, dir_delete_on_shutdown=True,
                                   threading_mode="SHARED") as client:
        sub = await client.add_subscription("aeron:ipc", 1001)
        async with anyio.create_task_group() as tg:
            tg.start_soon(consume, sub)
            await anyio.sleep(spec["settle"])
            r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
            await anyio.sleep(spec["duration"])
            r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
            tg.cancel_scope.cancel()
    seconds = t1 - t0
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    switches = (r1.ru_nvcsw + r1.ru_nivcsw) - (r0.ru_nvcsw + r0.ru_nivcsw)
    return {
        "backend": spec["backend"],
        "seconds": seconds,
        "settle_seconds": spec["settle"],
        "cpu_seconds": cpu,
        "cpu_percent": 100.0 * cpu / seconds,
        "context_switches_per_s": switches / seconds,
    }
