#!/usr/bin/env python3
"""bench/run.sh --live's report (issue 32): per mode, the end-to-end latency a read_committed
reader of the target saw (record timestamp to arrival: p50, p99, max, ms; median over rounds),
the p99 as a ratio to the raw copy's (mode `ceiling`, issue 43) when it ran, and the copier's and brokers' CPU per GB at the writer's rate (the sampler's window between
20 % and 80 % of the records). Usage: live_report.py LIVE.tsv OUT.json (settings in BENCH_*)."""
import json
import os
import statistics
import sys
import time

rows_path, out_path = sys.argv[1], sys.argv[2]
env = os.environ.get


def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


runs = []
for line in open(rows_path):
    mode, rnd, status, note, sample, latency, write = line.rstrip("\n").split("\t")
    runs.append({"mode": mode, "round": int(rnd), "status": status, "note": note,
                 "sample": load(sample), "latency": load(latency), "writer": load(write)})

modes = []
for r in runs:
    if r["mode"] not in modes:
        modes.append(r["mode"])
# The raw copy first: the others' p99 is given as a ratio to its.
modes.sort(key=lambda m: m != "ceiling")
med = lambda v: statistics.median(v) if v else None
summary = {}
print(f"\nlive: {env('BENCH_RATE')} records/s of {env('BENCH_SIZE')} B values over"
      f" {env('BENCH_PARTITIONS')} partitions; latency = record timestamp to arrival at a"
      f" read_committed reader of the target (ms); medians over rounds")
print(f"  {'mode':<26} {'p50':>7} {'p99':>7} {'max':>7} {'p99/raw':>7} {'writer rec/s':>12} {'CPU s/GB':>9} {'brokers s/GB':>12}")
for m in modes:
    # Round 0 warms up (bench/run.sh): left out.
    rs = [r for r in runs if r["mode"] == m and r["status"] == "ok" and r["latency"] and r["round"] >= 1]
    w = lambda r: (r["sample"] or {}).get("window") or {}
    s = {"runs": len(rs),
         "p50_ms": med([r["latency"]["p50_ms"] for r in rs]),
         "p99_ms": med([r["latency"]["p99_ms"] for r in rs]),
         "max_ms": med([r["latency"]["max_ms"] for r in rs]),
         "writer_records_per_s": med([(r["writer"] or {}).get("records_per_s", 0) for r in rs]),
         "copier_cpu_s_per_gb": med([w(r).get("copier_cpu_s_per_gb") for r in rs if w(r)]),
         "brokers_cpu_s_per_gb": med([sum(w(r).get("pids_cpu_s_per_gb") or [0]) for r in rs if w(r)])}
    summary[m] = s
    ceiling = (summary.get("ceiling") or {}).get("p99_ms")
    s["p99_vs_ceiling"] = s["p99_ms"] / ceiling if ceiling and s["p99_ms"] is not None else None
    if not rs:
        print(f"  {m:<26} no successful run")
        continue
    f = lambda k, fmt="{:.0f}": fmt.format(s[k]) if s[k] is not None else "-"
    print(f"  {m:<26} {f('p50_ms'):>7} {f('p99_ms'):>7} {f('max_ms'):>7} {f('p99_vs_ceiling', '{:.2f}'):>7} {f('writer_records_per_s'):>12}"
          f" {f('copier_cpu_s_per_gb', '{:.1f}'):>9} {f('brokers_cpu_s_per_gb', '{:.1f}'):>12}")
failures = [r for r in runs if r["status"] != "ok"]
if failures:
    print("FAILED runs: " + "; ".join(f"{r['mode']} r{r['round']}: {r['note']}" for r in failures)[:600])
result = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "kind": "live",
          "params": {"rate": env("BENCH_RATE"), "value_bytes": env("BENCH_SIZE"),
                     "partitions": env("BENCH_PARTITIONS"), "nproc": os.cpu_count(),
                     "memory": env("BENCH_MEMORY", ""),
                     "loadavg_at_end": os.getloadavg()[0]},
          "runs": runs, "summary": summary, "ok": not failures}
with open(out_path + ".tmp", "w") as fh:
    json.dump(result, fh, indent=1)
    fh.write("\n")
os.replace(out_path + ".tmp", out_path)
print(f"results: {out_path}")
sys.exit(0 if result["ok"] else 1)
