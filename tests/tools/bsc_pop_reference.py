#!/usr/bin/env python3
# An independent oracle for the tests: BSC's POP definitions computed straight from the text of a
# Paraver trace (.prv or .prv.gz), without waitlab's reader (ALGORITHMS.md §6):
#   T = the header's end time; per thread, useful = time in state 1 (Running) outside every MPI call
#   (an event of type 50000001-50000005 with a value other than 0 opens a call, value 0 closes it);
#   every thread of every task is a unit. LB = mean U / max U, CommE = max U / T, PE = mean U / T.
# Also the PAPI_TOT_INS (42000050) and PAPI_TOT_CYC (42000059) values summed per thread, as
# written (all of them), and those that end a useful stretch as Paraver's "next event value"
# attributes them: the thread in state 1 outside MPI just before the event's time, and the
# event the first with counters at that time (Extrae writes MPI_Cart_create's Enter and Leave in
# the same nanosecond, both with counters: the burst before them gets the first's values).
# With FROM TO (integers in the trace's time unit), the metrics of the window [FROM, TO): T = TO −
# FROM, useful stretches clipped to it (a sample counts when the clipped stretch before it is
# useful) — waitlab's --time-range cut.
# Prints one JSON object. Usage: bsc_pop_reference.py TRACE.prv[.gz] [FROM TO]
import gzip
import json
import re
import sys


def main(path, window=None):
    opener = gzip.open if path.endswith(".gz") else open
    running, mpi, open_mpi, samples = {}, {}, {}, {}
    with opener(path, "rt") as f:
        head = f.readline()
        m = re.match(r"#Paraver \(.*?\):(\d+)(_ns|_us|_ms)?:", head)
        unit = {"_ns": 1e-9, "_us": 1e-6, "_ms": 1e-3, None: 1e-6}[m.group(2)]
        end = int(m.group(1))
        for line in f:
            if not line or line[0] not in "12":
                continue
            p = line.rstrip("\n").split(":")
            key = (int(p[3]), int(p[4]))
            if p[0] == "1":
                if int(p[7]) == 1:
                    running.setdefault(key, []).append((int(p[5]), int(p[6])))
                continue
            t = int(p[5])
            ins = cyc = None
            for i in range(6, len(p) - 1, 2):
                ty, v = int(p[i]), int(p[i + 1])
                if 50000001 <= ty <= 50000005:
                    if v != 0:
                        open_mpi[key] = t
                    elif key in open_mpi:
                        mpi.setdefault(key, []).append((open_mpi.pop(key), t))
                elif ty == 42000050:
                    ins = v
                elif ty == 42000059:
                    cyc = v
            if ins is not None or cyc is not None:
                samples.setdefault(key, []).append((t, ins or 0, cyc or 0))
    keys = sorted(set(running) | set(samples))
    useful, ins_all, cyc_all, ins_useful, cyc_useful = [], [], [], [], []
    for k in keys:
        # Useful stretches: Running minus MPI (both sorted, non-overlapping per thread).
        good = []
        calls = mpi.get(k, [])
        j = 0
        for a, b in running.get(k, []):
            while j < len(calls) and calls[j][1] <= a:
                j += 1
            x, q = a, j
            while q < len(calls) and calls[q][0] < b:
                if calls[q][0] > x:
                    good.append((x, calls[q][0]))
                x = max(x, calls[q][1])
                q += 1
            if x < b:
                good.append((x, b))
        if window:
            good = [(max(a, window[0]), min(b, window[1])) for a, b in good if min(b, window[1]) > max(a, window[0])]
        useful.append(sum(b - a for a, b in good) * unit)
        s = samples.get(k, [])
        ins_all.append(sum(v[1] for v in s))
        cyc_all.append(sum(v[2] for v in s))
        # A sample counts when the stretch just before it is useful.
        iu = cu = 0
        g = 0
        prev = None
        for t, i, c in s:
            first, prev = t != prev, t
            while g < len(good) and good[g][1] < t:
                g += 1
            if first and g < len(good) and good[g][0] < t <= good[g][1]:
                iu += i
                cu += c
        ins_useful.append(iu)
        cyc_useful.append(cu)
    T = (window[1] - window[0] if window else end) * unit
    n = len(useful)
    mx = max(useful) if useful else 0.0
    mean = sum(useful) / n if n else 0.0
    print(json.dumps({
        "units": n, "elapsed_s": T, "useful_s": useful,
        "load_balance": mean / mx if mx > 0 else 1.0,
        "communication_efficiency": mx / T if T > 0 else 0.0,
        "parallel_efficiency": mean / T if T > 0 else 0.0,
        "instructions": ins_all, "cycles": cyc_all,
        "useful_instructions": ins_useful, "useful_cycles": cyc_useful,
    }))


main(sys.argv[1], (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else None)
