"""The figures of a run (its JSON) as Markdown tables, for docs/benchmarks.md:
`aeron-async bench --from-json FILE --markdown`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def rate(value: float, k_decimals: int = 0) -> str:
    """A rate in M (two decimals), k (`k_decimals`) or units."""
    if value >= 1e6:
        return f"{value / 1e6:.2f} M"
    if value >= 1e3:
        return f"{value / 1e3:.{k_decimals}f} k"
    return f"{value:.0f}"


def us(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def ratio_cell(row: dict[str, Any]) -> str:
    return f"{row['ratio_vs_peer']:.1f}x {row['peer']}" if "ratio_vs_peer" in row else ""


def throughput_cells(row: dict[str, Any], rate_text: Callable[[float], str] = rate) -> dict[str, str] | None:
    """A throughput row's figures by column (msgs/s, min-max, MB/s, receiver CPU, vs peer); None
    for a row that failed."""
    if "msgs_per_s" not in row:
        return None
    s = row["msgs_per_s"]
    return {"msgs/s": rate_text(s["median"]), "min-max": f"{rate_text(s['min'])}-{rate_text(s['max'])}",
            "MB/s": f"{row['mb_per_s']['median']:.1f}", "receiver CPU": f"{row['receiver_cpu_percent']:.0f}%",
            "vs peer": ratio_cell(row)}


def latency_cells(row: dict[str, Any]) -> list[str] | None:
    """A round-trip row's figures: p50 and p99 with their min-max, p90, p99.9, max, the ratio to
    its peer; None for a row that failed."""
    if "p50_us" not in row:
        return None

    def cell(name: str, spread: bool = False) -> str:
        v = row[name]
        return f"{us(v['median'])} ({us(v['min'])}-{us(v['max'])})" if spread else us(v["median"])

    return [cell("p50_us", True), cell("p90_us"), cell("p99_us", True), cell("p99_9_us"), cell("max_us"),
            ratio_cell(row)]


def _table(out: list[str], title: str, header: str, rows: list[str]) -> None:
    """A section: its title, a table (header: the column names and alignment lines) and a blank line."""
    out += [title, "", header, *rows, ""]


def _row(cells: list[str], empty: int = 0) -> str:
    return "| " + " | ".join(cells) + " |" + " |" * empty


def _throughput_figures(row: dict[str, Any]) -> list[str] | None:
    cells = throughput_cells(row)
    return None if cells is None else list(cells.values())


def _case_table(out: list[str], rows: list[dict[str, Any]], figures: Callable[[dict[str, Any]], list[str] | None],
                title: str, columns: list[str], alignment: str) -> None:
    """A table of the cases' rows (case, transport, size, then `figures` of each: "error" and empty
    cells for a row that failed); nothing when there are no rows."""
    lines = []
    for r in rows:
        cells = figures(r)
        lines.append(_row([r["case"], r["transport"], str(r["size"]), *(cells or ["error"])],
                          0 if cells else len(columns) - 1))
    if lines:
        _table(out, title, _row(["case", "transport", "size", *columns]) + f"\n|---|---|---:|{alignment}|", lines)


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
    _case_table(out, results.get("throughput") or [], _throughput_figures,
                "### Throughput (messages/s at the receiver: median of the rounds, min-max)",
                ["msgs/s", "min-max", "MB/s", "receiver CPU", "vs peer"], "---:|---:|---:|---:|---")
    _case_table(out, results.get("latency") or [], latency_cells,
                "### Round trip (microseconds: median of the rounds; p50 and p99 with min-max)",
                ["p50", "p90", "p99", "p99.9", "max", "vs peer (p50)"], "---:|---:|---:|---:|---:|---")
    memory = []
    for mem in results.get("memory") or []:
        if "error" in mem:
            memory.append(_row([mem["path"], "error"], 5))
            continue
        g = mem["growth"]
        memory.append(_row([mem["path"], f"{mem['messages']:,}", _kib(g["traced"]), _kib(g["rss_anon"]),
                            _kib(g["heap_in_use"]), f"{rate(mem['msgs_per_s_traced'])} msgs/s",
                            "flat" if mem["flat"] else "growing"]))
    if memory:
        _table(out, "### Memory of the batch receive path (growth from the end of the warm-up to the last message)",
               "| path | messages | traced Python memory | anonymous RSS | glibc heap in use | rate under tracemalloc | "
               "verdict |\n|---|---:|---:|---:|---:|---:|---|", memory)
    n = results.get("native_alloc")
    if n and "error" not in n:
        calls = n.get("malloc_calls_total")
        out.append(f"Native message path (offer + poll_messages through cffi into preallocated buffers, one process): "
                   f"{n['messages']:,} messages at {rate(n['msgs_per_s'])} msgs/s; "
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
    rpc_figures = results.get("request_response")
    if rpc_figures and rpc_figures.get("rows"):
        from .rpc import markdown as rpc_markdown

        out.append("### Request/response (32 B; round trips: one client; requests/s: 10 clients x 10 in flight)")
        out.append("")
        out.append(rpc_markdown(rpc_figures))
        out.append("")
    for s in results.get("skipped") or []:
        out.append(f"Skipped `{s['channel']}`: {s['reason']}")
        out.append("")
    targets = [_row([t["target"], t["goal"], t["measured"], {True: "met", False: "**not met**", None: "not measured"}[t["met"]]])
               for t in results.get("targets") or []]
    if targets:
        _table(out, "### Targets (32-byte messages over aeron:ipc unless said)",
               "| target | goal | measured | met |\n|---|---|---|---|", targets)
    return "\n".join(out)
