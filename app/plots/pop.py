# POP model factors of a scaling study (`waitlab pop`): global, parallel and computation
# efficiency and their factors against the number of units (ranks, or threads of hybrid runs),
# as POP reports draw them. Reads DIR/pop.json; writes DIR/pop (.png and .svg).
# Usage: python3 pop.py DIR
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "waitlab"
import matplotlib.pyplot as plt  # noqa: E402

d = sys.argv[1]
info = json.load(open(os.path.join(d, "pop.json")))
runs = info["runs"]
plt.rcParams.update({"font.size": 15, "axes.titlesize": 17, "axes.labelsize": 16, "legend.fontsize": 12})

x = [r["units"] for r in runs]
fig, ax = plt.subplots(figsize=(12, 6.5))
series = (
    ("global_efficiency", "global efficiency", "black", "-", 2.6),
    ("parallel_efficiency", "parallel efficiency", "#1f77b4", "-", 2.2),
    ("load_balance", "load balance", "#2ca02c", "--", 1.6),
    ("communication_efficiency", "communication efficiency", "#ff7f0e", "--", 1.6),
    ("serialisation_efficiency", "serialisation efficiency", "#9467bd", ":", 1.6),
    ("transfer_efficiency", "transfer efficiency", "#d62728", ":", 1.6),
    ("computation_scalability", "computation scalability", "#8c564b", "-", 2.2),
    ("ipc_scalability", "IPC scalability", "#e377c2", "-.", 1.4),
    ("instruction_scalability", "instruction scalability", "#7f7f7f", "-.", 1.4),
    ("frequency_scalability", "frequency scalability", "#bcbd22", "-.", 1.4),
)
top = 105
for key, label, color, style, width in series:
    pts = [(u, 100 * r[key]) for u, r in zip(x, runs) if r.get(key) is not None]
    if not pts:
        continue
    top = max(top, max(v for _, v in pts) + 5)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color, linestyle=style, linewidth=width, marker="o",
            markersize=5, label=label)
for lo, hi, color in ((0, 60, "#e67c73"), (60, 80, "#ffd666"), (80, top, "#57bb8a")):
    ax.axhspan(lo, hi, color=color, alpha=0.08, linewidth=0)
if len(set(x)) > 1 and min(x) > 0:
    ax.set_xscale("log", base=2)
ax.set_xticks(sorted(set(x)))
ax.set_xticklabels([str(u) for u in sorted(set(x))])
ax.set_ylim(0, top)
ax.set_xlabel("units (ranks × threads)")
ax.set_ylabel("efficiency / scalability (%)")
ax.set_title(f"POP model factors, {info['scaling']} scaling (reference: {info['reference']})")
ax.grid(True, alpha=0.3)
ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
fig.tight_layout()
fig.savefig(os.path.join(d, "pop.png"), dpi=100, metadata={"Software": None})
fig.savefig(os.path.join(d, "pop.svg"), metadata={"Date": None, "Creator": None})
