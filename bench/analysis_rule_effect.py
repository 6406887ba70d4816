#!/usr/bin/env python3
# The measured effect of a change to an analysis's rules: every shipped scenario (scenarios/*.yaml)
# and the three real Score-P traces (tests/data/scorep) analysed by two waitlab binaries — the one
# before the change and the one after — on the same traces, and for each the figures of
# summary.json that moved: the delay costs (totals, per kind, unattributed, the largest change of
# one cell of delay.csv) and the critical path (length, rank changes).
#
# Usage: bench/analysis_rule_effect.py BEFORE_WAITLAB AFTER_WAITLAB WORK_DIR [--analyses delay,critpath]
# The scenarios are simulated once, by AFTER_WAITLAB (simulation does not depend on the analyses).
import argparse
import csv
import json
import pathlib
import subprocess
import sys

SOURCE = pathlib.Path(__file__).resolve().parent.parent


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(map(str, cmd))}\n{r.stderr}")


def cells(path):
    out = {}
    if not path.exists():
        return out
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["kind"], row["call_path"], row["rank"])
            out[key] = (float(row["short_term_s"]), float(row["long_term_s"]))
    return out


def figures(d):
    s = json.loads((d / "summary.json").read_text())["analyses"]
    f = {}
    if s.get("delay"):
        dl = s["delay"]
        for k in ("synchronisation_points", "waiting_s", "short_term_s", "long_term_s", "unattributed_s"):
            f["delay." + k] = dl[k]
        for kind, v in dl["by_kind"].items():
            f[f"delay.{kind}.short"] = v["short_term_s"]
            f[f"delay.{kind}.long"] = v["long_term_s"]
    if s.get("critpath"):
        f["critpath.length_s"] = s["critpath"]["length_s"]
        f["critpath.rank_changes"] = s["critpath"]["rank_changes"]
    return f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("work")
    ap.add_argument("--analyses", default="delay,critpath")
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    traces = []
    for yaml in sorted((SOURCE / "scenarios").glob("*.yaml")):
        out = work / "run" / yaml.stem
        if not (out / "trace.wlt").exists():
            run([a.after, "run", str(yaml), "--no-progress", "--set", "outputs.trace=true", "--set",
                 "outputs.analyses=[]", "--out", str(out)])
        traces.append((yaml.stem, out / "trace.wlt"))
    for name in ("ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"):
        traces.append((name, SOURCE / "tests/data/scorep" / name / "traces.otf2"))
    for name, trace in traces:
        res = {}
        for side, binary in (("before", a.before), ("after", a.after)):
            d = work / side / name
            run([binary, "analyze", str(trace), "-a", a.analyses, "--out", str(d)])
            res[side] = (figures(d), cells(d / "delay.csv"))
        (fb, cb), (fa, ca) = res["before"], res["after"]
        moved = [(k, fb.get(k), fa.get(k)) for k in sorted(set(fb) | set(fa)) if fb.get(k) != fa.get(k)]
        worst = max((max(abs(ca.get(k, (0, 0))[i] - cb.get(k, (0, 0))[i]) for i in (0, 1)), k)
                    for k in set(ca) | set(cb)) if (ca or cb) else (0.0, None)
        waiting = fa.get("delay.waiting_s") or 0
        print(f"{name}: {len(moved)} figure(s) moved; largest cell change {worst[0]:.6g} s"
              + (f" ({worst[0] / waiting:.3%} of the waiting) at {worst[1]}" if worst[1] and waiting else ""))
        for k, b, v in moved:
            print(f"  {k}: {b} -> {v}")


if __name__ == "__main__":
    main()
