#!/usr/bin/env python3
"""bench/run.sh's report: reads the runs' rows (TSV), prints the tables and the issue's targets,
writes the JSON results. Usage: report.py ROWS.tsv OUT.json (the run's settings in BENCH_* env)."""
import json
import os
import platform
import statistics
import sys
import time

rows_path, out_path = sys.argv[1], sys.argv[2]
env = os.environ.get
modes = env("BENCH_MODES", "").split()
key_size = int(env("BENCH_KEY_SIZE", "16"))
rounds = int(env("BENCH_ROUNDS", "1"))


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_gib():
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 1048576, 1)


machine = {
    "nproc": os.cpu_count(),
    "cpu": cpu_model(),
    "mem_gib": mem_gib(),
    "kernel": platform.release(),
    "librdkafka": env("BENCH_LIBRDKAFKA", ""),
    "kafka": env("BENCH_KAFKA", ""),
    "java": env("BENCH_JAVA", ""),
    "loadavg_at_end": os.getloadavg()[0],
}

runs = []
for line in open(rows_path):
    (size, parts, records, mode, rnd, secs, rss, user, sys_, status, note, inner, cpu_a,
     cpu_b) = line.rstrip("\n").split("\t")
    size, parts, records, s = int(size), int(parts), int(records), float(secs)
    data_bytes = records * (size + key_size)
    cpu = float(user) + float(sys_)
    runs.append({
        "value_bytes": size, "partitions": parts, "records": records, "data_bytes": data_bytes,
        "mode": mode, "round": int(rnd), "status": status, "note": note,
        "seconds": s,
        "records_per_s": records / s,
        "mb_per_s": data_bytes / s / 1e6,
        "peak_rss_mib": round(int(rss) / 1024, 1),
        "cpu_s": round(cpu, 2),
        "cpu_s_per_gb": cpu / (data_bytes / 1e9),
        "cpu_s_per_m_records": cpu / (records / 1e6),
        "inner_seconds": float(inner) if inner else None,
        "broker_a_cpu_s": float(cpu_a),
        "broker_b_cpu_s": float(cpu_b),
    })

combos = []
for r in runs:
    c = (r["value_bytes"], r["partitions"])
    if c not in combos:
        combos.append(c)


def label(m):
    return {"ceiling": "ceiling (raw copy)", "mm2": "MirrorMaker 2",
            "mm2+tuned": "MirrorMaker 2, tuned"}.get(m, m)


def mm2_settings(work):
    """MirrorMaker 2's properties per mode, and the values it logged for its producer and
    consumer (bench/run.sh's mm2_effective)."""
    out = {}
    for m in ("mm2", "mm2+tuned"):
        props, eff = os.path.join(work, "mm2-properties." + m), os.path.join(work, "mm2-effective." + m)
        if os.path.exists(props):
            out[m] = {"properties": [l.strip() for l in open(props) if l.strip()],
                      "logged": [l.strip() for l in open(eff)] if os.path.exists(eff) else []}
    return out


mm2 = mm2_settings(env("BENCH_MM2_DIR", "")) if env("BENCH_MM2_DIR") else {}


summary = {}
for c in combos:
    size, parts = c
    ok = lambda m: [r for r in runs if (r["value_bytes"], r["partitions"]) == c
                    and r["mode"] == m and r["status"] == "ok"]
    per = {}
    for m in modes:
        rs = ok(m)
        if not rs:
            per[m] = {"status": "no successful run"}
            continue
        med = statistics.median(r["seconds"] for r in rs)
        records, data_bytes = rs[0]["records"], rs[0]["data_bytes"]
        cpu = statistics.median(r["cpu_s"] for r in rs)
        per[m] = {
            "status": "ok", "runs": len(rs),
            "median_seconds": med,
            # spread: the slowest and fastest run against the median
            "spread": [round(min(r["seconds"] for r in rs) / med, 3),
                       round(max(r["seconds"] for r in rs) / med, 3)],
            "records_per_s": records / med,
            "mb_per_s": data_bytes / med / 1e6,
            "median_cpu_s": cpu,
            "cpu_s_per_gb": cpu / (data_bytes / 1e9),
            "cpu_s_per_m_records": cpu / (records / 1e6),
            "records_per_cpu_s": records / cpu if cpu else None,
            "max_peak_rss_mib": max(r["peak_rss_mib"] for r in rs),
            "median_brokers_cpu_s": statistics.median(r["broker_a_cpu_s"] + r["broker_b_cpu_s"] for r in rs),
        }
    for m, s in per.items():
        if s["status"] != "ok":
            continue
        for ref in ("ceiling", "mm2"):
            r = per.get(ref, {})
            if r.get("status") == "ok":
                s[f"ratio_to_{ref}"] = r["median_seconds"] / s["median_seconds"]
                if r["median_cpu_s"] and s["median_cpu_s"]:
                    # > 1: fewer CPU seconds per record than the reference
                    s[f"cpu_efficiency_vs_{ref}"] = r["median_cpu_s"] / s["median_cpu_s"]
    summary[f"{size}x{parts}"] = {"value_bytes": size, "partitions": parts, "modes": per}

