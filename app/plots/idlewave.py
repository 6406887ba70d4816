# Idle waves (paper 003): the idle-period heat map (time × rank, the fitted fronts drawn on
# it), the amplitude of every front against the distance from its source, and, when a slow
# group was found, the idle periods of the ranks next to it (paper 003, Fig. 5: the same
# idle period at a rank-dependent phase). Large type: these are shown on projectors.
# Reads DIR/idlewave.json, idle_matrix.npy, idlewave_fronts.csv, idlewave_selfsync.csv;
# writes DIR/idlewave_heatmap, idlewave_amplitude, idlewave_selfsync (.png and .svg).
# Usage: python3 idlewave.py DIR
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "waitlab"
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

d = sys.argv[1]
info = json.load(open(os.path.join(d, "idlewave.json")))
mx = info["matrix"]
idle = np.load(os.path.join(d, mx["file"]))
fronts = list(csv.DictReader(open(os.path.join(d, "idlewave_fronts.csv"), newline="")))
plt.rcParams.update({"font.size": 17, "axes.titlesize": 19, "axes.labelsize": 18, "legend.fontsize": 14})


def save(fig, name):
    fig.savefig(os.path.join(d, name + ".png"), dpi=100, metadata={"Software": None})
    fig.savefig(os.path.join(d, name + ".svg"), metadata={"Date": None, "Creator": None})
    plt.close(fig)


def unit(seconds):
    # A time unit that keeps the axis numbers short.
    if seconds >= 1:
        return 1.0, "s"
    if seconds >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


t0, b, bins, ranks = mx["t0_s"], mx["bin_s"], mx["bins"], mx["ranks"]
t1 = t0 + bins * b
scale, tu = unit(t1 - t0)
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]

# 1. Heat map: fraction of each bin a rank spent idle.
fig, ax = plt.subplots(figsize=(13, 7.5))
frac = idle / b if b > 0 else idle
im = ax.imshow(frac, aspect="auto", origin="lower", interpolation="nearest", cmap="magma_r", vmin=0,
               vmax=max(1e-12, min(1.0, float(frac.max()) if frac.size else 1.0)),
               extent=[0, (t1 - t0) * scale, -0.5, ranks - 0.5])
cb = fig.colorbar(im, ax=ax, pad=0.015)
cb.set_label("idle fraction of the time bin")
for i, w in enumerate(info["waves"]):
    color = COLORS[i % len(COLORS)]
    for f in w["fronts"]:
        pts = [r for r in fronts if int(r["wave"]) == i and r["direction"] == f["direction"]]
        if len(pts) < 2:
            continue
        ts = np.array([float(r["time_s"]) for r in pts])
        sign = -1 if f["direction"] == "down" else 1
        if f.get("at_once"):
            # Every rank idled in the same iteration (a collective): nothing travelled.
            ranks_hit = [int(r["rank"]) for r in pts]
            ax.plot([(ts[0] - t0) * scale] * 2, [min(ranks_hit), max(ranks_hit)], color=color, lw=2.5, ls="--",
                    label=f"rank {w['source_rank']} {f['direction']}: {len(pts)} ranks idle at once")
            continue
        # The fitted line: distance = a + v·t, drawn over the time the front was followed.
        dist = np.array([float(r["distance"]) for r in pts])
        v = f["speed_ranks_per_s"]
        a = float(np.mean(dist) - v * np.mean(ts))
        tt = np.array([ts.min(), ts.max()])
        ax.plot((tt - t0) * scale, w["source_rank"] + sign * (a + v * tt), color=color, lw=2.5, ls="--",
                label=f"rank {w['source_rank']} {f['direction']}: {v:.4g} ranks/s"
                      + (f" ({f['measured_over_predicted']:.2f}× model)" if f["predicted_ranks_per_s"] > 0 else ""))
    ax.plot([(w["source_time_s"] - t0) * scale], [w["source_rank"]], marker="*", ms=20, color=color, mec="white")
ax.set_xlabel(f"time [{tu}]")
ax.set_ylabel("rank")
ax.set_xlim(0, (t1 - t0) * scale)
ax.set_ylim(-0.5, ranks - 0.5)
ax.set_title("Idle periods" + (f" — wave speed model σ·d/(T_exec+T_comm) = {info['predicted_ranks_per_s']:.4g} ranks/s"
                               if info["waves"] else ""))
if info["waves"]:
    ax.legend(loc="upper left", framealpha=0.85)
fig.tight_layout()
save(fig, "idlewave_heatmap")

# 2. Amplitude against distance.
fig, ax = plt.subplots(figsize=(11, 6.5))
drawn = False
for i, w in enumerate(info["waves"]):
    color = COLORS[i % len(COLORS)]
    for f in w["fronts"]:
        pts = [r for r in fronts if int(r["wave"]) == i and r["direction"] == f["direction"]]
        if not pts:
            continue
        dist = [int(r["distance"]) for r in pts]
        amp = [float(r["amplitude_s"]) for r in pts]
        s, u = unit(max(amp))
        ax.plot(dist, [x * 1e3 for x in amp], marker="o" if f["direction"] == "up" else "s", ms=4, lw=1.5,
                color=color, ls="-" if f["direction"] == "up" else ":",
                label=f"rank {w['source_rank']} {f['direction']}: decay {f['decay_s_per_rank'] * 1e6:.3g} µs/rank, "
                      f"stops: {f['stop']}")
        drawn = True
ax.set_xlabel("distance from the delayed rank [ranks]")
ax.set_ylabel("idle period at the front [ms]")
ax.set_ylim(bottom=0)
ax.set_title("Amplitude of the idle wave")
if drawn:
    ax.legend(loc="best", framealpha=0.85)
else:
    ax.text(0.5, 0.5, "no idle wave found", ha="center", va="center", transform=ax.transAxes)
ax.grid(alpha=0.3)
fig.tight_layout()
save(fig, "idlewave_amplitude")

# 3. Self-synchronisation: idle periods of the ranks next to the slow group.
ss = info["self_sync"]
path = os.path.join(d, "idlewave_selfsync.csv")
if ss["slow_group"] and os.path.exists(path):
    rows = list(csv.DictReader(open(path, newline="")))
    if rows:
        fig, ax = plt.subplots(figsize=(13, 6.5))
        rks = sorted({int(r["rank"]) for r in rows})
        lo = min(float(r["start_s"]) for r in rows)
        hi = max(float(r["start_s"]) + float(r["seconds"]) for r in rows)
        s, u = unit(hi - lo)
        for r in rows:
            y = rks.index(int(r["rank"]))
            slow = r["slow"] == "1"
            ax.broken_barh([((float(r["start_s"]) - lo) * s, float(r["seconds"]) * s)], (y - 0.35, 0.7),
                           color="#c0392b" if slow else "#2c7fb8")
        ax.set_yticks(range(len(rks)))
        ax.set_yticklabels([f"{k}{' (slow)' if any(r['rank'] == str(k) and r['slow'] == '1' for r in rows) else ''}"
                            for k in rks])
        ax.set_xlabel(f"time [{u}] from {lo:.6g} s")
        ax.set_ylabel("rank")
        ax.set_title(f"Self-synchronisation: fast ranks idle {ss['fast_idle_per_iteration_s'] * 1e6:.4g} µs per "
                     f"iteration (T_slow − T_fast = {ss['expected_idle_s'] * 1e6:.4g} µs)", fontsize=16)
        ax.grid(axis="x", alpha=0.3)
        fig.tight_layout()
        save(fig, "idlewave_selfsync")
