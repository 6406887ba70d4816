# Idle waves (paper 003): the idle-period heat map (time × rank, the fitted fronts drawn on
# it), the amplitude of every front against the distance from its source, and, when a slow
# group was found, the idle periods of the ranks next to it (paper 003, Fig. 5: the same
# idle period at a rank-dependent phase). Large type: these are shown on projectors.
# Reads DIR/idlewave.json, idle_matrix.npy, idlewave_fronts.csv, idlewave_selfsync.csv;
# writes DIR/idlewave_heatmap (when some rank idled), idlewave_amplitude (when a wave has a
# front) and idlewave_selfsync (with a slow group), each as .png and .svg: no empty picture.
# The heat map merges the ranks and time bins that share a pixel by their maximum, so that a
# narrow wave stays visible at any number of ranks. Importable (tests/app/test_idlewave_plot.py).
# Usage: python3 idlewave.py DIR
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "waitlab"
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from heatmaps import pool_max  # noqa: E402 (app/embed_plots.cmake puts heatmaps.py here)

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]
# The time resolution of the analyses (analysis/waitstate/waitstate.hpp, kTimeResolution: less
# is the rounding of the clock arithmetic), unless idlewave.json names another.
TIMER_RESOLUTION_S = 1e-12
# The fitted fronts: dashes with gaps that show the idle band beneath them.
FRONT_DASH = (0, (5, 4))


def unit(seconds):
    """A time unit (factor, name) that keeps the axis numbers short."""
    if seconds >= 1:
        return 1.0, "s"
    if seconds >= 1e-3:
        return 1e3, "ms"
    if seconds >= 1e-6:
        return 1e6, "µs"
    return 1e9, "ns"


def rounded(seconds, resolution=TIMER_RESOLUTION_S):
    """seconds rounded to a multiple of the timer resolution; never −0."""
    if not math.isfinite(seconds) or resolution <= 0:
        return seconds
    return round(seconds / resolution) * resolution + 0.0


def readable(seconds):
    """A time as people read it: "20 ms", "-1 ns", "0 s"."""
    if seconds == 0:
        return "0 s"
    s, u = unit(abs(seconds))
    return f"{seconds * s:.4g} {u}"


def decay_text(seconds_per_unit, resolution=TIMER_RESOLUTION_S, unit="rank"):
    """A front's decay, rounded to the time resolution, as the terminal says it: "no decay",
    "decay -1.466 ns/rank"."""
    r = rounded(seconds_per_unit, resolution)
    return "no decay" if r == 0 else "decay " + readable(r) + "/" + unit


def units(info):
    """What the fronts' distances count: ("rank", "ranks") on a chain, ("hop", "hops") on a grid or
    graph (idlewave.json's distance_metric)."""
    return ("hop", "hops") if info.get("distance_metric") == "hops" else ("rank", "ranks")


def amplitude_limits(values):
    """The y-range (bottom, top) of the amplitude plot: from 0 to a fifth above the largest
    amplitude, so that a wave that does not decay (a flat line) is drawn well inside the frame."""
    hi = max((v for v in values if math.isfinite(v)), default=0.0)
    return 0.0, hi * 1.2 if hi > 0 else 1.0


def wave_onset(w, info):
    """When the wave starts: the delayed computation's start (the idle period's start for a wave
    found on a measured trace). idlewave.json's onset_s when it has one; else the end of the
    delayed computation (source_time_s) less the delay and, for an injected delay, the
    undisturbed compute of the iteration (T_exec) it lengthened."""
    if isinstance(w.get("onset_s"), (int, float)):
        return float(w["onset_s"])
    start = w["source_time_s"] - w.get("delay_s", 0.0)
    if w.get("injected"):
        start -= info.get("t_exec_s", 0.0) or 0.0
    return start


def front_points(fronts, i, f):
    return [r for r in fronts if int(r["wave"]) == i and r["direction"] == f["direction"]]


