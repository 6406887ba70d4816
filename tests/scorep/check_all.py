#!/usr/bin/env python3
"""ctest scorep.scalasca_reference: waitlab's wait states on the real Score-P traces of
tests/data/scorep equal the independent Scalasca 2.6 reference (scalasca_reference.py), pattern
by pattern, in total seconds (1e-9 s), instances and per rank.

Usage: check_all.py WAITLAB DATA_DIR
"""
import os
import subprocess
import sys
import tempfile

TRACES = ["ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"]


def main(waitlab, data):
    here = os.path.dirname(os.path.abspath(__file__))
    failed = []
    with tempfile.TemporaryDirectory(prefix="waitlab-scorep.") as tmp:
        for name in TRACES:
            trace = os.path.join(data, name, "traces.otf2")
            out = os.path.join(tmp, name)
            # Scalasca analyses without a clock correction unless told (scout --time-correct).
            r = subprocess.run([waitlab, "analyze", trace, "--clock-correction", "none", "-a", "waitstate",
                                "--out", out], capture_output=True, text=True)
            if r.returncode != 0:
                failed.append(f"{name}: waitlab analyze exited {r.returncode}: {r.stderr.strip()}")
                continue
            c = subprocess.run([sys.executable, os.path.join(here, "compare_waitlab.py"), trace, out],
                               capture_output=True, text=True)
            print(f"## {name}\n\n{c.stdout}")
            if c.returncode != 0:
                failed.append(f"{name}: differs from the reference ({c.stderr.strip()})")
    for f in failed:
        print("FAIL " + f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
