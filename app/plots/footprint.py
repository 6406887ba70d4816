# The counterfactual footprint of a perturbation (issue 34; docs/analyses.md): the shift of every
# rank's timeline (this run minus its twin without the perturbation) as a heat map beside the
# idle-period heat map of the same bins, and per signed distance from the source the peak shift
# with the largest idle period in the run and in the twin (decay and dispersion apart). Large
# type: these are shown on projectors. Reads DIR/footprint.json (summary.json's
# analyses.footprint), footprint.csv, footprint_shift.npy and idle_matrix.npy; writes
# DIR/footprint_heatmap and DIR/footprint_distance (.png and .svg). Importable (waitlab's Python
# module draws the same figures). Usage: python3 footprint.py DIR
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "waitlab"
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from heatmaps import pool_max  # noqa: E402 (app/embed_plots.cmake puts heatmaps.py here)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def heatmap_figure(shift, idle, t0, bin_s):
    """The shift matrix (ms) beside the idle fraction of each bin, time on x, rank on y."""
    fig, axes = plt.subplots(1, 2, figsize=(16, 7), sharey=True)
    ranks = shift.shape[0]
    extent = [t0 * 1e3, (t0 + bin_s * shift.shape[1]) * 1e3, ranks - 0.5, -0.5]
    s = pool_max(np.abs(shift), 1200, 1600) * 1e3
    im = axes[0].imshow(s, aspect="auto", interpolation="nearest", extent=extent, cmap="viridis")
    axes[0].set_title("shift of each rank's timeline")
    axes[0].set_xlabel("time (ms)")
    axes[0].set_ylabel("rank")
    fig.colorbar(im, ax=axes[0], label="shift (ms)")
    if idle is not None and idle.shape == shift.shape and bin_s > 0:
        f = pool_max(idle / bin_s, 1200, 1600)
        im2 = axes[1].imshow(f, aspect="auto", interpolation="nearest", extent=extent, cmap="magma_r", vmin=0, vmax=1)
        fig.colorbar(im2, ax=axes[1], label="fraction of the bin idle")
    axes[1].set_title("idle periods")
    axes[1].set_xlabel("time (ms)")
    fig.tight_layout()
    return fig


def distance_figure(rows):
    """Peak shift and largest idle period (run, twin) against the signed distance from the source."""
    off = np.array([int(r["offset"]) for r in rows])
    order = np.argsort(off, kind="stable")
    off = off[order]
    shift = np.abs(np.array([float(r["peak_shift_s"]) for r in rows]))[order] * 1e3
    idle = np.array([float(r["largest_idle_s"]) for r in rows])[order] * 1e3
    twin = np.array([float(r["twin_largest_idle_s"]) for r in rows])[order] * 1e3
    fig, ax = plt.subplots(figsize=(14, 6.5))
    ax.plot(off, shift, color="#1f77b4", lw=2.4, label="peak shift of the rank's timeline")
    ax.plot(off, idle, color="#d62728", lw=1.6, label="largest idle period, this run")
    ax.plot(off, twin, color="#7f7f7f", lw=1.2, ls="--", label="largest idle period, twin (background)")
    positive = np.concatenate([v[v > 0] for v in (shift, idle, twin)]) if len(off) else np.array([])
    if positive.size:
        ax.set_yscale("log")
        # Two decades below the largest: the background and the tail of the shift stay readable.
        ax.set_ylim(max(positive.min() * 0.8, positive.max() * 1e-2), positive.max() * 1.5)
    ax.set_xlabel("distance from the source (ranks; negative: below it)")
    ax.set_ylabel("ms")
    ax.legend(loc="lower center")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def save(fig, d, stem):
    fig.savefig(os.path.join(d, stem + ".png"), dpi=100, metadata={"Software": None})
    fig.savefig(os.path.join(d, stem + ".svg"), metadata={"Date": None, "Creator": None})
    plt.close(fig)


def main(d):
    plt.rcParams.update({"font.size": 15, "axes.titlesize": 17, "axes.labelsize": 16, "legend.fontsize": 13})
    with open(os.path.join(d, "footprint.json")) as f:
        info = json.load(f)
    shift = np.load(os.path.join(d, "footprint_shift.npy"))
    idle_path = os.path.join(d, "idle_matrix.npy")
    idle = np.load(idle_path) if os.path.exists(idle_path) else None
    m = info["matrix"]
    if shift.size:
        save(heatmap_figure(shift, idle, m["t0_s"], m["bin_s"]), d, "footprint_heatmap")
    rows = read_rows(os.path.join(d, "footprint.csv"))
    if rows and info.get("source_rank") is not None:
        save(distance_figure(rows), d, "footprint_distance")


if __name__ == "__main__":
    main(sys.argv[1])
