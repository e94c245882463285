#!/usr/bin/env python3
"""bench/run.sh --steady's report (issue 32): reads the runs (TSV: size, partitions, records, mode,
round, status, note, the sampler's JSON), leaves out the warm-up round 0, and prints per size and
partition count the steady window's throughput and CPU (copier, brokers) per mode, the ratios
taken per round (to the raw copy, to MirrorMaker 2 as shipped and tuned, exactly-once to
at-least-once) with their median and range, and the start-up apart. Writes the JSON.
Usage: steady_report.py STEADY.tsv OUT.json (settings in BENCH_* env)."""
import json
import os
import statistics
import sys
import time

rows_path, out_path = sys.argv[1], sys.argv[2]
env = os.environ.get
modes = env("BENCH_MODES", "").split()

runs = []
for line in open(rows_path):
    size, parts, records, mode, rnd, status, note, path = line.rstrip("\n").split("\t")
    try:
        sample = json.load(open(path))
    except (OSError, ValueError):
        sample = None
        status = "FAILED" if status == "ok" else status
    runs.append({"value_bytes": int(size), "partitions": int(parts), "records": int(records),
                 "mode": mode, "round": int(rnd), "status": status, "note": note, "sample": sample})


def window(r, key):
    w = (r["sample"] or {}).get("window") or {}
    if key == "brokers_cpu_s_per_gb":
        return sum(w.get("pids_cpu_s_per_gb") or [0])
    if key == "brokers_sys_cpu_s_per_gb":
        # Older samplers did not split the kernel's part out.
        return sum(w["pids_sys_cpu_s_per_gb"]) if "pids_sys_cpu_s_per_gb" in w else None
    if key == "target_sys_cpu_s_per_gb":
        # bench/run.sh passes the pids as source,target.
        v = w.get("pids_sys_cpu_s_per_gb") or []
        return v[-1] if v else None
    return w.get(key)


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


# Ratios per round: each mode against a reference run of the same round; > 1 means faster (or,
# for CPU, fewer CPU seconds per GB than the reference).
REFS = [("ceiling", "ceiling"), ("mm2", "mm2"), ("mm2+tuned", "mm2+tuned")]
combos, summary = [], {}
for r in runs:
    c = (r["value_bytes"], r["partitions"])
    if c not in combos:
        combos.append(c)
for c in combos:
    measured = [r for r in runs if (r["value_bytes"], r["partitions"]) == c and r["round"] >= 1]
    ok = lambda m: [r for r in measured if r["mode"] == m and r["status"] == "ok"]
    by_round = {}
    for r in measured:
        if r["status"] == "ok":
            by_round.setdefault(r["round"], {})[r["mode"]] = r
    per = {}
    for m in modes:
        rs = ok(m)
        s = {"runs": len(rs),
             "mb_per_s": spread([window(r, "mb_per_s") for r in rs]),
             "records_per_s": spread([window(r, "records_per_s") for r in rs]),
             "copier_cpu_s_per_gb": spread([window(r, "copier_cpu_s_per_gb") for r in rs]),
             "brokers_cpu_s_per_gb": spread([window(r, "brokers_cpu_s_per_gb") for r in rs]),
             "brokers_sys_cpu_s_per_gb": spread([window(r, "brokers_sys_cpu_s_per_gb") for r in rs]),
             "window_seconds": spread([window(r, "seconds") for r in rs]),
             "first_record_s": spread([(r["sample"] or {}).get("first_record_s") for r in rs]),
             "first_commit_s": spread([(r["sample"] or {}).get("first_commit_s") for r in rs]),
             "total_seconds": spread([(r["sample"] or {}).get("seconds") for r in rs]),
             "peak_rss_mib": spread([(r["sample"] or {}).get("peak_rss_kib", 0) / 1024 for r in rs])}
        refs = REFS + ([("at-least-once", "at-least-once")] if m.startswith("exactly-once") else [])
        for name, ref in refs:
            if ref == m:
                continue
            tp, cpu = [], []
            for rnd, got in sorted(by_round.items()):
                if m in got and ref in got:
                    a, b = got[m], got[ref]
                    if window(a, "mb_per_s") and window(b, "mb_per_s"):
                        tp.append(window(a, "mb_per_s") / window(b, "mb_per_s"))
                    if window(a, "copier_cpu_s_per_gb") and window(b, "copier_cpu_s_per_gb"):
                        cpu.append(window(b, "copier_cpu_s_per_gb") / window(a, "copier_cpu_s_per_gb"))
            if tp:
                s[f"throughput_to_{name}"] = {**spread(tp), "per_round": tp}
            if cpu:
                s[f"cpu_efficiency_to_{name}"] = {**spread(cpu), "per_round": cpu}
        per[m] = s
    # The target broker's kernel CPU per GB is mostly its writes into the page cache, which on a
    # VM that hands freed memory back to its host cost 1-6 s per GB from one minute to the next
    # whatever writes (a plain dd too; bench/run.sh's HOLD_MEMORY): a run at over twice its
    # mode's median is flagged as the machine's slow moment. Against its own mode: MirrorMaker 2
    # as shipped costs the broker that much in every run (small requests).
    slow = []
    for m in modes:
        sys_gb = [(r, window(r, "target_sys_cpu_s_per_gb")) for r in measured
                  if r["mode"] == m and r["status"] == "ok"]
        sys_gb = [(r, v) for r, v in sys_gb if v is not None]
        if sys_gb:
            med = statistics.median(v for _, v in sys_gb)
            slow += [{"mode": m, "round": r["round"], "target_sys_cpu_s_per_gb": v,
                      "mb_per_s": window(r, "mb_per_s")} for r, v in sys_gb if v > 2 * med]
    summary[f"{c[0]}x{c[1]}"] = {"value_bytes": c[0], "partitions": c[1], "modes": per,
                                 "records": measured[0]["records"] if measured else 0,
                                 "machine_slow_runs": slow}

