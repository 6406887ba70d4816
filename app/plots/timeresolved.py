# Time-resolved efficiency (paper 004, ALGORITHMS.md §6): the POP metrics of every window over
# the run (parallel efficiency filled, load balance, serialisation and transfer efficiency as
# steps) and the cumulative parallel efficiency, which ends at the whole run's value. A dip that
# the whole-run number hides shows as a notch in the filled area.
# Reads DIR/timeresolved.csv and timeresolved.json; writes DIR/timeresolved (.png and .svg).
# Usage: python3 timeresolved.py DIR
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "waitlab"
import matplotlib.pyplot as plt  # noqa: E402

d = sys.argv[1]
info = json.load(open(os.path.join(d, "timeresolved.json")))
rows = list(csv.DictReader(open(os.path.join(d, "timeresolved.csv"), newline="")))
plt.rcParams.update({"font.size": 16, "axes.titlesize": 18, "axes.labelsize": 17, "legend.fontsize": 13})

t0 = float(info["start_s"])
span = max(float(info["end_s"]) - t0, 1e-300)
if span >= 1:
    scale, unit = 1.0, "s"
elif span >= 1e-3:
    scale, unit = 1e3, "ms"
else:
    scale, unit = 1e6, "µs"


def steps(column):
    xs, ys = [], []
    for r in rows:
        v = 100 * float(r[column])
        xs += [(float(r["start_s"]) - t0) * scale, (float(r["end_s"]) - t0) * scale]
        ys += [v, v]
    return xs, ys


fig, ax = plt.subplots(figsize=(13, 6.5))
x, pe = steps("pe")
ax.fill_between(x, pe, color="#1f77b4", alpha=0.25, linewidth=0)
ax.plot(x, pe, color="#1f77b4", linewidth=2.2, label="parallel efficiency")
for column, color, label in (("lb", "#2ca02c", "load balance"), ("ser_e", "#9467bd", "serialisation efficiency"),
                             ("trf_e", "#d62728", "transfer efficiency")):
    xs, ys = steps(column)
    ax.plot(xs, ys, color=color, linewidth=1.4, label=label)
cx = [(float(r["end_s"]) - t0) * scale for r in rows]
cy = [100 * float(r["cum_pe"]) for r in rows]
ax.plot([0] + cx, [cy[0] if cy else 0] + cy, color="black", linestyle="--", linewidth=1.6,
        label="parallel efficiency, cumulative")
ax.axhline(100 * float(info["parallel_efficiency"]), color="grey", linestyle=":", linewidth=1.2)
ax.set_xlim(0, span * scale)
ax.set_ylim(0, 105)
ax.set_xlabel(f"time since the run's start ({unit})")
ax.set_ylabel("efficiency (%)")
src = {"lamport": "Lamport replay", "ideal_network": "ideal-network run"}.get(info["source"], info["source"])
ax.set_title(f"Efficiency per window ({len(rows)} windows, {info['windows']['rule']}; ideal: {src})")
ax.legend(loc="lower left", ncol=2, framealpha=0.9)
ax.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(os.path.join(d, "timeresolved.png"), dpi=100, metadata={"Software": None})
fig.savefig(os.path.join(d, "timeresolved.svg"), metadata={"Date": None, "Creator": None})
plt.close(fig)
