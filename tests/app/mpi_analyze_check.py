#!/usr/bin/env python3
"""`mpirun -np P waitlab-mpi analyze` against `waitlab analyze` (issue 32; ctest label mpi).

usage: mpi_analyze_check.py WAITLAB WAITLAB_MPI MPIEXEC WORKDIR CASE [SOURCE_DIR]

For a trace CASE names, the analysis by `waitlab analyze` and by waitlab-mpi on P = 1, 2, 3, 4
and 7 processes (`--allow-run-as-root --oversubscribe`) must give the same files, byte for byte
(host.json, the host's figures, apart), the same terminal summary (the output directory's name
apart) and exit 0. CASE `errors` checks the failures instead: each bad input gives, for every P,
the serial tool's one error line, printed once, exit code 2, and no output directory.
"""
import os
import shutil
import subprocess
import sys

PROCESSES = [1, 2, 3, 4, 7]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


def files_of(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            if rel != "host.json":
                with open(p, "rb") as f:
                    out[rel] = f.read()
    return out


def mpi(tools, np, args):
    waitlab_mpi, mpiexec = tools[1], tools[2]
    return run([mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(np), waitlab_mpi, "analyze"] + args)


def check_trace(tools, work, trace, extra):
    failures = []
    serial_dir = os.path.join(work, "serial")
    serial = run([tools[0], "analyze", trace, "--out", serial_dir] + extra)
    if serial.returncode != 0:
        return [f"waitlab analyze {trace} failed ({serial.returncode}): {serial.stderr}"]
    expected = files_of(serial_dir)
    if "summary.json" not in expected:
        return [f"waitlab analyze {trace} wrote no summary.json"]
    for np in PROCESSES:
        out_dir = os.path.join(work, f"np{np}")
        got = mpi(tools, np, [trace, "--out", out_dir] + extra)
        if got.returncode != 0:
            failures.append(f"-np {np}: exit {got.returncode}: {got.stderr}")
            continue
        files = files_of(out_dir)
        if sorted(files) != sorted(expected):
            failures.append(f"-np {np}: files {sorted(files)} != {sorted(expected)}")
        for name, data in expected.items():
            if files.get(name) != data:
                failures.append(f"-np {np}: {name} differs from waitlab analyze's")
        if got.stdout.replace(out_dir, "DIR") != serial.stdout.replace(serial_dir, "DIR"):
            failures.append(f"-np {np}: terminal summary differs:\n{got.stdout}\n--- serial:\n{serial.stdout}")
        print(f"-np {np}: {len(files)} files identical" if not failures else f"-np {np}: checked")
    return failures


def error_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("waitlab: error:")]


def check_errors(tools, work, source):
    """Each bad input: for every P, the serial tool's error line once, exit 2, nothing written."""
    heat = os.path.join(work, "run")
    made = run([tools[0], "run", os.path.join(source, "scenarios", "heat1d.yaml"), "--out", heat, "--no-progress"])
    if made.returncode != 0:
        return [f"waitlab run heat1d failed: {made.stderr}"]
    good = os.path.join(heat, "trace.wlt")
    data = bytearray(open(good, "rb").read())
    # One byte of the last rank's events (the file ends with the threads, run section and
    # trailer, a few hundred bytes): only the last process reads it.
    data[len(data) - 4096] ^= 0xFF
    damaged = os.path.join(work, "damaged.wlt")
    with open(damaged, "wb") as f:
        f.write(data)
    blocked = os.path.join(work, "blocked")
    with open(blocked, "w") as f:
        f.write("a file where the output directory would go\n")
    cases = [
        ("damaged .wlt", [damaged, "--analyses", "waitstate"]),
        ("missing trace", [os.path.join(work, "nosuch.wlt")]),
        ("unknown analysis", [good, "--analyses", "waitstat"]),
        ("output blocked by a file", [good, "--out", blocked, "--analyses", "waitstate"]),
        ("a region no rank enters", [good, "-a", "timeresolved", "--region", "MPI_Alltoall"]),
        ("more iterations than the workload has", [good, "-a", "timeresolved", "--iterations", "3-90000"]),
    ]
    failures = []
    for name, args in cases:
        out = [] if "--out" in args else ["--out", os.path.join(work, "out-" + name.replace(" ", "-"))]
        serial = run([tools[0], "analyze"] + args + out)
        want = error_lines(serial.stderr)
        if serial.returncode != 2 or len(want) != 1:
            failures.append(f"{name}: waitlab analyze gave {serial.returncode}, {serial.stderr!r}")
            continue
        for np in PROCESSES:
            got = mpi(tools, np, args + out)
            lines = error_lines(got.stderr)
            if got.returncode != 2 or lines != want:
                failures.append(f"{name}, -np {np}: exit {got.returncode}, error lines {lines}, expected {want}")
            if out and os.path.exists(out[1]):
                failures.append(f"{name}, -np {np}: {out[1]} was written")
        with open(blocked) as f:
            if f.read() != "a file where the output directory would go\n":
                failures.append(f"{name}: the file in the way was changed")
        print(f"{name}: {want[0]}")
    return failures


def main():
    waitlab, waitlab_mpi, mpiexec, work, case = sys.argv[1:6]
    source = sys.argv[6] if len(sys.argv) > 6 else os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    tools = (waitlab, waitlab_mpi, mpiexec)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = os.path.join(source, "tests", "data")
    extra = os.environ.get("WAITLAB_MPI_CHECK_ARGS", "").split()
    if case == "errors":
        failures = check_errors(tools, work, source)
    elif case == "simulated":
        made = run([waitlab, "run", os.path.join(source, "scenarios", "heat1d.yaml"), "--out",
                    os.path.join(work, "run"), "--no-progress"])
        failures = [f"waitlab run failed: {made.stderr}"] if made.returncode else check_trace(
            tools, work, os.path.join(work, "run", "trace.wlt"), extra)
    elif case == "cuts":  # a region's instances on a measured trace, a workload's iterations on a run
        made = run([waitlab, "run", os.path.join(source, "scenarios", "heat1d.yaml"), "--out",
                    os.path.join(work, "run"), "--no-progress"])
        trace = os.path.join(data, "scorep", "npb-mg.W.16", "traces.otf2")
        failures = [f"waitlab run failed: {made.stderr}"] if made.returncode else (
            check_trace(tools, os.path.join(work, "region"), trace, ["-a", "timeresolved", "--region", "MPI_Allreduce"]) +
            check_trace(tools, os.path.join(work, "iterations"), os.path.join(work, "run", "trace.wlt"),
                        ["-a", "timeresolved", "--iterations", "2-4", "--windows", "7"]))
    elif case == "replayed-ti":
        made = run([waitlab, "replay", os.path.join(data, "ti", "smpi_calls.ti"), "--out",
                    os.path.join(work, "replay"), "--no-progress"])
        failures = [f"waitlab replay failed: {made.stderr}"] if made.returncode else check_trace(
            tools, work, os.path.join(work, "replay", "trace.wlt"), extra)
    else:
        traces = {
            "scorep-npb-is": os.path.join(data, "scorep", "npb-is.W.16", "traces.otf2"),
            "scorep-ping-pong": os.path.join(data, "scorep", "ping-pong-otf2", "traces.otf2"),
            "extrae-epoch-2": os.path.join(data, "extrae", "epoch_2proc.prv.gz"),
            "extrae-omp2": os.path.join(data, "extrae", "omp2.prv.gz"),
            "fixture-d": os.path.join(data, "fixture_d.prv"),
        }
        failures = check_trace(tools, work, traces[case], extra)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
