#!/usr/bin/env python3
"""Fault injection for every waitlab command that writes (issue 29, item 7).

For each command × fault, in a scratch directory of its own: the inputs and an output
directory holding the outputs of an earlier invocation plus a file of the user's are hashed;
the command runs under the fault; then

- its exit status is the one the fault calls for (0, 2, or the signal's 128 + N / death),
- an error is one line on standard error ("waitlab: error: ..." or "waitlab: interrupted ..."),
- the inputs are byte for byte as they were, and the user's file is there,
- the output directory is exactly as it was, or exactly the complete new result (what the
  same command gives without the fault) — never a mix; after SIGKILL, the next waitlab that
  writes there (the same command, run again) ends with the complete new result.

Deterministic: fixed scenarios and seeds; signals land at fixed steps of the commit
(WAITLAB_TEST_COMMIT_STOP) or before it starts; no timing decides an outcome. The faults that
need a small or read-only file system mount a tmpfs: as root only (CI runs as root); without
root they are reported as skipped. Prints the table (Markdown) and exits 1 if any case fails.

usage: run_faults.py WAITLAB [--table FILE]
"""
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

WAITLAB = os.path.abspath(sys.argv[1])
TABLE = sys.argv[sys.argv.index("--table") + 1] if "--table" in sys.argv else None
HANG_GUARD_S = 600  # wallclock-ok: a hang guard, far above any case's seconds

SMALL = """name: small
platform: {type: cluster, nodes: 4}
workload: {type: heat1d, ranks: 4, iterations: 3}
perturbations:
  - {type: delay, rank: 1, iteration: 1, duration: 2ms}
outputs: {analyses: [waitstate, delay]}
"""
USER_FILE = "notes.txt"


def tree(root):
    """{relative path: sha256 or '<dir>'} of everything under root (hidden entries included)."""
    out = {}
    if not os.path.exists(root):
        return None
    for d, dirs, files in os.walk(root):
        for x in dirs:
            out[os.path.relpath(os.path.join(d, x), root)] = "<dir>"
        for x in files:
            p = os.path.join(d, x)
            if os.path.islink(p):
                out[os.path.relpath(p, root)] = "->" + os.readlink(p)
                continue
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


# Host-dependent files (docs/cli.md "Host-dependent outputs"): compared by presence only.
HOST_DEPENDENT = ("host.json", "run.log")


def comparable(t):
    if t is None:
        return None
    return {k: ("<host>" if os.path.basename(k) in HOST_DEPENDENT else v) for k, v in t.items()}


def run(args, cwd, env=None, limit=None):
    def pre():
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
        if limit:
            resource.setrlimit(limit[0], (limit[1], limit[1]))
    e = dict(os.environ)
    e.pop("WAITLAB_MEMORY_CHECK", None)
    e["TMPDIR"] = os.path.join(cwd, "tmp")
    if env:
        e.update(env)
    p = subprocess.run([WAITLAB] + args, cwd=cwd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       preexec_fn=pre, timeout=HANG_GUARD_S)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


class Case:
    """One command: how to make its inputs and earlier outputs, and its argument list."""

    def __init__(self, name, prepare, args, out):
        self.name, self.prepare, self.args, self.out = name, prepare, args, out


def prep_run_dir(cwd, name="r", extra=()):
    with open(os.path.join(cwd, "small.yaml"), "w") as f:
        f.write(SMALL)
    rc, _, err = run(["run", "small.yaml", "--no-progress", "--out", name] + list(extra), cwd)
    assert rc == 0, err


def base(cwd):
    os.makedirs(os.path.join(cwd, "tmp"), exist_ok=True)
    prep_run_dir(cwd)


def with_old(cmd_args, out):
    """prepare(): the inputs, then the command once (seed 1) for the earlier outputs, and a user file."""
    def prepare(cwd):
        base(cwd)
        old = [a if a != "run.seed=2" else "run.seed=1" for a in cmd_args]
        rc, _, err = run(old, cwd)
        assert rc == 0, (old, err)
        with open(os.path.join(cwd, out, USER_FILE), "w") as f:
            f.write("the user's own notes\n")
    return prepare


