#!/usr/bin/env python3
"""Seconds per redraw of notebooks/teaching_idle_waves.ipynb at lecture scale (bench/README.md §13).

    /usr/bin/python3 bench/notebook_redraw.py BUILD [--ranks 256] [--repeat 3] [--noise 0,30,100] [--delay 20]

Runs the notebook's own code — its cell tagged `lesson` (simulate, draw, redraw), read from the
.ipynb and executed here — with BUILD's module and executable (BUILD/python, BUILD/app/waitlab),
in the notebook's directory as Jupyter would. Each redraw is what a slider's change costs: a child
`waitlab run` of the run and its twin without the delay (run.footprint=delay) with the idle-wave
and footprint analyses, reading the results, drawing the three-panel Figure and rendering it as
PNG, as the notebook's inline display does. The notebook's cache of runs is cleared before each
redraw. Prints, per redraw, its seconds and the part spent in the child `waitlab run`, then the
mean and the largest. Writes nothing but the runs' temporary directories (removed).
"""
import argparse
import io
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(HERE, "..", "notebooks", "teaching_idle_waves.ipynb")


def lesson_code(path):
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    cells = [c for c in nb["cells"] if "lesson" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise SystemExit(f"{path}: expected one cell tagged 'lesson', found {len(cells)}")
    source = cells[0]["source"]
    return "".join(source) if isinstance(source, list) else source


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", help="the build directory (its python/ and app/waitlab)")
    ap.add_argument("--ranks", type=int, default=256)
    ap.add_argument("--delay", type=int, default=20, help="ms")
    ap.add_argument("--noise", default="0,30,100", help="mean detours in µs, one redraw each (0: no noise)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds over the noise levels")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    sys.path.insert(0, os.path.join(build, "python"))
    os.environ["WAITLAB_BIN"] = os.path.join(build, "app", "waitlab")
    import matplotlib
    matplotlib.use("Agg")
    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure
    import waitlab

    def display(obj):  # what the notebook's inline display does with a Figure: render it as PNG
        if isinstance(obj, Figure):
            obj.savefig(io.BytesIO(), format="png", bbox_inches="tight")

    ns = {"os": os, "time": time, "np": np, "pd": pd, "Figure": Figure, "waitlab": waitlab, "display": display,
          "__name__": "lesson"}
    os.chdir(os.path.dirname(os.path.abspath(NOTEBOOK)))  # the notebook's paths are relative to it
    exec(compile(lesson_code(NOTEBOOK), NOTEBOOK + ":lesson", "exec"), ns)
    simulate, child = ns["simulate"], []

    def timed_simulate(*a, **k):
        t0 = time.perf_counter()
        out = simulate(*a, **k)
        child.append(time.perf_counter() - t0)
        return out

    ns["simulate"] = timed_simulate
    print(f"{NOTEBOOK}: redraw at {args.ranks} ranks x {ns['ITERATIONS']} iterations, delay {args.delay} ms "
          f"({waitlab.executable()})")
    times = []
    for round_ in range(args.repeat):
        for noise in (int(x) for x in args.noise.split(",")):
            ns["_runs"].clear()
            child.clear()
            import contextlib
            with contextlib.redirect_stdout(io.StringIO()):
                L = ns["redraw"](delay_ms=args.delay, noise_us=noise, ranks=args.ranks)
            times.append(L.seconds)
            print(f"  noise {noise:>3} µs: {L.seconds:6.2f} s per redraw (child waitlab run + twin {child[0]:.2f} s, "
                  f"reading and drawing {L.seconds - child[0]:.2f} s)")
            del L
    print(f"seconds per redraw: mean {sum(times) / len(times):.2f}, largest {max(times):.2f} ({len(times)} redraws)")


if __name__ == "__main__":
    main()
