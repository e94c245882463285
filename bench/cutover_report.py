#!/usr/bin/env python3
"""bench/cutover.sh's report. Per group-partition and tool: the records a consumer started on B
at the translated position re-reads (ids the group had already passed on A) and misses (ids at
or after the group's source position it never sees), by content: the ids in the keys, as
`load dump` read them from A and B. Usage: cutover_report.py WORK OUT.json RECORDS SIZE PARTITIONS
NGROUPS SEED INTERVAL"""
import json
import statistics
import sys

work, out = sys.argv[1], sys.argv[2]
records, size, partitions, ngroups, seed, interval = map(int, sys.argv[3:9])
src = json.load(open(f"{work}/a.json"))["partitions"]
tgt = {"mm2": json.load(open(f"{work}/b-mm2.json"))["partitions"],
       "kreplicate": json.load(open(f"{work}/b-kr.json"))["partitions"]}
topic_of = {"cut": "mm2", "cut.kr": "kreplicate"}
source_pos = {(r["group"], r["partition"]): r["offset"]
              for r in json.load(open(f"{work}/source-groups.json"))["rows"]}
translated = {(topic_of[r["topic"]], r["group"], r["partition"]): r
              for r in json.load(open(f"{work}/watch.json"))["rows"]}
# per source partition: id -> source offset
src_off = [{i: o for o, i in part} for part in src]

res = {"records": records, "value_bytes": size, "partitions": partitions, "groups": ngroups,
       "seed": seed, "interval_s": interval, "tools": {}}
ok = len(source_pos) == ngroups * partitions
for tool, parts in tgt.items():
    rows = []
    for (g, p), pos in sorted(source_pos.items()):
        t = translated.get((tool, g, p))
        if t is None:
            rows.append({"group": g, "partition": p, "source": pos, "translated": None})
            continue
        seen = [i for o, i in parts[p] if o >= t["offset"]]
        # read on A already: ids whose source offset is before the group's position
        reread = sum(1 for i in seen if src_off[p].get(i, -1) < pos)
        want = {i for o, i in src[p] if o >= pos}
        missed = len(want - set(seen))
        rows.append({"group": g, "partition": p, "source": pos, "translated": t["offset"],
                     "reread": reread, "missed": missed, "seconds": round(t["seconds"], 2)})
    done = [r for r in rows if r["translated"] is not None]
    secs = sorted(r["seconds"] for r in done)
    rr = sorted(r["reread"] for r in done)
    s = {
        "group_partitions": len(rows), "translated": len(done),
        "missed_total": sum(r["missed"] for r in done),
        "group_partitions_missing_records": sum(1 for r in done if r["missed"]),
        "reread_total": sum(rr), "group_partitions_rereading": sum(1 for r in rr if r),
        "reread_median": statistics.median(rr) if rr else None,
        "reread_max": rr[-1] if rr else None,
        "seconds_median": round(statistics.median(secs), 2) if secs else None,
        "seconds_max": round(secs[-1], 2) if secs else None,
        "rows": rows,
    }
    # kreplicate's promise: every group-partition translated, nothing missed, nothing re-read
    # (its copy here is complete and free of duplicates)
    if tool == "kreplicate" and (s["missed_total"] or s["reread_total"] or s["translated"] < len(rows)):
        ok = False
    res["tools"][tool] = s

# The one-shot `kreplicate groups --dry-run` against what --sync-groups committed.
try:
    g = json.load(open(f"{work}/groups.json"))
    diff = [r for r in g["partitions"]
            if r.get("target_position")
            != translated.get(("kreplicate", r["group"], r["partition"]), {}).get("offset")]
    res["kreplicate_groups_one_shot"] = {"rows": len(g["partitions"]),
                                         "differ_from_sync_groups": len(diff)}
except (OSError, ValueError, KeyError, TypeError) as e:
    res["kreplicate_groups_one_shot"] = {"error": str(e)}
res["ok"] = ok
with open(out, "w") as f:
    json.dump(res, f, indent=2)
    f.write("\n")

print()
print(f"cut-over: {records:,} records x {size} B over {partitions} partitions; {ngroups} groups"
      f" (seed {seed}); translation every {interval} s")
print(f"{'tool':<11} {'translated':>10} {'missed':>7} {'gp missing':>10} {'re-read':>8}"
      f" {'gp re-reading':>13} {'re-read median':>14} {'max':>6} {'s to B median':>13} {'max':>6}")
for tool, s in res["tools"].items():
    print(f"{tool:<11} {s['translated']:>5}/{s['group_partitions']:<4} {s['missed_total']:>7}"
          f" {s['group_partitions_missing_records']:>10} {s['reread_total']:>8}"
          f" {s['group_partitions_rereading']:>13} {s['reread_median']!s:>14} {s['reread_max']!s:>6}"
          f" {s['seconds_median']!s:>13} {s['seconds_max']!s:>6}")
print(f"kreplicate groups (one shot) against --sync-groups: {res['kreplicate_groups_one_shot']}")
print("missed / re-read: records, by content (ids in the keys), of a consumer started on B at the"
      " translated position, against the group's\nsource position; gp = group-partitions; s to B ="
      " seconds from the end of the commits on A until B first held the final position")
print(f"results: {out}")
sys.exit(0 if ok else 1)