def cases():
    c = []
    seed = ["--set", "run.seed=2"]
    c.append(Case("run", with_old(["run", "small.yaml", "--no-progress", "--out", "o"] + seed, "o"),
                  ["run", "small.yaml", "--no-progress", "--out", "o"] + seed, "o"))
    c.append(Case("replay", with_old(["replay", "r/trace.wlt", "--no-progress", "--out", "o"] + seed, "o"),
                  ["replay", "r/trace.wlt", "--no-progress", "--out", "o"] + seed, "o"))
    c.append(Case("analyze", with_old(["analyze", "r/trace.wlt", "--out", "o", "-a", "waitstate"], "o"),
                  ["analyze", "r/trace.wlt", "--out", "o", "-a", "waitstate,delay,critpath"], "o"))

    def prep_convert(cwd):
        base(cwd)
        os.makedirs(os.path.join(cwd, "o"))
        with open(os.path.join(cwd, "o", USER_FILE), "w") as f:
            f.write("the user's own notes\n")
        rc, _, err = run(["convert", "r/trace.wlt", "o/t.prv"], cwd)
        assert rc == 0, err
    c.append(Case("convert", prep_convert, ["convert", "r/trace.wlt", "o/t.prv"], "o"))
    c.append(Case("whatif", with_old(["whatif", "small.yaml", "-V", "{name: ideal, network: ideal}", "-o", "o"] + seed, "o"),
                  ["whatif", "small.yaml", "-V", "{name: ideal, network: ideal}", "-o", "o"] + seed, "o"))
    c.append(Case("sweep", with_old(["sweep", "small.yaml", "--grid", "workload.iterations=2,3", "--out", "o"] + seed, "o"),
                  ["sweep", "small.yaml", "--grid", "workload.iterations=2,3", "--out", "o"] + seed, "o"))
    c.append(Case("validate", with_old(["validate", "small.yaml", "--no-plot", "-o", "o"] + seed, "o"),
                  ["validate", "small.yaml", "--no-plot", "-o", "o"] + seed, "o"))
    c.append(Case("counterfactual", with_old(["validate", "--counterfactual", "small.yaml", "-o", "o"] + seed, "o"),
                  ["validate", "--counterfactual", "small.yaml", "-o", "o"] + seed, "o"))

    def prep_report(cwd):
        base(cwd)
        with open(os.path.join(cwd, "r", USER_FILE), "w") as f:
            f.write("the user's own notes\n")
        os.remove(os.path.join(cwd, "r", "report.html"))
    c.append(Case("report", prep_report, ["report", "r"], "r"))

    def prep_plot(cwd):
        os.makedirs(os.path.join(cwd, "tmp"), exist_ok=True)
        prep_run_dir(cwd, "r", ["--set", "outputs.analyses=[idlewave]"])
        with open(os.path.join(cwd, "r", USER_FILE), "w") as f:
            f.write("the user's own notes\n")
    c.append(Case("plot", prep_plot, ["plot", "r"], "r"))

    def prep_pop(cwd):
        base(cwd)
        rc, _, err = run(["run", "small.yaml", "--no-progress", "--out", "r2", "--set", "workload.ranks=2"], cwd)
        assert rc == 0, err
        rc, _, err = run(["pop", "r", "r2", "-o", "o"], cwd)
        assert rc == 0, err
        with open(os.path.join(cwd, "o", USER_FILE), "w") as f:
            f.write("the user's own notes\n")
    c.append(Case("pop", prep_pop, ["pop", "r2", "r", "-o", "o"], "o"))
    return c


def one_line(err):
    return err.endswith("\n") and err.count("\n") == 1


def mount_tmpfs(path, size_kib, readonly=False):
    os.makedirs(path, exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", path],
                      stderr=subprocess.DEVNULL).returncode != 0:
        return False
    return True


