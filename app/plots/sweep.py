# A parameter sweep: runtime and total waiting time against the first grid parameter, one
# line per combination of the others. Reads sweep.csv, writes PNG and SVG.
# Usage: python3 sweep.py SWEEP_CSV OUT_BASENAME
import csv
import re
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "waitlab"
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1], newline="")))
out = sys.argv[2]
cols = list(rows[0].keys())
params = cols[2:cols.index("wall_time_s")]
first, others = params[0], params[1:]


def value(text):
    """The number in a value with a unit (1ms, 10%, 2) for ordering and the x axis."""
    m = re.match(r"^\s*([-+0-9.eE]+)", text)
    return float(m.group(1)) if m else None


xs_numeric = all(value(r[first]) is not None for r in rows)
groups = {}
for r in rows:
    groups.setdefault(tuple(r[k] for k in others), []).append(r)
plt.rcParams.update({"font.size": 13})
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5.2))
for key, rs in groups.items():
    label = ", ".join(f"{k}={v}" for k, v in zip(others, key)) or None
    xs = [value(r[first]) if xs_numeric else i for i, r in enumerate(rs)]
    ax1.plot(xs, [float(r["wall_time_s"]) for r in rs], marker="o", label=label)
    ax2.plot(xs, [float(r["total_waiting_s"]) for r in rs], marker="o", label=label)
    if not xs_numeric:
        for ax in (ax1, ax2):
            ax.set_xticks(xs, [r[first] for r in rs])
for ax, t in ((ax1, "runtime [s]"), (ax2, "waiting, all ranks [s]")):
    ax.set_xlabel(first + (" (number before the unit)" if xs_numeric else ""))
    ax.set_ylabel(t)
    ax.grid(alpha=0.3)
if others:
    ax1.legend(fontsize=9)
fig.suptitle("Sweep over " + ", ".join(params))
fig.tight_layout()
fig.savefig(out + ".png", dpi=100, metadata={"Software": None})
fig.savefig(out + ".svg", metadata={"Date": None, "Creator": None})
