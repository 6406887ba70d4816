# POP model factors of a scaling study (`waitlab pop`): global, parallel and computation
# efficiency and their factors against the number of units (ranks, or threads of hybrid runs; their
# MPI and OpenMP parallel efficiency too),
# as POP reports draw them, and beside it the speed-up against the units with the ideal one
# (units / reference units for strong scaling, 1 for weak). Reads DIR/pop.json; writes DIR/pop
# and DIR/pop_speedup (.png and .svg).
# Usage: python3 pop.py DIR
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "waitlab"
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

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
    # Hybrid MPI+OpenMP runs only (null otherwise: not drawn).
    ("mpi_parallel_efficiency", "MPI parallel efficiency", "#17becf", "-.", 1.8),
    ("omp_parallel_efficiency", "OpenMP parallel efficiency", "#aec7e8", "-.", 1.8),
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

# The speed-up: T_ref / T_N against the units, and the ideal line.
fig, ax = plt.subplots(figsize=(8, 6.5))
ref_units = next((r["units"] for r in runs if r["run"] == info["reference"]), min(x) if x else 1)
pts = [(u, r["speedup"]) for u, r in zip(x, runs) if r.get("speedup") is not None]
xs = sorted(set(x))
if xs and ref_units > 0:
    ideal = [u / ref_units if info["scaling"] == "strong" else 1.0 for u in xs]
    ax.plot(xs, ideal, color="#7f7f7f", linestyle="--", linewidth=1.6, label="ideal")
if pts:
    ax.plot([p[0] for p in pts], [p[1] for p in pts], color="black", linewidth=2.4, marker="o", markersize=6,
            label="speed-up")
if len(xs) > 1 and min(xs) > 0:
    ax.set_xscale("log", base=2)
    if info["scaling"] == "strong" and ref_units > 0:
        ax.set_yscale("log", base=2)
        ticks = sorted(set(u / ref_units for u in xs))
        ax.set_yticks(ticks)
        ax.set_yticklabels([f"{v:g}" for v in ticks])
        ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
ax.set_xticks(xs)
ax.set_xticklabels([str(u) for u in xs])
ax.set_xlabel("units (ranks × threads)")
ax.set_ylabel("speed-up (T_ref / T)")
ax.set_title(f"Speed-up, {info['scaling']} scaling")
ax.grid(True, alpha=0.3)
ax.legend(loc="upper left", frameon=False)
fig.tight_layout()
fig.savefig(os.path.join(d, "pop_speedup.png"), dpi=100, metadata={"Software": None})
fig.savefig(os.path.join(d, "pop_speedup.svg"), metadata={"Date": None, "Creator": None})
