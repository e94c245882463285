#!/usr/bin/env python3
"""Draws bench/run.sh's results as an SVG (no dependencies): two panels, throughput (MB/s) and
copier CPU seconds per GB, one group of bars per record size x partition count, one bar per mode
(median of the verified runs; the thin line spans the fastest and slowest run). Also draws
`--steady` results (one or more files, their cells side by side): the steady window's medians,
the line spanning the fastest and slowest round.
Usage: chart.py RESULTS.json [MORE.json ...] OUT.svg"""
import json
import sys
from html import escape

inputs = [json.load(open(f)) for f in sys.argv[1:-1]]
out = sys.argv[-1]
res = inputs[0]
steady = res.get("kind") == "steady"
summary = {k: v for r in inputs for k, v in r["summary"].items()}
all_runs = [run for r in inputs for run in r["runs"]]
modes = []
for r in inputs:
    modes += [m for m in r["params"]["modes"] if m not in modes]
combos = list(summary)
PALETTE = ["#7f7f7f", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#17becf", "#bcbd22", "#8c564b",
           "#e377c2", "#ff7f0e", "#aec7e8", "#98df8a"]
color = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(modes)}
name = {"ceiling": "ceiling (raw copy)", "mm2": "MirrorMaker 2", "mm2+tuned": "MirrorMaker 2 tuned"}

bar_w, gap, group_gap = 14, 2, 26
group_w = len(modes) * (bar_w + gap) + group_gap
plot_w = max(360, len(combos) * group_w)
plot_h, left, top = 180, 60, 40
panel_h = plot_h + 70
legend_h = 18 * ((len(modes) + 2) // 3) + 10
width = left + plot_w + 20
height = top + 2 * panel_h + legend_h + 20


def runs_of(combo, mode):
    cs = summary[combo]
    return [r for r in all_runs if r["value_bytes"] == cs["value_bytes"]
            and r["partitions"] == cs["partitions"] and r["mode"] == mode and r["status"] == "ok"]


def bar(combo, mode, key, run_key):
    """The bar's value and its line's ends (None: no verified run)."""
    s = summary[combo]["modes"].get(mode) or {}
    if steady:
        d = s.get(key)
        return (d["median"], d["min"], d["max"]) if d else None
    if s.get("status") != "ok":
        return None
    rs = [r[run_key] for r in runs_of(combo, mode)] or [s[key]]
    return s[key], min(rs), max(rs)


def nice_max(v):
    if v <= 0:
        return 1
    import math
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * e:
            return m * e
    return 10 * e


svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
       f'font-family="sans-serif" font-size="11">',
       f'<rect width="{width}" height="{height}" fill="white"/>',
       f'<text x="{left}" y="20" font-size="13" font-weight="bold">kreplicate beside MirrorMaker 2 on Apache Kafka '
       f'{escape(res.get("machine", res["params"]).get("kafka", ""))}: {res["params"]["rounds"]} round(s)'
       f'{", steady state" if steady else ""}, {escape(res["when"])}</text>']


def panel(y0, title, key, run_key, fmt):
    vals = [b[2] for c in combos for m in modes if (b := bar(c, m, key, run_key))]
    vmax = nice_max(max(vals) if vals else 1)
    svg.append(f'<text x="{left}" y="{y0 - 8}" font-weight="bold">{escape(title)}</text>')
    for i in range(5):
        v = vmax * i / 4
        y = y0 + plot_h - plot_h * i / 4
        svg.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{fmt(v)}</text>')
    for gi, c in enumerate(combos):
        cs = summary[c]
        gx = left + 10 + gi * group_w
        for mi, m in enumerate(modes):
            x = gx + mi * (bar_w + gap)
            b = bar(c, m, key, run_key)
            if b is None:
                if m in cs["modes"]:
                    svg.append(f'<text x="{x + bar_w / 2}" y="{y0 + plot_h - 3}" text-anchor="middle" fill="#c00">x</text>')
                continue
            v, lo, hi = b
            h = plot_h * v / vmax
            svg.append(f'<rect x="{x}" y="{y0 + plot_h - h:.1f}" width="{bar_w}" height="{h:.1f}" '
                       f'fill="{color[m]}"><title>{escape(name.get(m, m))}: {fmt(v)}</title></rect>')
            if hi > lo:
                y1, y2 = (y0 + plot_h - plot_h * v / vmax for v in (lo, hi))
                xm = x + bar_w / 2
                svg.append(f'<line x1="{xm}" x2="{xm}" y1="{y1:.1f}" y2="{y2:.1f}" stroke="black"/>')
        svg.append(f'<text x="{gx + (len(modes) * (bar_w + gap)) / 2}" y="{y0 + plot_h + 14}" '
                   f'text-anchor="middle">{cs["value_bytes"]} B x {cs["partitions"]} part.</text>')
    svg.append(f'<line x1="{left}" x2="{left}" y1="{y0}" y2="{y0 + plot_h}" stroke="black"/>')


panel(top + 20, "throughput, MB/s of key+value (higher is better)", "mb_per_s", "mb_per_s",
      lambda v: f"{v:.0f}")
panel(top + 20 + panel_h, "copier CPU seconds per GB (lower is better)",
      "copier_cpu_s_per_gb" if steady else "cpu_s_per_gb", "cpu_s_per_gb",
      lambda v: f"{v:.1f}")
ly = top + 2 * panel_h + 10
for i, m in enumerate(modes):
    x = left + (i % 3) * 220
    y = ly + (i // 3) * 18
    svg.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{color[m]}"/>')
    svg.append(f'<text x="{x + 14}" y="{y}">{escape(name.get(m, m))}</text>')
svg.append("</svg>")
with open(out, "w") as f:
    f.write("\n".join(svg) + "\n")
print(f"chart: {out}")
