#!/usr/bin/env python3
"""Draws bench/scale.sh's results as an SVG (no dependencies): two panels, wall time and copier
CPU over the raw copy's in the same round, one group of bars per layout (topics x partitions),
one bar per mode: the median of the verified rounds, a dot per round. A dashed line at 1 (the
raw copy) and at 1.5 (issue 43's goal for at-least-once at 2,000 partitions).
A file whose settings say target_nodes=N (N > 1) is drawn as a layout of its own.
Usage: scale_chart.py RESULTS.json [MORE.json ...] OUT.svg"""
import json
import re
import statistics
import sys
from html import escape


def load(path):
    """A file's runs; a layout copied to a target of several brokers is its own group."""
    d = json.load(open(path))
    nodes = re.search(r"target_nodes=(\d+)", d["settings"])
    for r in d["runs"]:
        if nodes and int(nodes.group(1)) > 1:
            r["layout"] += f", {nodes.group(1)} target brokers"
    return d["runs"]


runs = [r for f in sys.argv[1:-1] for r in load(f)]
out = sys.argv[-1]
ok = [r for r in runs if r["status"] == "ok" and r.get("wall_vs_raw") is not None]
def partitions(layout):
    topics, per_topic = re.match(r"(\d+)x(\d+)", layout).groups()
    return int(topics) * int(per_topic)


layouts = sorted({r["layout"] for r in runs}, key=lambda l: (partitions(l), l))
modes = [m for m in dict.fromkeys(r["mode"] for r in runs) if m != "ceiling"]
PALETTE = ["#d62728", "#ff9896", "#1f77b4", "#aec7e8", "#2ca02c", "#9467bd", "#8c564b"]
color = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(modes)}
name = {"mm2+tuned": "MirrorMaker 2 tuned"}

bar_w, gap, group_gap = 16, 3, 30
group_w = max(len(modes) * (bar_w + gap), 110) + group_gap
plot_w = max(360, len(layouts) * group_w)
plot_h, left, top = 180, 50, 56
panel_h = plot_h + 60
width = left + plot_w + 80
legend_h = 18 * len(modes) + 10
height = top + 2 * panel_h + legend_h
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
       f'font-family="sans-serif" font-size="11">',
       f'<rect width="{width}" height="{height}" fill="white"/>',
       f'<text x="{left}" y="18" font-size="13">Partition scale, over the raw copy of the same '
       'round</text>',
       f'<text x="{left}" y="32">bars: median; dots: rounds; dashed: 1 and 1.5</text>']


def panel(i, key, title):
    y0 = top + i * panel_h
    values = [r[key] for r in ok if r["mode"] in modes]
    ymax = max([2.0] + values) * 1.1
    y = lambda v: y0 + plot_h - v / ymax * plot_h  # noqa: E731
    svg.append(f'<text x="{left}" y="{y0 - 6}" font-weight="bold">{escape(title)}</text>')
    svg.append(f'<line x1="{left}" y1="{y0 + plot_h}" x2="{left + plot_w}" y2="{y0 + plot_h}" '
               'stroke="black"/>')
    step = 0.5 if ymax <= 4 else 1 if ymax <= 8 else 2
    v = 0.0
    while v <= ymax:
        svg.append(f'<text x="{left - 6}" y="{y(v) + 4}" text-anchor="end">{v:g}</text>')
        svg.append(f'<line x1="{left}" y1="{y(v)}" x2="{left + plot_w}" y2="{y(v)}" '
                   'stroke="#eee"/>')
        v += step
    for ref, dash in ((1.0, "4,3"), (1.5, "2,3")):
        svg.append(f'<line x1="{left}" y1="{y(ref)}" x2="{left + plot_w}" y2="{y(ref)}" '
                   f'stroke="#555" stroke-dasharray="{dash}"/>')
    for g, layout in enumerate(layouts):
        x0 = left + 10 + g * group_w
        parts = [r for r in runs if r["layout"] == layout][0]["partitions"]
        svg.append(f'<text x="{x0}" y="{y0 + plot_h + 14}">'
                   f'{escape(layout.replace("x", " × ", 1))}</text>')
        svg.append(f'<text x="{x0}" y="{y0 + plot_h + 27}">{parts:,} partitions</text>')
        for m, mode in enumerate(modes):
            x = x0 + m * (bar_w + gap)
            got = [r[key] for r in ok if r["layout"] == layout and r["mode"] == mode]
            failed = [r for r in runs if r["layout"] == layout and r["mode"] == mode
                      and r["status"] != "ok"]
            if got:
                med = statistics.median(got)
                svg.append(f'<rect x="{x}" y="{y(med)}" width="{bar_w}" '
                           f'height="{y0 + plot_h - y(med)}" fill="{color[mode]}"/>')
                for v in got:
                    svg.append(f'<circle cx="{x + bar_w / 2}" cy="{y(v)}" r="2" fill="black"/>')
            if failed:
                svg.append(f'<text x="{x + bar_w / 2}" y="{y0 + plot_h - 4}" text-anchor="middle" '
                           f'fill="{color[mode]}" font-weight="bold">×</text>')


panel(0, "wall_vs_raw", "wall time / raw copy's (× marks a failed round)")
panel(1, "cpu_vs_raw", "copier CPU / raw copy's")
ly = top + 2 * panel_h - 10
for i, mode in enumerate(modes):
    svg.append(f'<rect x="{left}" y="{ly + i * 18}" width="12" height="12" fill="{color[mode]}"/>')
    label = name.get(mode, mode.replace("+before", " (before)"))
    svg.append(f'<text x="{left + 18}" y="{ly + i * 18 + 10}">{escape(label)}</text>')
svg.append("</svg>")
with open(out, "w") as f:
    f.write("\n".join(svg) + "\n")
