#!/usr/bin/env python3
"""A large trace into its events DataFrame with `import waitlab`, next to pandas reading the
same events from a CSV table (bench/README.md §12).

    /usr/bin/python3 bench/python_events.py BUILD [--ranks 1024] [--iterations 300] [--trace PATH] [--no-csv]

Simulates bench/heat65k.yaml (heat1d, non-blocking, 1 kHz noise) at RANKS x ITERATIONS with
BUILD/app/waitlab into a temporary directory (or takes an existing trace: --trace), then in
this process, timed one after the other:
  1. waitlab.read(trace): the C++ reader (the trace held in C++),
  2. .events: the columns from C++ and the DataFrame of them,
and prints seconds, events per second, the DataFrame's bytes per event (memory_usage, deep)
and the growth of the resident set to its peak during the step, per event. Then (unless --no-csv) it writes the same
DataFrame as CSV (untimed: the table a trace-to-CSV exporter would give) and times
pandas.read_csv of it with the same dtypes (categories for the names and kinds).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024  # kB
    raise RuntimeError(field)


def memory_of(f):
    """f()'s result, and the growth of the resident set from just before it to its peak
    during it (VmHWM, reset to VmRSS by writing 5 to /proc/self/clear_refs), as
    bench/trace_io_throughput.cpp measures it."""
    with open("/proc/self/clear_refs", "w") as c:
        c.write("5")
    before = status_bytes("VmRSS")
    out = f()
    return out, status_bytes("VmHWM") - before


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def simulate(build, ranks, iterations, out):
    cmd = [os.path.join(build, "app", "waitlab"), "run", os.path.join(HERE, "heat65k.yaml"), "--out", out,
           "--no-progress", "--set", f"workload.ranks={ranks}", "--set", f"workload.iterations={iterations}"]
    _, s = timed(lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL))
    print(f"simulated {ranks} ranks x {iterations} iterations in {s:.1f} s")
    os.sync()  # the trace's pages written back before the timed steps, not during them
    return os.path.join(out, "trace.wlt")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--read-csv":
        return read_csv(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", help="the build directory (holds app/waitlab and python/waitlab)")
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--trace", help="an existing trace instead of a simulation")
    ap.add_argument("--no-csv", action="store_true", help="skip the CSV comparison (a very large trace)")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.abspath(args.build), "python"))
    import pandas as pd
    import waitlab

    with tempfile.TemporaryDirectory(prefix="wl-pybench-") as tmp:
        path = args.trace or simulate(args.build, args.ranks, args.iterations, os.path.join(tmp, "run"))
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        (trace, read_s), read_peak = memory_of(lambda: timed(lambda: waitlab.read(path)))
        (events, frame_s), frame_peak = memory_of(lambda: timed(lambda: trace.events))
        n = len(events)
        frame_bytes = events.memory_usage(deep=True).sum()
        print(f"trace: {path} ({size / 1e6:.1f} MB), {n:,} events, {len(trace.ranks)} locations")
        print("| step | s | M events/s | DataFrame B/event | peak memory growth B/event |")
        print("| --- | ---: | ---: | ---: | ---: |")
        print(f"| waitlab.read (C++ reader) | {read_s:.2f} | {n / read_s / 1e6:.1f} | – | {read_peak / n:.1f} |")
        print(f"| .events (columns + DataFrame) | {frame_s:.2f} | {n / frame_s / 1e6:.1f} | {frame_bytes / n:.1f} "
              f"| {frame_peak / n:.1f} |")
        total = read_s + frame_s
        print(f"| trace → events DataFrame | {total:.2f} | {n / total / 1e6:.1f} | {frame_bytes / n:.1f} "
              f"| {(read_peak + frame_peak) / n:.1f} |")
        if args.no_csv:
            return
        csv = os.path.join(tmp, "events.csv")
        _, write_s = timed(lambda: events.to_csv(csv, index=False))
        dtypes = json.dumps({c: str(t) for c, t in events.dtypes.items()})
        del trace, events
        # In a process of its own, so that its peak resident set is its own.
        out = subprocess.run([sys.executable, __file__, "--read-csv", csv, dtypes], check=True,
                             capture_output=True, text=True).stdout.split()
        rows, csv_s, frame_bytes, growth = int(out[0]), float(out[1]), float(out[2]), float(out[3])
        assert rows == n, (rows, n)
        print(f"| pandas.read_csv of its CSV ({os.path.getsize(csv) / 1e6:.1f} MB, written in {write_s:.1f} s) "
              f"| {csv_s:.2f} | {n / csv_s / 1e6:.2f} | {frame_bytes / n:.1f} | {growth / n:.1f} |")


def read_csv(csv, dtypes):
    import pandas as pd
    (back, s), peak = memory_of(lambda: timed(lambda: pd.read_csv(csv, dtype=json.loads(dtypes))))
    print(len(back), s, back.memory_usage(deep=True).sum(), peak)


if __name__ == "__main__":
    main()
