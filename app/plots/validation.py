# Estimate vs truth of the minimum-duration wait-state estimator (paper 000, Fig. 3):
# one panel per kind of call path, wait ratio by the trace analysis (x) against the
# estimate (y), one marker per estimator variant. Reads validation.csv, writes PNG and SVG.
# Usage: python3 validation.py VALIDATION_CSV OUT_BASENAME
import csv
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "waitlab"
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1], newline="")))
out = sys.argv[2]

PANELS = [
    ("MPI_Recv (Late Sender)", lambda r: r["pattern"] == "late_sender" and r["function"] == "MPI_Recv"),
    ("MPI_Wait (Late Sender)", lambda r: r["pattern"] == "late_sender" and r["function"] == "MPI_Wait"),
    ("MPI_Waitall (Late Sender)", lambda r: r["pattern"] == "late_sender" and r["function"] == "MPI_Waitall"),
    ("Wait at NxN", lambda r: r["pattern"] in ("wait_at_nxn", "wait_at_barrier")),
    ("Late Broadcast, Early Reduce", lambda r: r["pattern"] in ("late_broadcast", "early_reduce", "early_scan")),
    ("Other point-to-point", lambda r: r["pattern"] in ("late_sender", "late_receiver")
     and r["function"] not in ("MPI_Recv", "MPI_Wait", "MPI_Waitall")),
]
STYLE = {
    "paper": dict(marker="o", color="#1f5fa8", label="paper (minimum)", s=46),
    "per_peer": dict(marker="s", facecolors="none", edgecolors="#d9731a", label="per peer", s=60),
    "exclude_tested": dict(marker="^", facecolors="none", edgecolors="#2a9d3a", label="exclude tested", s=60),
}
panels = [(t, f) for t, f in PANELS if any(f(r) for r in rows)]
if not panels:
    panels = PANELS[:1]
cols = min(3, len(panels))
nrows = (len(panels) + cols - 1) // cols
plt.rcParams.update({"font.size": 13})
fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 5.0 * nrows), squeeze=False)
for ax in axes.flat[len(panels):]:
    ax.axis("off")
for ax, (title, keep) in zip(axes.flat, panels):
    sel = [r for r in rows if keep(r)]
    hi = 0.0
    variants = sorted({r["variant"] for r in sel}, key=lambda v: (v != "paper", v))
    for v in variants:
        pts = [(float(r["truth_pct"]), float(r["estimate_pct"])) for r in sel if r["variant"] == v]
        if not pts:
            continue
        style = STYLE.get(v, dict(marker="D", facecolors="none", edgecolors="#8e44ad", label=v, s=50))
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], zorder=3, **style)
        hi = max(hi, max(max(p) for p in pts))
    hi = hi * 1.08 if hi > 0 else 1.0
    ax.plot([0, hi], [0, hi], color="#555555", lw=1, ls="--", zorder=1, label="estimate = truth")
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    ax.set_aspect("equal")
    ax.grid(True, color="#dddddd", zorder=0)
    ax.set_title(title)
    ax.set_xlabel("wait ratio, trace analysis (%)")
    ax.set_ylabel("wait ratio, estimate (%)")
# One legend for all panels, below them: in the panels it would hide points.
handles, labels = {}, []
for ax in axes.flat[: len(panels)]:
    for h, lab in zip(*ax.get_legend_handles_labels()):
        if lab not in handles:
            handles[lab] = h
            labels.append(lab)
fig.suptitle("Minimum-duration estimator vs. trace-based truth (call paths with truth ≥ 0.5 %)", fontsize=14)
fig.tight_layout(rect=(0, 0.06, 1, 1))
fig.legend([handles[lab] for lab in labels], labels, loc="lower center", ncol=len(labels), fontsize=12,
           frameon=False)
fig.savefig(out + ".png", dpi=110, metadata={"Software": None})
fig.savefig(out + ".svg", metadata={"Date": None, "Creator": None})