def save(fig, d, name):
    fig.savefig(os.path.join(d, name + ".png"), dpi=100, metadata={"Software": None})
    fig.savefig(os.path.join(d, name + ".svg"), metadata={"Date": None, "Creator": None})
    plt.close(fig)


def heatmap(d, info, idle, fronts):
    """1. The fraction of each bin a rank spent idle, the fitted fronts, the delays."""
    mx = info["matrix"]
    t0, b, bins, ranks = mx["t0_s"], mx["bin_s"], mx["bins"], mx["ranks"]
    t1 = t0 + bins * b
    scale, tu = unit(t1 - t0)
    frac = idle / b if b > 0 else idle
    if frac.size == 0 or not float(frac.max()) > 0:
        return False  # no rank idled: nothing to see
    fig, ax = plt.subplots(figsize=(13, 7.5))
    im = ax.imshow(frac, aspect="auto", origin="lower", interpolation="nearest", cmap="magma_r", vmin=0,
                   vmax=min(1.0, float(frac.max())), extent=[0, (t1 - t0) * scale, -0.5, ranks - 0.5])
    cb = fig.colorbar(im, ax=ax, pad=0.015)
    cb.set_label("idle fraction of the time bin")
    for i, w in enumerate(info["waves"]):
        color = COLORS[i % len(COLORS)]
        src = w["source_rank"]
        for f in w["fronts"]:
            if f["direction"] not in ("down", "up"):
                continue  # a grid axis' front: its ranks are among the down and up fronts' points
            pts = front_points(fronts, i, f)
            if len(pts) < 2:
                continue
            ts = np.array([float(r["time_s"]) for r in pts])
            sign = -1 if f["direction"] == "down" else 1
            if units(info)[0] == "hop":
                # Distances in hops (a grid or graph): the rank is no line in the distance; the
                # points the front reached, at their ranks.
                # In a wavefront pipeline a side in rank order mixes what different sweeps carry: no
                # one speed.
                speed = (f"{len(pts)} ranks" if info.get("pipeline")
                         else f"{f['speed_ranks_per_s']:.4g} {units(info)[1]}/s")
                ax.plot((ts - t0) * scale, [int(r["rank"]) for r in pts], ls="none", marker=".", ms=5, color=color,
                        label=f"rank {src} {f['direction']}: {speed}")
                continue
            if f.get("at_once"):
                # Every rank idled in the same iteration (a collective): nothing travelled.
                ranks_hit = [int(r["rank"]) for r in pts]
                ax.plot([(ts[0] - t0) * scale] * 2, [min(ranks_hit), max(ranks_hit)], color=color, lw=1.5, ls=FRONT_DASH,
                        label=f"rank {src} {f['direction']}: {len(pts)} ranks idle at once")
                continue
            # The fitted line: distance = a + v·t, drawn over the time the front was followed.
            dist = np.array([float(r["distance"]) for r in pts])
            v = f["speed_ranks_per_s"]
            a = float(np.mean(dist) - v * np.mean(ts))
            tt = np.array([ts.min(), ts.max()])
            model = f" ({f['measured_over_predicted']:.2f}× model)" if f.get("predicted_ranks_per_s", 0) > 0 else ""
            ax.plot((tt - t0) * scale, src + sign * (a + v * tt), color=color, lw=1.5, ls=FRONT_DASH,
                    label=f"rank {src} {f['direction']}: {v:.4g} ranks/s{model}")
        # The delayed computation (a bar from its start, starred, to its end): the wave starts
        # where it starts.
        start, end = wave_onset(w, info), w["source_time_s"]
        ax.plot([(start - t0) * scale, (end - t0) * scale], [src, src], color=color, lw=4, solid_capstyle="butt")
        ax.plot([(start - t0) * scale], [src], marker="*", ms=22, color=color, mec="white", ls="none",
                label=f"rank {src}: {readable(w.get('delay_s', 0.0))} "
                      f"{'delay' if w.get('injected') else 'idle'} from {(start - t0) * scale:.4g} {tu}")
    ax.set_xlabel(f"time [{tu}]")
    ax.set_ylabel("rank")
    ax.set_xlim(0, (t1 - t0) * scale)
    ax.set_ylim(-0.5, ranks - 0.5)
    model = info.get("predicted_ranks_per_s", 0) or 0
    ax.set_title("Idle periods" + (f" — wave speed model σ·d/T_iter = {model:.4g} {units(info)[1]}/s"
                                   if info["waves"] and model > 0 else ""))
    if info["waves"]:
        ax.legend(loc="upper left", framealpha=0.85)
    fig.tight_layout()
    # One matrix cell per pixel at most, merged by their maximum: nearest-neighbour
    # resampling would drop the ranks between the pixels' centres, and a wave with them.
    box = ax.get_window_extent()
    im.set_data(pool_max(frac, math.floor(box.height), math.floor(box.width)))
    save(fig, d, "idlewave_heatmap")
    return True


