# What-if variants side by side: runtime per variant (left) and waiting time by wait-state
# pattern, stacked (right). Reads whatif.csv, writes PNG and SVG.
# Usage: python3 whatif.py WHATIF_CSV OUT_BASENAME
import csv
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "waitlab"
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1], newline="")))
out = sys.argv[2]
names = [r["name"] for r in rows]
wall = [float(r["wall_time_s"]) for r in rows]
skip = {"wall_time_s", "simulated_time_s", "total_waiting_s", "delay_short_term_s", "delay_long_term_s",
        "critical_path_s", "critical_imbalance_s", "injected_s", "nominal_compute_s"}
# Wrong-order Late Sender is a part of Late Sender: stacking it would count it twice.
patterns = [c[:-2] for c in rows[0] if c.endswith("_s") and c not in skip and "wrong_order" not in c
            and any(float(r[c]) > 0 for r in rows)]

plt.rcParams.update({"font.size": 13})
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5.2))
colors = ["#1f5fa8"] + ["#d9731a"] * (len(rows) - 1)
bars = ax1.bar(range(len(rows)), wall, color=colors)
for b, w in zip(bars, wall):
    ax1.annotate(f"{wall[0] / w:.3f}×" if w > 0 else "", (b.get_x() + b.get_width() / 2, w),
                 ha="center", va="bottom", fontsize=11)
ax1.set_xticks(range(len(rows)), names, rotation=30, ha="right")
ax1.set_ylabel("runtime [s]")
ax1.set_title("Runtime (speed-up vs baseline)")
bottom = [0.0] * len(rows)
cmap = plt.get_cmap("tab10")
for i, p in enumerate(patterns):
    vals = [float(r[p + "_s"]) for r in rows]
    ax2.bar(range(len(rows)), vals, bottom=bottom, label=p.replace("_", " "), color=cmap(i % 10))
    bottom = [b + v for b, v in zip(bottom, vals)]
ax2.set_xticks(range(len(rows)), names, rotation=30, ha="right")
ax2.set_ylabel("waiting, all ranks [s]")
ax2.set_title("Waiting time by pattern")
if patterns:
    ax2.legend(fontsize=10)
fig.tight_layout()
fig.savefig(out + ".png", dpi=100, metadata={"Software": None})
fig.savefig(out + ".svg", metadata={"Date": None, "Creator": None})