def umount(path):
    subprocess.run(["umount", "-l", path], stderr=subprocess.DEVNULL)


def du_kib(path):
    total = 0
    for d, _, files in os.walk(path):
        for x in files:
            total += (os.path.getsize(os.path.join(d, x)) + 4095) // 4096 * 4
    return total


FAULTS = ["enospc", "fsize", "as", "tmpdir", "readonly", "sigint@0", "sigterm@2", "sigkill@-1", "sigkill@1", "sigkill@3",
          "out=in"]


def check(case, fault, root, reference):
    """Runs one case; returns '' when every check holds, else what failed."""
    # Every run of a case in the same directory: outputs that name their inputs' paths compare.
    cwd = os.path.join(root, "w")
    shutil.rmtree(cwd, ignore_errors=True)
    os.makedirs(cwd)
    case.prepare(cwd)
    out = os.path.join(cwd, case.out)
    inputs_before = {k: v for k, v in (tree(cwd) or {}).items()
                     if not k.startswith(case.out + os.sep) and k != case.out and not k.startswith("tmp")}
    old = comparable(tree(out))
    args, env, limit, want = list(case.args), {}, None, None
    mounted = None
    if fault in ("enospc", "readonly"):
        if os.geteuid() != 0:
            return "skipped (needs root to mount a tmpfs)"
        saved = os.path.join(cwd, "saved-out")
        shutil.move(out, saved)
        # A full disk: room for the earlier outputs and one page more (tmpfs counts pages).
        size = du_kib(saved) + (4 if fault == "enospc" else 512)
        if not mount_tmpfs(out, size):
            shutil.move(saved, out)
            return "skipped (mount failed)"
        mounted = out
        for x in os.listdir(saved):
            s = os.path.join(saved, x)
            (shutil.copytree if os.path.isdir(s) else shutil.copy2)(s, os.path.join(out, x))
        shutil.rmtree(saved)
        if fault == "readonly":
            subprocess.run(["mount", "-o", "remount,ro", out], check=True)
        old = comparable(tree(out))
    elif fault == "fsize":
        limit = (resource.RLIMIT_FSIZE, 8 << 10)
    elif fault == "as":
        limit = (resource.RLIMIT_AS, 100 << 20)  # 100 MiB: a simulation needs more, a conversion less
    elif fault == "tmpdir":
        env["TMPDIR"] = os.path.join(cwd, "no-such-dir")
    elif fault.startswith("sig"):
        name, step = fault.split("@")
        sig = {"sigint": signal.SIGINT, "sigterm": signal.SIGTERM, "sigkill": signal.SIGKILL}[name]
        env["WAITLAB_TEST_COMMIT_STOP"] = f"{step}:{int(sig)}"
    elif fault == "out=in":
        # The output is an input (or holds one): refused, whatever the command.
        ins = {"run": "small.yaml", "replay": "r", "analyze": "r/trace.wlt", "convert": "r/trace.wlt",
               "whatif": "small.yaml", "sweep": "small.yaml", "validate": "small.yaml",
               "counterfactual": "small.yaml", "pop": "r"}
        if case.name in ("report", "plot"):
            return "n/a"  # they rewrite files in the directory they read
        target = ins[case.name]
        i = args.index("--out") if "--out" in args else args.index("-o") if "-o" in args else None
        if case.name == "convert":
            args[-1] = target
        else:
            args[i + 1] = target
        out = os.path.join(cwd, target)
        old = comparable(tree(out)) if os.path.isdir(out) else None
        want = 2
    try:
        rc, so, err = run(args, cwd, env, limit)
    finally:
        if mounted:
            pass
    problems = []
    new = comparable(tree(out)) if os.path.isdir(out) or not os.path.exists(out) else None
    def own(k):  # the commit's staging and trash directories: finished and removed by the next waitlab
        top = k.split(os.sep)[0]
        return top.startswith("." + case.out + ".waitlab-") or top.startswith(".waitlab-trash.")
    inputs_after = {k: v for k, v in (tree(cwd) or {}).items()
                    if not k.startswith(case.out + os.sep) and k != case.out and not k.startswith("tmp")
                    and not k.startswith("no-such-dir") and not (fault.startswith("sigkill") and own(k))}
    if inputs_after != inputs_before:
        changed = sorted(set(inputs_before.items()) ^ set(inputs_after.items()))[:3]
        problems.append(f"inputs changed: {changed}")
    if want is not None and rc != want:
        problems.append(f"exit {rc}, expected {want}")
    if rc not in (0,) and rc > 0 and not one_line(err):
        problems.append(f"not one line: {err[:200]!r}")
    if rc == 1:
        problems.append(f"exit 1 (internal failure): {err.strip()[:200]}")
    if rc < 0 and -rc != signal.SIGKILL:
        problems.append(f"died of signal {-rc}")
    if fault == "out=in":
        if new != old:
            problems.append("the input directory changed")
    else:
        if old is not None and USER_FILE in old and (new is None or new.get(USER_FILE) != old[USER_FILE]):
            problems.append("the user's file is gone or changed")
        ok = new == old or new == reference
        if fault.startswith("sigkill") and rc == -signal.SIGKILL:
            # Finished by the next waitlab that writes there.
            rc2, _, err2 = run(case.args, cwd)
            after = comparable(tree(out))
            if rc2 != 0 or after != reference:
                problems.append(f"after SIGKILL, the next run did not end with the new result (exit {rc2}: "
                                f"{err2.strip()[:150]})")
            left = [x for x in os.listdir(cwd) if "waitlab" in x]
            if left:
                problems.append(f"after SIGKILL and the next run, left behind: {left}")
            ok = True
        elif fault.startswith(("sigint", "sigterm")) and rc in (130, 143):
            said = "the outputs were complete and are in place" if new == reference else "unfinished outputs were discarded"
            if said not in err:
                problems.append(f"the message does not say what is in place: {err.strip()[:150]}")
        if not ok:
            extra = sorted(set((new or {}).items()) ^ set((old or {}).items()))[:4]
            problems.append(f"the output is neither the old nor the complete new result: {extra}")
    if mounted:
        umount(mounted)
    leftovers = [x for x in os.listdir(cwd) if "waitlab" in x]
    if leftovers and not fault.startswith("sigkill"):
        problems.append(f"left behind: {leftovers}")
    if problems:
        return "; ".join(problems)
    return f"ok ({rc})"


