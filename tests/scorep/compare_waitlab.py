#!/usr/bin/env python3
"""Compare scalasca_reference.py with a waitlab analysis of the same trace.

Usage: compare_waitlab.py TRACE/traces.otf2 WAITLAB_OUT_DIR
  WAITLAB_OUT_DIR: the --out directory of `waitlab analyze TRACE --clock-correction none`
  (its summary.json and waitstates.csv are read).
Prints a Markdown table of totals and counts per pattern, then every (pattern, rank) whose
seconds differ by more than 1e-9 s.  Exit status 1 if anything differs.
"""
import csv
import json
import os
import subprocess
import sys
from collections import defaultdict


def main(trace, out_dir):
    here = os.path.dirname(os.path.abspath(__file__))
    ref = json.loads(subprocess.run([sys.executable, os.path.join(here, "scalasca_reference.py"), trace, "--per-rank"],
                                    check=True, capture_output=True, text=True).stdout)
    summary = json.load(open(os.path.join(out_dir, "summary.json")))
    wl = summary["analyses"]["waitstate"]["patterns"]
    per_rank = defaultdict(float)
    with open(os.path.join(out_dir, "waitstates.csv")) as f:
        for row in csv.DictReader(f):
            per_rank[(row["pattern"], int(row["rank"]))] += float(row["seconds"])
    differs = False
    print("| pattern | reference s | reference n | waitlab s | waitlab n |")
    print("|---|---:|---:|---:|---:|")
    for p, v in ref["patterns"].items():
        w = wl.get(p)
        ws, wn = ("—", "—") if w is None else ("%.9f" % w["total_s"], w["instances"])
        if w is not None and (abs(w["total_s"] - v["seconds"]) > 1e-9 or w["instances"] != v["count"]):
            differs = True
            p = "**%s**" % p
        print("| %s | %.9f | %d | %s | %s |" % (p, v["seconds"], v["count"], ws, wn))
    matching = summary["analyses"]["matching"]
    print("\nmessages: reference %d, waitlab %d" % (ref["messages"], matching["messages"]))
    coll = sum(ref["collective_clock_violations"].values())
    print("clock violations: reference p2p %d + collective %d (%s); waitlab %d (p2p + collective)" % (
        ref["clock_violations"], coll, ref["collective_clock_violations"],
        summary["clock_correction"]["violations_before"]))
    ranks = ref["ranks"]
    for p in ref["patterns"]:
        if p not in wl:
            continue
        for r in range(ranks):
            a = ref.get("per_rank_seconds", {}).get(p, [0.0] * ranks)[r]
            b = per_rank.get((p, r), 0.0)
            if abs(a - b) > 1e-9:
                differs = True
                print("  %s rank %d: reference %.9f s, waitlab %.9f s" % (p, r, a, b))
    return 1 if differs else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
