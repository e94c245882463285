#!/usr/bin/env python3
"""The partition-scale benchmark's report (bench/scale.sh, issue 43): a table per layout with
each run's figures and, per round, its ratios to the raw copy of the same layout and round
(exactly-once also to at-least-once); the medians over rounds; everything as JSON.

Usage: scale_report.py ROWS.tsv OUT.json SETTINGS"""
import json
import statistics
import sys

FIELDS = ["layout", "topics", "partitions_per_topic", "mode", "round", "wall_s", "first_record_s",
          "peak_rss_kib", "cpu_s", "broker_a_cpu_s", "broker_b_cpu_s", "status", "note"]


def num(v):
    try:
        return float(v)
    except ValueError:
        return None


def main():
    rows_path, out_path, settings = sys.argv[1:4]
    runs = []
    for line in open(rows_path):
        r = dict(zip(FIELDS, line.rstrip("\n").split("\t")))
        for k in ("topics", "partitions_per_topic", "round", "peak_rss_kib"):
            r[k] = int(float(r[k] or 0))
        for k in ("wall_s", "first_record_s", "cpu_s", "broker_a_cpu_s", "broker_b_cpu_s"):
            r[k] = num(r[k])
        r["partitions"] = r["topics"] * r["partitions_per_topic"]
        runs.append(r)
    by = {(r["layout"], r["round"], r["mode"]): r for r in runs if r["status"] == "ok"}
    for r in runs:
        base = by.get((r["layout"], r["round"], "ceiling"))
        alo = by.get((r["layout"], r["round"], "at-least-once" + ("+before" if r["mode"].endswith("+before") else "")))
        if r["status"] == "ok" and base:
            r["wall_vs_raw"] = round(r["wall_s"] / base["wall_s"], 2)
            r["cpu_vs_raw"] = round(r["cpu_s"] / base["cpu_s"], 2) if base["cpu_s"] else None
        if r["status"] == "ok" and alo and r["mode"].startswith("exactly-once"):
            r["wall_vs_at_least_once"] = round(r["wall_s"] / alo["wall_s"], 2)
            r["cpu_vs_at_least_once"] = round(r["cpu_s"] / alo["cpu_s"], 2) if alo["cpu_s"] else None
    summary = []
    for layout in dict.fromkeys(r["layout"] for r in runs):
        print(f"\n{layout} ({next(r['partitions'] for r in runs if r['layout'] == layout)} partitions)")
        print(f"{'mode':<15} {'round':>5} {'wall s':>8} {'first s':>8} {'cpu s':>7} {'rss MiB':>8} "
              f"{'A cpu':>6} {'B cpu':>6} {'wall/raw':>8} {'cpu/raw':>8} {'eos/alo':>8}  status")
        for r in (r for r in runs if r["layout"] == layout):
            f = lambda v, w, d=2: f"{v:>{w}.{d}f}" if isinstance(v, (int, float)) else f"{'-':>{w}}"
            print(f"{r['mode']:<15} {r['round']:>5} {f(r['wall_s'], 8)} {f(r['first_record_s'], 8)} "
                  f"{f(r['cpu_s'], 7)} {r['peak_rss_kib'] / 1024:>8.0f} {f(r['broker_a_cpu_s'], 6, 1)} "
                  f"{f(r['broker_b_cpu_s'], 6, 1)} {f(r.get('wall_vs_raw'), 8)} {f(r.get('cpu_vs_raw'), 8)} "
                  f"{f(r.get('wall_vs_at_least_once'), 8)}  {r['status']} {r['note']}")
        for mode in dict.fromkeys(r["mode"] for r in runs if r["layout"] == layout):
            ok = [r for r in runs if r["layout"] == layout and r["mode"] == mode and r["status"] == "ok"]
            med = lambda k: round(statistics.median(v), 2) if (v := [r[k] for r in ok if r.get(k) is not None]) else None
            summary.append({"layout": layout, "partitions": ok[0]["partitions"] if ok else None, "mode": mode,
                            "rounds_ok": len(ok), **{f"median_{k}": med(k) for k in
                            ("wall_s", "first_record_s", "cpu_s", "peak_rss_kib", "broker_a_cpu_s", "broker_b_cpu_s",
                             "wall_vs_raw", "cpu_vs_raw", "wall_vs_at_least_once", "cpu_vs_at_least_once")}})
    json.dump({"settings": settings, "runs": runs, "medians": summary}, open(out_path, "w"), indent=1)
    print(f"\nwrote {out_path}")


main()