def main():
    root = tempfile.mkdtemp(prefix="waitlab-faults.")
    rows = []
    failed = 0
    try:
        for case in cases():
            # The complete new result: the command without a fault.
            cwd = os.path.join(root, "w")
            shutil.rmtree(cwd, ignore_errors=True)
            os.makedirs(cwd)
            case.prepare(cwd)
            rc, _, err = run(case.args, cwd)
            if rc != 0:
                print(f"{case.name}: the reference run failed: {err}", file=sys.stderr)
                return 1
            reference = comparable(tree(os.path.join(cwd, case.out)))
            row = [case.name]
            for fault in FAULTS:
                r = check(case, fault, root, reference)
                if not (r.startswith("ok") or r.startswith("skipped") or r.startswith("n/a")):
                    failed += 1
                    print(f"FAIL {case.name} × {fault}: {r}", file=sys.stderr)
                row.append(r if len(r) < 40 else "FAIL")
            rows.append(row)
            print(" | ".join(row), flush=True)
    finally:
        for sub in ("o", "r"):
            umount(os.path.join(root, "w", sub))
        shutil.rmtree(root, ignore_errors=True)
    table = "| command | " + " | ".join(FAULTS) + " |\n| --- |" + " --- |" * len(FAULTS) + "\n"
    for r in rows:
        table += "| " + " | ".join(r) + " |\n"
    print(table)
    if TABLE:
        with open(TABLE, "w") as f:
            f.write(table)
    print(f"run_faults: {len(rows)} commands × {len(FAULTS)} faults, {failed} failing", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