# --- the targets, per size x partitions ---------------------------------------------
def get(per, m, k):
    s = per.get(m, {})
    return s.get(k) if s.get("status") == "ok" else None


targets = []
for key, cs in summary.items():
    per = cs["modes"]

    def add(name, value, goal, met, detail=""):
        if value is None:
            return
        targets.append({"combo": key, "target": name, "value": round(value, 3), "goal": goal,
                        "met": bool(met), "detail": detail})

    v = get(per, "at-least-once", "ratio_to_ceiling")
    add("at-least-once (group join, KIP-848 where offered) / ceiling", v, ">= 0.95",
        v is not None and v >= 0.95)
    v = get(per, "at-least-once+classic", "ratio_to_ceiling")
    add("at-least-once (classic group join) / ceiling", v, ">= 0.95", v is not None and v >= 0.95)
    for base in ("at-least-once+shard", "at-least-once", "none+shard", "none"):
        a, b = get(per, base, "median_seconds"), get(per, base + "+bare", "median_seconds")
        if a and b:
            add(f"origin header cost ({base})", a / b - 1, "<= 0.05", a / b - 1 <= 0.05,
                "time with header / time without - 1")
    a, e = get(per, "at-least-once", "median_seconds"), get(per, "exactly-once", "median_seconds")
    if a and e:
        add("exactly-once / at-least-once", a / e, ">= 0.95", a / e >= 0.95)
    c = get(per, "ceiling", "median_cpu_s")
    for m in modes:
        if m in ("ceiling", "mm2"):
            continue
        k = get(per, m, "median_cpu_s")
        if c and k:
            add(f"CPU per record {m} / ceiling", k / c, "<= 1.05", k / c <= 1.05)
    mm_cpu, mm_rss = get(per, "mm2", "median_cpu_s"), get(per, "mm2", "max_peak_rss_mib")
    for m in modes:
        if m in ("ceiling", "mm2"):
            continue
        k = get(per, m, "median_cpu_s")
        if mm_cpu and k:
            add(f"throughput per CPU s {m} / MM2", mm_cpu / k, ">= 3", mm_cpu / k >= 3)
        r = get(per, m, "max_peak_rss_mib")
        if mm_rss and r:
            add(f"peak RSS {m} / MM2", r / mm_rss, "< 1", r < mm_rss)

# --- print -------------------------------------------------------------------------------------
print()
print(f"kreplicate beside MirrorMaker 2 on Apache Kafka {machine['kafka']} (KRaft, one node per cluster,"
      f" loopback); {rounds} round(s), alternating")
hdr = (f"{'size':>6} {'parts':>5} {'mode':<24} {'round':>5} {'seconds':>8} {'records/s':>11} {'MB/s':>7}"
       f" {'RSS MiB':>8} {'CPU s':>6} {'brokers':>8}  status")
print(hdr)
print("-" * len(hdr))
for r in runs:
    extra = f" ({r['note']})" if r["note"] else ""
    print(f"{r['value_bytes']:>6} {r['partitions']:>5} {r['mode']:<24} {r['round']:>5} {r['seconds']:>8.2f}"
          f" {r['records_per_s']:>11,.0f} {r['mb_per_s']:>7.1f} {r['peak_rss_mib']:>8.1f} {r['cpu_s']:>6.1f}"
          f" {r['broker_a_cpu_s'] + r['broker_b_cpu_s']:>8.1f}  {r['status']}{extra}")