# --- print -----------------------------------------------------------------------------------
key_size = int(env("BENCH_KEY_SIZE", "16"))


def fmt(s, k="median", f="{:.1f}"):
    return f.format(s[k]) if s else "-"


def rng(s, f="{:.2f}"):
    return f"{fmt(s, 'median', f)} ({fmt(s, 'min', f)}-{fmt(s, 'max', f)})" if s else "-"


print(f"\nsteady state: the window between 20 % and 80 % of the records, by one external sampler;"
      f" {env('BENCH_ROUNDS', '?')} rounds after a warm-up round, alternating; ratios per round:"
      f" median (range)")
for key, cs in summary.items():
    n = cs["records"]
    print(f"\n{n:,} records x {cs['value_bytes']} B values ({key_size} B keys), {cs['partitions']} partitions,"
          f" {n * (cs['value_bytes'] + key_size) / 1e9:.2f} GB key+value:")
    print(f"  {'mode':<22} {'MB/s':>7} {'/ raw copy':>18} {'/ MM2':>18} {'/ MM2 tuned':>18}"
          f" {'EOS / ALO':>18} {'CPU s/GB':>8} {'CPU vs raw':>18} {'brokers s/GB':>12} {'of it kernel':>12}")
    for m, s in cs["modes"].items():
        if not s["runs"]:
            print(f"  {m:<22} no successful run")
            continue
        print(f"  {m:<22} {fmt(s['mb_per_s']):>7} {rng(s.get('throughput_to_ceiling')):>18}"
              f" {rng(s.get('throughput_to_mm2')):>18} {rng(s.get('throughput_to_mm2+tuned')):>18}"
              f" {rng(s.get('throughput_to_at-least-once')):>18} {fmt(s['copier_cpu_s_per_gb']):>8}"
              f" {rng(s.get('cpu_efficiency_to_ceiling')):>18} {fmt(s['brokers_cpu_s_per_gb']):>12}"
              f" {fmt(s['brokers_sys_cpu_s_per_gb']):>12}")
    if cs["machine_slow_runs"]:
        print("  runs with the target broker's kernel CPU per GB over twice their mode's median (the"
              " machine's page-cache writes, not the copier): " + ", ".join(
                  f"{x['mode']} r{x['round']} ({x['target_sys_cpu_s_per_gb']:.1f} s/GB, {x['mb_per_s']:.0f} MB/s)"
                  for x in cs["machine_slow_runs"]))
    print(f"  start-up (s, median (range)):")
    print(f"  {'mode':<22} {'first record':>20} {'first commit':>20} {'whole copy':>20} {'peak RSS MiB':>12}")
    for m, s in cs["modes"].items():
        if s["runs"]:
            print(f"  {m:<22} {rng(s['first_record_s']):>20} {rng(s['first_commit_s']):>20}"
                  f" {rng(s['total_seconds'], '{:.1f}'):>20} {fmt(s['peak_rss_mib'], f='{:.0f}'):>12}")
mm2 = {}
for m in ("mm2", "mm2+tuned"):
    work = env("BENCH_MM2_DIR", "")
    props, eff = os.path.join(work, "mm2-properties." + m), os.path.join(work, "mm2-effective." + m)
    if work and os.path.exists(props):
        mm2[m] = {"properties": [l.strip() for l in open(props) if l.strip()],
                  "logged": [l.strip() for l in open(eff)] if os.path.exists(eff) else []}
        print(f"\n{m}: " + "; ".join(p for p in mm2[m]["properties"] if "bootstrap" not in p))
        for line in mm2[m]["logged"]:
            print(f"  logged by MM2: {line}")
failures = [r for r in runs if r["status"] != "ok"]
if failures:
    print(f"\nFAILED runs: {len(failures)} (left out): " + "; ".join(
        f"{r['mode']} r{r['round']} {r['note']}" for r in failures)[:600])
result = {
    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "kind": "steady",
    "params": {"key_bytes": key_size, "rounds": int(env("BENCH_ROUNDS", "0")), "modes": modes,
               "librdkafka": env("BENCH_LIBRDKAFKA", ""), "kafka": env("BENCH_KAFKA", ""),
               "java": env("BENCH_JAVA", ""), "mm2": mm2, "memory": env("BENCH_MEMORY", ""), "nproc": os.cpu_count(),
               "loadavg_at_end": os.getloadavg()[0]},
    "runs": runs,
    "summary": summary,
    "ok": not failures,
}
with open(out_path + ".tmp", "w") as f:
    json.dump(result, f, indent=1)
    f.write("\n")
os.replace(out_path + ".tmp", out_path)
print(f"results: {out_path}")
sys.exit(0 if result["ok"] else 1)
