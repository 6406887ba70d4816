#!/usr/bin/env python3
"""How long and how much memory waitlab needs to refuse hostile inputs (issue 29, item 8).

Usage: bench/refusals.py [BUILD_DIR]   (default: build)

Each case is an input from the hostile corpora of issues 23 and 29 that once ran for minutes,
took gigabytes or crashed. Every one must now end with exit 2 and one line; this prints, per
case, the exit status, the wall time and the peak resident memory of waitlab and every process
it started (wait4's rusage: the child and its waited-for descendants), then the slowest and the
largest refusal. Figures, not assertions: bench/README.md §refusals has the measured table.
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(SOURCE, "build")
WAITLAB = os.path.join(BUILD, "app", "waitlab")

SMALL = "workload: {type: heat1d, ranks: 4, iterations: 5}\nplatform: {type: cluster, nodes: 4}\n"


def run(args, cwd):
    """Exit status, stderr, wall seconds, peak MiB of the command and its descendants."""
    start = time.monotonic()
    with open(os.path.join(cwd, "stderr"), "w+") as err:
        p = subprocess.Popen([WAITLAB] + args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err,
                             stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        err.seek(0)
        text = err.read()
    rc = os.waitstatus_to_exitcode(status)
    return rc, text, wall, usage.ru_maxrss / 1024.0


def cases(d):
    """(name, args) after preparing the inputs in d."""
    def write(name, *parts):
        # Large parts are (text, times): written a piece at a time, so that this process stays
        # small (a child's peak memory starts from its parent's at fork: exec keeps it).
        with open(os.path.join(d, name), "w") as f:
            for p in parts:
                text, times = p if isinstance(p, tuple) else (p, 1)
                for _ in range(times):
                    f.write(text)
        return name

    out = []
    write("small.yaml", SMALL)
    out.append(("memory estimate: ranks=2 x iterations=2^30",
                ["run", "small.yaml", "--set", "workload.ranks=2", "--set", "workload.iterations=1073741824",
                 "--out", "o"]))
    out.append(("sizes before allocation: 10^9 ranks",
                ["run", "small.yaml", "--set", "workload.ranks=1000000000", "--out", "o"]))
    # An alias bomb: 10 levels of 10 aliases each (10^10 nodes if expanded).
    bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 11):
        bomb += f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n"
    out.append(("YAML alias bomb (10^10 nodes expanded)", ["run", write("bomb.yaml", bomb), "--out", "o"]))
    write("long.yaml", "# ", ("x" * (1 << 20), 10), "\n" + SMALL)
    out.append(("10 MiB scenario", ["run", "long.yaml", "--out", "o"]))
    write("keys.yaml", SMALL, *(f"k{i}: {i}\n" for i in range(20000)))
    out.append(("20,000 unknown keys", ["run", "keys.yaml", "--out", "o"]))
    write("radical.xml", "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                         "<platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"h\" suffix=\"\" "
                         "radical=\"0-9999999\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/>\n</platform>\n")
    out.append(("XML cluster radical 0-9999999",
                ["run", write("radical.yaml", "platform: {type: xml, file: radical.xml}\n"
                                              "workload: {type: heat1d, ranks: 2, iterations: 2}\n"), "--out", "o"]))
    out.append(("hierarchical 16384 x 8 x 8",
                ["run", write("hier.yaml", "platform: {type: hierarchical, nodes: 16384, sockets: 8, cores: 8}\n"
                                           "workload: {type: heat1d, ranks: 1048576, iterations: 1000000}\n"),
                 "--out", "o"]))
    out.append(("did you mean: a 100,000-character option name",
                ["run", "small.yaml", "--set", "workload." + "q" * 100000 + "=1", "--out", "o"]))
    # A trace to analyse (made by the first run that succeeds).
    out.append(("--windows 10^9 on a small trace", ["analyze", "r/trace.wlt", "--windows", "1000000000",
                                                     "--out", "a"]))
    out.append(("did you mean: a 100,000-character region name",
                ["replay", "r/trace.wlt", "--compute-scale", "r" * 100000 + "=0.5", "--out", "o"]))
    # A time-independent trace with one 20 MiB line (the limit is 16 MiB).
    os.makedirs(os.path.join(d, "ti"), exist_ok=True)
    write("ti/rank0.txt", "0 init\n0 compute ", ("1" * (1 << 20), 20), "\n0 finalize\n")
    write("ti/rank1.txt", "1 init\n1 finalize\n")
    write("ti.ti", "ti/rank0.txt\nti/rank1.txt\n")
    out.append(("TI line of 20 MiB", ["replay", "ti.ti", "--platform", "cluster", "--set", "platform.nodes=2", "--out", "o"]))
    os.mkfifo(os.path.join(d, "fifo.txt"))
    write("fifo.ti", "fifo.txt\n")
    out.append(("a FIFO as a TI rank file", ["replay", "fifo.ti", "--platform", "cluster", "--set", "platform.nodes=2", "--out", "o"]))
    # A Paraver line of 80 MiB (the limit is 64 MiB).
    write("long.prv", "#Paraver (01/01/2026 at 00:00):1000_ns:1(2):1:2(1:1,1:1),0\n"
                      "1:1:1:1:1:0:", ("9" * (1 << 20), 80), ":1\n")
    out.append(("Paraver line of 80 MiB", ["analyze", "long.prv", "--out", "a"]))
    # Faults SimGrid aborts on, caught in the simulation process's log.
    write("noroute.xml", "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                         "<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n"
                         "    <host id=\"h0\" speed=\"1Gf\"/>\n    <host id=\"h1\" speed=\"1Gf\"/>\n"
                         "  </zone>\n</platform>\n")
    out.append(("XML platform without a route",
                ["run", write("noroute.yaml", "platform: {type: xml, file: noroute.xml}\n"
                                              "workload: {type: heat1d, ranks: 2, iterations: 2}\n"), "--out", "o"]))
    out.append(("core latency 1e5 s (SimGrid's precision)",
                ["run", os.path.join(SOURCE, "scenarios", "heat1d.yaml"), "--set", "platform.core_latency=1e5s",
                 "--set", "workload.iterations=3", "--out", "o"]))
    out.append(("alltoall of 16 ranks x 1 GiB (collective buffers)",
                ["run", write("a2a.yaml", "platform: {type: cluster, nodes: 16}\n"
                                          "workload: {type: alltoall_loop, ranks: 16, iterations: 2, bytes: 1GiB}\n"),
                 "--out", "o"]))
    return out


def main():
    if not os.access(WAITLAB, os.X_OK):
        print(f"refusals: no {WAITLAB}: build first (scripts/build.sh)", file=sys.stderr)
        return 1
    rows = []
    with tempfile.TemporaryDirectory(prefix="waitlab-refusals.") as d:
        all_cases = cases(d)
        rc, err, _, _ = run(["run", "small.yaml", "--no-progress", "--out", "r"], d)
        if rc != 0:
            print(f"refusals: the trace for the analysis cases could not be made: {err}", file=sys.stderr)
            return 1
        for name, args in all_cases:
            rc, err, wall, peak = run(args, d)
            one = err.count("\n") == 1 and err.startswith("waitlab: error: ")
            rows.append((name, rc, one, wall, peak, err.strip()[:100]))
    print("| hostile input | exit | one line | wall s | peak MiB | the error, cut |")
    print("| --- | ---: | --- | ---: | ---: | --- |")
    for name, rc, one, wall, peak, text in rows:
        cut = text.replace("waitlab: error: ", "")[:70].replace("|", "/")
        print(f"| {name} | {rc} | {'yes' if one else 'NO'} | {wall:.2f} | {peak:.0f} | {cut} |")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"\n(each peak includes this script's own, {own:.0f} MiB, which a child starts from)")
    slowest = max(rows, key=lambda r: r[3])
    largest = max(rows, key=lambda r: r[4])
    print(f"slowest refusal: {slowest[0]}: {slowest[3]:.2f} s, {slowest[4]:.0f} MiB")
    print(f"largest refusal: {largest[0]}: {largest[3]:.2f} s, {largest[4]:.0f} MiB")
    bad = [r for r in rows if r[1] != 2 or not r[2]]
    for r in bad:
        print(f"NOT A CLEAN REFUSAL: {r[0]}: exit {r[1]}: {r[5]}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
