"""`aeron-async bench --plot DIR`: the run's figures as PNG charts (matplotlib, Agg, no display).

- `latency-<family>-<size>B.png`, one per message size and family of our channels (`ipc`, `udp`):
  the HdrHistogram percentile distribution of every round-trip case of that family and of every
  peer, the rounds of a case merged into one histogram. The x axis is HdrHistogram's: the
  percentile on a log scale of 1/(1-p), so 90%, 99%, 99.9% ... are evenly spaced and the tail is as
  wide as the body; the y axis is the round trip in microseconds (log). Ours are solid lines, the
  peers' dashed.
- `throughput-<size>B.png`, one per message size: the receiver's rate of every throughput case,
  ours and the peers', as bars (median of the rounds, the min-max as an error bar; log scale).

Works on a live run's results or on a run saved with --json (`--from-json FILE --plot DIR`).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator

PEER_STYLE = "--"
OUR_COLOR = "#1f77b4"
PEER_COLOR = "#ff7f0e"
# points per decade of 1/(1-p) on a latency curve
STEPS_PER_DECADE = 20


def family(row: dict[str, Any]) -> str:
    """`ipc` or `udp` for our rows (by channel), `peer` for the peers'."""
    if row.get("impl") != "aeron_async":
        return "peer"
    transport = str(row.get("transport", ""))
    if transport.startswith("aeron:ipc"):
        return "ipc"
    if transport.startswith("aeron:udp"):
        return "udp"
    return re.sub(r"[^A-Za-z0-9]+", "-", transport).strip("-") or "other"


def merged_histogram(row: dict[str, Any]) -> Any:
    """The row's rounds in one HdrHistogram (None when no round has one)."""
    from hdrh.histogram import HdrHistogram

    merged = None
    for r in row.get("rounds") or []:
        encoded = r.get("histogram")
        if not encoded:
            continue
        h = HdrHistogram.decode(encoded)
        if merged is None:
            merged = h
        else:
            merged.add(h)
    return merged


def percentile_curve(histogram: Any) -> tuple[list[float], list[float]]:
    """(1/(1-p), round trip in us) from p = 0 up to the last recorded value (p = 1 - 1/count)."""
    count = histogram.get_total_count()
    if count <= 0:
        return [], []
    decades = math.log10(count)
    xs: list[float] = []
    ys: list[float] = []
    steps = int(decades * STEPS_PER_DECADE)
    for k in range(steps + 1):
        x = 10 ** (k / STEPS_PER_DECADE)
        xs.append(x)
        ys.append(histogram.get_value_at_percentile(100.0 * (1.0 - 1.0 / x)) / 1000.0)
    xs.append(float(count))
    ys.append(histogram.get_max_value() / 1000.0)
    return xs, ys


def _percentile_label(x: float) -> str:
    if x <= 1:
        return "0%"
    digits = max(0, round(math.log10(x)) - 2)
    return f"{100.0 * (1.0 - 1.0 / x):.{digits}f}%"


def _save(fig: Figure, path: str) -> None:
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100)


def latency_chart(rows: list[dict[str, Any]], title: str, path: str) -> bool:
    """One chart of the rows' percentile distributions; False when no row had a histogram."""
    fig = Figure(figsize=(9, 5.5))
    ax = fig.add_subplot()
    transports = {r["transport"] for r in rows if r.get("impl") == "aeron_async"}
    widest = 1.0
    drawn = 0
    for row in rows:
        histogram = merged_histogram(row)
        if histogram is None:
            continue
        xs, ys = percentile_curve(histogram)
        if not xs:
            continue
        ours = row.get("impl") == "aeron_async"
        label = row["case"] if not ours or len(transports) < 2 else f"{row['case']} ({row['transport']})"
        label += f", p50 {histogram.get_value_at_percentile(50.0) / 1000.0:.1f} us"
        ax.plot(xs, ys, PEER_STYLE if not ours else "-", linewidth=1.6 if ours else 1.2, label=label)
        widest = max(widest, xs[-1])
        drawn += 1
    if not drawn:
        return False
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [10.0 ** k for k in range(int(math.ceil(math.log10(widest))) + 1)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([_percentile_label(t) for t in ticks])
    ax.set_xlim(1, ticks[-1])
    ax.set_xlabel("percentile (log scale of 1/(1-p))")
    ax.set_ylabel("round trip, microseconds (log)")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    _save(fig, path)
    return True


def throughput_chart(rows: list[dict[str, Any]], title: str, path: str) -> bool:
    """Horizontal bars of msgs/s (median, min-max); False when no row has a figure."""
    rows = [r for r in rows if "msgs_per_s" in r]
    if not rows:
        return False
    fig = Figure(figsize=(9, 1.8 + 0.28 * len(rows)))
    ax = fig.add_subplot()
    labels = [f"{r['case']}  {r['transport']}" for r in rows]
    medians = [r["msgs_per_s"]["median"] for r in rows]
    low = [m - r["msgs_per_s"]["min"] for m, r in zip(medians, rows)]
    high = [r["msgs_per_s"]["max"] - m for m, r in zip(medians, rows)]
    colors = [OUR_COLOR if r.get("impl") == "aeron_async" else PEER_COLOR for r in rows]
    positions = list(range(len(rows)))
    ax.barh(positions, medians, xerr=[low, high], color=colors, ecolor="#444444", capsize=2)
    for y, value in zip(positions, medians):
        ax.text(value, y, f" {value / 1e6:.2f} M" if value >= 1e6 else f" {value / 1e3:.0f} k",
                va="center", fontsize=7)
    ax.set_yticks(positions)
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    lowest = min(r["msgs_per_s"]["min"] for r in rows)
    ax.set_xlim(left=10 ** math.floor(math.log10(max(lowest, 1.0))), right=max(r["msgs_per_s"]["max"] for r in rows) * 3)
    ax.set_xlabel("messages/s at the receiver (log scale; median of the rounds, whiskers min-max)")
    ax.set_title(title + "  (blue: aeron_async, orange: peers)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    return True


def write_plots(results: dict[str, Any], directory: str) -> list[str]:
    """Writes the charts of a run into directory (created if needed); returns their paths."""
    os.makedirs(directory, exist_ok=True)
    written: list[str] = []
    latency = results.get("latency") or []
    for size in sorted({r["size"] for r in latency}):
        rows = [r for r in latency if r["size"] == size]
        peers = [r for r in rows if family(r) == "peer"]
        for fam in sorted({family(r) for r in rows} - {"peer"}):
            ours = [r for r in rows if family(r) == fam]
            path = os.path.join(directory, f"latency-{fam}-{size}B.png")
            if latency_chart(ours + peers, f"Round trip, {fam} and peers, {size}-byte messages", path):
                written.append(path)
    throughput = results.get("throughput") or []
    for size in sorted({r["size"] for r in throughput}):
        path = os.path.join(directory, f"throughput-{size}B.png")
        rows = [r for r in throughput if r["size"] == size]
        if throughput_chart(rows, f"Throughput, {size}-byte messages", path):
            written.append(path)
    return written
