#!/usr/bin/env python3
"""Byte-for-byte comparison of waitlab's outputs between two binaries (issue 31: a pure refactor).

  compare_outputs.py produce WAITLAB OUT_DIR     run every case with WAITLAB into OUT_DIR/<case>/
  compare_outputs.py compare DIR_A DIR_B         compare two such trees; exit 1 on any difference
  compare_outputs.py selfcheck WAITLAB           produce twice with one binary and compare
  compare_outputs.py WAITLAB_BEFORE WAITLAB_AFTER   produce with both (in a temp dir), compare
Options: -j N (cases at once, default 2), --only SUBSTRING (cases whose name contains it),
--keep (keep the temp dir of selfcheck / before-after).

Cases: every scenarios/*.yaml (`run` as written and with every analysis, then the trace steps on
its trace.wlt, plus `replay --scenario`), every scenario of its subfolders (teaching, validation,
whatif, counterfactual: `run` with every analysis and its trace, `analyze` and `convert` of that
trace to Paraver and OTF2), and every test trace of tests/data (Extrae .prv.gz,
Score-P OTF2, TI, plain .prv). Trace steps: analyze, replay (default platform), convert to .wlt,
.prv, .ti and an OTF2 archive, then the .prv, .ti and OTF2 back to .wlt. Inputs are copied into
<case>/input/ and every command runs in <case>/ with relative paths. <case>/steps.txt records each
command and exit code, <case>/<step>.stderr the message of a failing one: both are compared.

Not compared (host-dependent, docs/cli.md "Host-dependent outputs"): host.json, run.log, and
this script's terminal.log (the commands' terminal output: host seconds) and tree.json (wall
times). report.html is compared: it is made from summary.json, the CSVs and the PNGs only (it
reads no host.json). `replay` records its trace's absolute path (summary.json workload.options
.trace, shown in report.html), so a file that differs is compared again with each tree's own
absolute root replaced by <ROOT>; such files are counted as "equal after <ROOT>".
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IGNORED = {"host.json", "run.log", "terminal.log"}
# Extra --set overrides for scenarios slower than ~20 s. Measured full size on 2 cores
# (/tmp/waitlab-before, 7d40e10): the slowest `run` is demo (4.0 s), so none is needed.
REDUCE = {}
TIMEOUT = 900


def trace_steps(t, scenario=None):
    """(step, args) for a trace at relative path t."""
    steps = [("analyze", ["analyze", t, "--out", "analyze"]),
             ("replay", ["replay", t, "--out", "replay", "--no-progress"])]
    if scenario:
        steps.append(("replay_scenario", ["replay", t, "--scenario", scenario,
                                          "--out", "replay_scenario", "--no-progress"]))
    steps += [("convert_wlt", ["convert", t, "convert/trace.wlt"]),
              ("convert_prv", ["convert", t, "convert/trace.prv"]),
              ("convert_ti", ["convert", t, "convert/trace.ti"]),
              ("convert_otf2", ["convert", t, "convert/otf2"]),
              ("back_from_prv", ["convert", "convert/trace.prv", "back/from_prv.wlt"]),
              ("back_from_ti", ["convert", "convert/trace.ti", "back/from_ti.wlt"]),
              ("back_from_otf2", ["convert", "convert/otf2/traces.otf2", "back/from_otf2.wlt"])]
    return steps


def cases():
    """name -> (inputs [(source path, path under <case>/input)], steps); sorted by name."""
    out = {}
    sdir = os.path.join(REPO, "scenarios")
    for f in sorted(os.listdir(sdir)):
        if not f.endswith(".yaml"):
            continue
        n, y = f[:-5], "input/" + f
        sets = [a for kv in REDUCE.get(n, []) for a in ("--set", kv)]
        steps = [("run", ["run", y, "--out", "run", "--no-progress"] + sets),
                 ("run_analyses", ["run", y, "--out", "run_analyses", "--no-progress", "--set",
                                   "outputs.analyses=all", "--set", "outputs.trace=false"] + sets)]
        out["scenario-" + n] = ([(os.path.join(sdir, f), f)], steps + trace_steps("run/trace.wlt", y))
    # The scenarios of the subfolders (teaching, validation, what-if, counterfactual): run with
    # every analysis and its trace, then the trace analysed and converted to Paraver and OTF2.
    for sub in sorted(os.listdir(sdir)):
        if not os.path.isdir(os.path.join(sdir, sub)):
            continue
        for f in sorted(os.listdir(os.path.join(sdir, sub))):
            if not f.endswith(".yaml"):
                continue
            n, y = f[:-5], "input/" + f
            sets = [a for kv in REDUCE.get(sub + "/" + n, []) for a in ("--set", kv)]
            steps = [("run_analyses", ["run", y, "--out", "run", "--no-progress", "--set", "outputs.analyses=all",
                                       "--set", "outputs.trace=true"] + sets),
                     ("analyze", ["analyze", "run/trace.wlt", "--out", "analyze"]),
                     ("convert_prv", ["convert", "run/trace.wlt", "convert/trace.prv"]),
                     ("convert_otf2", ["convert", "run/trace.wlt", "convert/otf2"])]
            out["scenario-%s-%s" % (sub, n)] = ([(os.path.join(sdir, sub, f), f)], steps)
    data = os.path.join(REPO, "tests", "data")
    for kind, ends in (("extrae", ".prv.gz"), ("ti", ".ti"), (".", ".prv")):
        d = os.path.join(data, kind)
        for f in sorted(os.listdir(d)):
            if not f.endswith(ends):
                continue
            stem = f[:-len(ends)]
            sib = [g for g in sorted(os.listdir(d)) if g == f or g == stem + "_files"
                   or g in (stem + ".pcf", stem + ".row")]
            name = "trace-%s-%s" % ("prv" if kind == "." else kind, stem)
            out[name] = ([(os.path.join(d, g), g) for g in sib], trace_steps("input/" + f))
    d = os.path.join(data, "scorep")
    for exp in sorted(os.listdir(d)):
        if os.path.isfile(os.path.join(d, exp, "traces.otf2")):
            out["trace-scorep-" + exp] = ([(os.path.join(d, exp), exp)],
                                          trace_steps("input/%s/traces.otf2" % exp))
    return dict(sorted(out.items()))


def copy_in(src, dst):
    """Copy a file or tree with fresh permissions (the Score-P archives are read-only)."""
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
        for g in sorted(os.listdir(src)):
            copy_in(os.path.join(src, g), os.path.join(dst, g))
    else:
        shutil.copyfile(src, dst)


def run_case(binary, root, name, case):
    inputs, steps = case
    cdir = os.path.join(root, name)
    os.makedirs(os.path.join(cdir, "input"))
    for src, rel in inputs:
        copy_in(src, os.path.join(cdir, "input", rel))
    t0, record, failed = time.monotonic(), [], 0
    with open(os.path.join(cdir, "terminal.log"), "w") as log:
        for step, args in steps:
            log.write("$ waitlab %s\n" % " ".join(args))
            log.flush()
            try:
                p = subprocess.run([binary] + args, cwd=cdir, stdin=subprocess.DEVNULL,
                                   capture_output=True, timeout=TIMEOUT)
                rc, err = p.returncode, p.stderr
                log.write(p.stdout.decode(errors="replace") + err.decode(errors="replace"))
            except subprocess.TimeoutExpired:
                rc, err = "timeout", b"timed out after %d s\n" % TIMEOUT
            record.append("%s\texit=%s\twaitlab %s\n" % (step, rc, " ".join(args)))
            if rc != 0:
                failed += 1
                with open(os.path.join(cdir, step + ".stderr"), "wb") as f:
                    f.write(err)
    with open(os.path.join(cdir, "steps.txt"), "w") as f:
        f.writelines(record)
    return name, time.monotonic() - t0, len(steps), failed


def produce(binary, root, jobs, only):
    binary, root = os.path.abspath(binary), os.path.abspath(root)
    if os.path.exists(root) and os.listdir(root):
        sys.exit("error: %s exists and is not empty" % root)
    os.makedirs(root, exist_ok=True)
    todo = {n: c for n, c in cases().items() if only in n}
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        results = list(ex.map(lambda n: run_case(binary, root, n, todo[n]), todo))
    wall = time.monotonic() - t0
    for name, secs, nsteps, failed in results:
        print("%-36s %7.1f s  %2d steps%s" % (name, secs, nsteps,
                                              "  %d failed (recorded)" % failed if failed else ""))
    nfiles = sum(len(files_of(os.path.join(root, n))) for n in todo)
    print("produced %d cases, %d compared files, in %.1f s wall (-j %d): %s"
          % (len(todo), nfiles, wall, jobs, root))
    with open(os.path.join(root, "tree.json"), "w") as f:
        json.dump({"binary": binary, "root": root, "realroot": os.path.realpath(root),
                   "wall_seconds": wall, "cases": {r[0]: r[1] for r in results}}, f, indent=1)
    return root


def files_of(d):
    """Relative paths of the compared files under d, sorted."""
    out = []
    for dp, dns, fns in os.walk(d):
        dns.sort()
        out += [os.path.relpath(os.path.join(dp, f), d) for f in fns if f not in IGNORED]
    return sorted(out)


def roots_of(d):
    d = os.path.abspath(d)
    roots = {d, os.path.realpath(d)}
    try:
        with open(os.path.join(d, "tree.json")) as f:
            t = json.load(f)
        roots |= {t["root"], t["realroot"]}
    except (OSError, ValueError, KeyError):
        pass
    return sorted(roots, key=len, reverse=True)


def normalise(data, roots):
    for r in roots:
        data = data.replace(r.encode(), b"<ROOT>")
    return data


def first_difference(a, b):
    if b"\0" not in a[:65536] + b[:65536]:
        la, lb = a.split(b"\n"), b.split(b"\n")
        for i, (x, y) in enumerate(zip(la, lb)):
            if x != y:
                return "line %d: %r != %r" % (i + 1, x[:120].decode(errors="replace"),
                                               y[:120].decode(errors="replace"))
        return "line %d: one file ends (%d vs %d lines)" % (min(len(la), len(lb)) + 1, len(la), len(lb))
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return "byte offset %d (sizes %d vs %d)" % (n, len(a), len(b))


def compare(da, db):
    ra, rb = roots_of(da), roots_of(db)
    names = sorted(set(os.listdir(da)) | set(os.listdir(db)))
    names = [n for n in names if os.path.isdir(os.path.join(da, n)) or os.path.isdir(os.path.join(db, n))]
    rows, details, tot, rooted = [], [], [0] * 5, {}
    for n in names:
        ca, cb = os.path.join(da, n), os.path.join(db, n)
        fa = files_of(ca) if os.path.isdir(ca) else []
        fb = files_of(cb) if os.path.isdir(cb) else []
        both, row = sorted(set(fa) & set(fb)), [0] * 5  # compared, identical, after <ROOT>, differ, missing
        for m in sorted(set(fa) ^ set(fb)):
            details.append("%s/%s: only in %s" % (n, m, da if m in fa else db))
            row[4] += 1
        for rel in both:
            row[0] += 1
            with open(os.path.join(ca, rel), "rb") as f:
                a = f.read()
            with open(os.path.join(cb, rel), "rb") as f:
                b = f.read()
            if a == b:
                row[1] += 1
                continue
            a, b = normalise(a, ra), normalise(b, rb)
            if a == b:
                row[2] += 1
                rooted[rel] = rooted.get(rel, 0) + 1
            else:
                row[3] += 1
                details.append("%s/%s: %s" % (n, rel, first_difference(a, b)))
        rows.append((n, row))
        tot = [x + y for x, y in zip(tot, row)]
    head = ("case", "compared", "identical", "eq.<ROOT>", "differing", "missing")
    print("%-36s %9s %9s %9s %9s %8s" % head)
    for n, r in rows + [("TOTAL (%d cases)" % len(rows), tot)]:
        print("%-36s %9d %9d %9d %9d %8d" % ((n,) + tuple(r)))
    if rooted:
        print("equal only after <ROOT>: " + ", ".join("%s (%d)" % kv for kv in sorted(rooted.items())))
    for d in details:
        print("  " + d)
    bad = tot[3] + tot[4]
    print("RESULT: %s" % ("IDENTICAL" if not bad and rows else "DIFFERENT (%d files)" % bad))
    return 1 if bad or not rows else 0


def twice(bin_a, bin_b, jobs, only, keep, label):
    tmp = tempfile.mkdtemp(prefix="waitlab-%s-" % label)
    try:
        t0 = time.monotonic()
        a = produce(bin_a, os.path.join(tmp, "a"), jobs, only)
        b = produce(bin_b, os.path.join(tmp, "b"), jobs, only)
        rc = compare(a, b)
        print("%s: %.1f s wall in total, trees in %s%s" % (label, time.monotonic() - t0, tmp,
                                                          "" if keep else " (removed)"))
        return rc
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    jobs, only, keep, pos = 2, "", False, []
    it = iter(argv)
    for a in it:
        if a == "-j":
            jobs = int(next(it))
        elif a == "--only":
            only = next(it)
        elif a == "--keep":
            keep = True
        else:
            pos.append(a)
    if len(pos) == 3 and pos[0] == "produce":
        produce(pos[1], pos[2], jobs, only)
        return 0
    if len(pos) == 3 and pos[0] == "compare":
        return compare(pos[1], pos[2])
    if len(pos) == 2 and pos[0] == "selfcheck":
        return twice(pos[1], pos[1], jobs, only, keep, "selfcheck")
    if len(pos) == 2 and pos[0] not in ("produce", "compare", "selfcheck"):
        return twice(pos[0], pos[1], jobs, only, keep, "before-after")
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