def amplitude(d, info, fronts):
    """2. Amplitude against distance, per front; nothing without a front point."""
    res = info.get("timer_resolution_s", TIMER_RESOLUTION_S)
    series = []
    for i, w in enumerate(info["waves"]):
        for f in w["fronts"]:
            pts = front_points(fronts, i, f)
            if pts:
                series.append((i, w, f, [int(r["distance"]) for r in pts], [float(r["amplitude_s"]) for r in pts]))
    if not series:
        return False
    bottom, top = amplitude_limits([a for s in series for a in s[4]])
    s, u = unit(top / 1.2)
    fig, ax = plt.subplots(figsize=(11, 6.5))
    for i, w, f, dist, amp in series:
        up = f["direction"] != "down"
        # A decay needs two distances (a front that reached one rank has none, not 0).
        decay = (decay_text(f['decay_s_per_rank'], res, units(info)[0]) if len(set(dist)) >= 2
                 else f"{len(dist)} {'rank' if len(dist) == 1 else 'ranks'} at one distance")
        ax.plot(dist, [x * s for x in amp], marker="o" if up else "s", ms=4, lw=1.5, color=COLORS[i % len(COLORS)],
                ls="-" if up else ":", label=f"rank {w['source_rank']} {f['direction']}: {decay}, stops: {f['stop']}")
    ax.set_xlabel(f"distance from the delayed rank [{units(info)[1]}]")
    ax.set_ylabel(f"idle period at the front [{u}]")
    ax.set_ylim(bottom * s, top * s)
    ax.set_xlim(left=0)
    ax.set_title("Amplitude of the idle wave")
    ax.legend(loc="lower left", framealpha=0.85)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, d, "idlewave_amplitude")
    return True


def selfsync(d, info):
    """3. Self-synchronisation: idle periods of the ranks next to the slow group."""
    ss = info["self_sync"]
    path = os.path.join(d, "idlewave_selfsync.csv")
    if not ss["slow_group"] or not os.path.exists(path):
        return False
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return False
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
    ax.set_title(f"Self-synchronisation: fast ranks idle {readable(ss['fast_idle_per_iteration_s'])} per "
                 f"iteration (T_slow − T_fast = {readable(ss['expected_idle_s'])})", fontsize=16)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    save(fig, d, "idlewave_selfsync")
    return True


def main(d):
    with open(os.path.join(d, "idlewave.json")) as f:
        info = json.load(f)
    idle = np.load(os.path.join(d, info["matrix"]["file"]))
    with open(os.path.join(d, "idlewave_fronts.csv"), newline="") as f:
        fronts = list(csv.DictReader(f))
    plt.rcParams.update({"font.size": 17, "axes.titlesize": 19, "axes.labelsize": 18, "legend.fontsize": 14})
    heatmap(d, info, idle, fronts)
    amplitude(d, info, fronts)
    selfsync(d, info)


if __name__ == "__main__":
    main(sys.argv[1])