for key, cs in summary.items():
    first = next((r for r in runs if (r["value_bytes"], r["partitions"]) == (cs["value_bytes"], cs["partitions"])), None)
    print()
    print(f"medians, {first['records']:,} records x {cs['value_bytes']} B values ({key_size} B keys),"
          f" {cs['partitions']} partitions, {first['data_bytes'] / 1e6:,.0f} MB key+value:")
    h = (f"  {'mode':<24} {'s':>7} {'spread':>11} {'rec/s':>10} {'MB/s':>6} {'/ceil':>6} {'/MM2':>6}"
         f" {'CPU s':>6} {'CPU s/GB':>8} {'CPU s/M':>8} {'eff/MM2':>7} {'RSS MiB':>8} {'brokers':>7}")
    print(h)
    for m, s in cs["modes"].items():
        if s["status"] != "ok":
            print(f"  {m:<24} {s['status']}")
            continue
        f = lambda k, fmt="{:.2f}": fmt.format(s[k]) if s.get(k) is not None else "-"
        print(f"  {m:<24} {s['median_seconds']:>7.2f} {s['spread'][0]:>5.2f}-{s['spread'][1]:<5.2f}"
              f" {s['records_per_s']:>10,.0f} {s['mb_per_s']:>6.1f} {f('ratio_to_ceiling'):>6} {f('ratio_to_mm2'):>6}"
              f" {s['median_cpu_s']:>6.2f} {s['cpu_s_per_gb']:>8.2f} {s['cpu_s_per_m_records']:>8.2f}"
              f" {f('cpu_efficiency_vs_mm2', '{:.1f}'):>7} {s['max_peak_rss_mib']:>8.1f} {s['median_brokers_cpu_s']:>7.1f}")
print()
print("targets (issue 20):")
for t in targets:
    print(f"  [{'met' if t['met'] else 'NOT met':>7}] {t['combo']:>9} {t['target']}: {t['value']:.3f} (goal {t['goal']})")
print()
print(f"machine: {machine['nproc']} CPUs, {machine['cpu']}, {machine['mem_gib']} GiB, Linux {machine['kernel']},"
      f" librdkafka {machine['librdkafka']}, Kafka {machine['kafka']}, {machine['java']},"
      f" load avg {machine['loadavg_at_end']:.2f} at end")
print("seconds = wall time from the copier's start until the last record is readable on B (kreplicate and"
      " the ceiling: until they exit;\nMM2: until B's end offsets hold every record); spread = fastest and slowest"
      " run / median; MB = 10^6 B of key+value;\n/ceil, /MM2 = throughput against that median; CPU s = the"
      " copier's user+sys; eff/MM2 = MM2's CPU s / this mode's (records per CPU s\nagainst MM2's); RSS = peak"
      " (GNU time %M; MM2: the JVM's VmHWM); brokers = CPU s of Kafka A+B during the run")
for m, st in mm2.items():
    print(f"{label(m)}: " + "; ".join(p for p in st["properties"] if "bootstrap" not in p))
    for line in st["logged"]:
        print(f"  logged by MM2: {line}")
failures = [r for r in runs if r["status"] == "FAILED"]
if failures:
    print(f"FAILED runs: {len(failures)} (left out of the medians)")

result = {
    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "params": {"key_bytes": key_size, "headers": int(env("BENCH_HEADERS", "1")), "rounds": rounds,
               "modes": modes, "mm2_heap": env("BENCH_MM2_HEAP", ""), "mm2_props": env("BENCH_MM2_PROPS", ""),
               "ceiling_args": env("BENCH_CEILING_ARGS", ""), "kreplicate_extra": env("BENCH_KR_EXTRA", ""),
               "eos_extra": env("BENCH_EOS_EXTRA", ""), "mm2": mm2,
               "memory": env("BENCH_MEMORY", "")},
    "machine": machine,
    "runs": runs,
    "summary": summary,
    "targets": targets,
    "ok": not failures,
}
tmp = out_path + ".tmp"
with open(tmp, "w") as f:
    json.dump(result, f, indent=2)
    f.write("\n")
os.replace(tmp, out_path)
print(f"results: {out_path}")
sys.exit(0 if result["ok"] else 1)
