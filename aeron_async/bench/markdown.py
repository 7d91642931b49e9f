"""The figures of a run (its JSON) as Markdown tables, for docs/benchmarks.md:
`aeron-async bench --from-json FILE --markdown`."""

from __future__ import annotations

from typing import Any


def _rate(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.2f} M"
    if value >= 1e3:
        return f"{value / 1e3:.0f} k"
    return f"{value:.0f}"


def _us(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _kib(value: int | None) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1024:+.1f} KiB"


def render(results: dict[str, Any]) -> str:
    out: list[str] = []
    m = results.get("machine", {})
    out.append(f"Machine: {m.get('nproc')} CPUs ({m.get('cpus_available')} available), {m.get('cpu_model')}, "
               f"Linux {m.get('kernel')}, {m.get('python')}; load average "
               f"{', '.join(f'{x:.2f}' for x in m.get('load_average_at_start', []))} at the start, "
               f"{', '.join(f'{x:.2f}' for x in m.get('load_average_at_end', []))} at the end.")
    versions = m.get("versions", {})
    if versions:
        out.append("Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".")
    d = results.get("driver")
    if d:
        out.append(f"Driver: {d['kind']}; threading mode {d['threading_mode']}, idle strategy {d['idle_strategy']}, "
                   f"IPC term length {d['ipc_term_buffer_length']}, UDP term length {d.get('term_buffer_length', '?')}.")
    cfg = results.get("config", {})
    out.append(f"Command: `{results.get('command', '')}` ({cfg.get('rounds')} rounds of {cfg.get('duration')} s after "
               f"{cfg.get('warmup')} s of warm-up; sizes {', '.join(map(str, cfg.get('sizes', [])))} B).")
    out.append("")
    rows = results.get("throughput") or []
    if rows:
        out.append("### Throughput (messages/s at the receiver: median of the rounds, min-max)")
        out.append("")
        out.append("| case | transport | size | msgs/s | min-max | MB/s | receiver CPU | vs peer |")
        out.append("|---|---|---:|---:|---:|---:|---:|---|")
        for r in rows:
            if "msgs_per_s" not in r:
                out.append(f"| {r['case']} | {r['transport']} | {r['size']} | error | | | | |")
                continue
            s = r["msgs_per_s"]
            ratio = f"{r['ratio_vs_peer']:.1f}x {r['peer']}" if "ratio_vs_peer" in r else ""
            out.append(f"| {r['case']} | {r['transport']} | {r['size']} | {_rate(s['median'])} | "
                       f"{_rate(s['min'])}-{_rate(s['max'])} | {r['mb_per_s']['median']:.1f} | "
                       f"{r['receiver_cpu_percent']:.0f}% | {ratio} |")
        out.append("")
    rows = results.get("latency") or []
    if rows:
        out.append("### Round trip (microseconds: median of the rounds; p50 and p99 with min-max)")
        out.append("")
        out.append("| case | transport | size | p50 | p90 | p99 | p99.9 | max | vs peer (p50) |")
        out.append("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for r in rows:
            if "p50_us" not in r:
                out.append(f"| {r['case']} | {r['transport']} | {r['size']} | error | | | | | |")
                continue

            def cell(name: str, spread: bool = False) -> str:
                v = r[name]
                return f"{_us(v['median'])} ({_us(v['min'])}-{_us(v['max'])})" if spread else _us(v["median"])

            ratio = f"{r['ratio_vs_peer']:.1f}x {r['peer']}" if "ratio_vs_peer" in r else ""
            out.append(f"| {r['case']} | {r['transport']} | {r['size']} | {cell('p50_us', True)} | {cell('p90_us')} | "
                       f"{cell('p99_us', True)} | {cell('p99_9_us')} | {cell('max_us')} | {ratio} |")
        out.append("")
    memory = results.get("memory") or []
    if memory:
        out.append("### Memory of the batch receive path (growth from the end of the warm-up to the last message)")
        out.append("")
        out.append("| path | messages | traced Python memory | anonymous RSS | glibc heap in use | rate under tracemalloc | verdict |")
        out.append("|---|---:|---:|---:|---:|---:|---|")
        for mem in memory:
            if "error" in mem:
                out.append(f"| {mem['path']} | error | | | | | |")
                continue
            g = mem["growth"]
            out.append(f"| {mem['path']} | {mem['messages']:,} | {_kib(g['traced'])} | {_kib(g['rss_anon'])} | "
                       f"{_kib(g['heap_in_use'])} | {_rate(mem['msgs_per_s_traced'])} msgs/s | "
                       f"{'flat' if mem['flat'] else 'growing'} |")
        out.append("")
    n = results.get("native_alloc")
    if n and "error" not in n:
        calls = n.get("malloc_calls_total")
        out.append(f"Native message path (offer + poll_messages through cffi into preallocated buffers, one process): "
                   f"{n['messages']:,} messages at {_rate(n['msgs_per_s'])} msgs/s; "
                   f"{'malloc-family calls: ' + str(calls) if calls is not None else 'malloc calls not counted'}; "
                   f"glibc heap in use {_kib(n['heap_growth'])}; "
                   f"{'allocates per message' if n['allocates_per_message'] else 'no allocation per message'}.")
        out.append("")
    i = results.get("idle")
    if i and "error" not in i:
        out.append(f"Idle: an asyncio subscriber waiting in `async for` with an embedded driver "
                   f"(SHARED) in the same process used {i['cpu_percent']:.2f}% of a core over {i['seconds']:.1f} s "
                   f"({i['context_switches_per_s']:.0f} context switches/s).")
        out.append("")
    m = results.get("multicast")
    if m:
        from .multicast import markdown as multicast_markdown

        out.append("### Multicast (hosts in network namespaces on a bridge; `aeron-sync-batch`, msgs/s per receiver)")
        out.append("")
        out.append(multicast_markdown(m))
    for s in results.get("skipped") or []:
        out.append(f"Skipped `{s['channel']}`: {s['reason']}")
        out.append("")
    targets = results.get("targets") or []
    if targets:
        out.append("### Targets (32-byte messages over aeron:ipc unless said)")
        out.append("")
        out.append("| target | goal | measured | met |")
        out.append("|---|---|---|---|")
        for t in targets:
            met = {True: "met", False: "**not met**", None: "not measured"}[t["met"]]
            out.append(f"| {t['target']} | {t['goal']} | {t['measured']} | {met} |")
        out.append("")
    return "\n".join(out)
