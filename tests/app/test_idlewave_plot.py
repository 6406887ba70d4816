# The idle-wave pictures' arithmetic (app/plots/idlewave.py), run by CTest as
# idlewave_plot.python: max-pooling keeps a narrow band that nearest-neighbour sampling drops,
# decays are rounded to the time resolution, the amplitude plot's range holds a flat line
# inside the frame, the star is at the delay's start, and a run without a wave gets a heat
# map but no amplitude picture.
# Usage: python3 test_idlewave_plot.py SOURCE_DIR
import csv
import json
import os
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "app", "plots"))
import idlewave  # noqa: E402


def brute_pool(m, rows, cols):
    # The same blocks as pool_max, by loops: block i holds rows floor(i·n/r) .. floor((i+1)·n/r) − 1.
    n, k = m.shape
    r, c = min(rows, n), min(cols, k)
    out = np.zeros((r, c), dtype=m.dtype)
    for i in range(r):
        for j in range(c):
            out[i, j] = m[i * n // r:(i + 1) * n // r, j * k // c:(j + 1) * k // c].max()
    return out


class PoolMax(unittest.TestCase):
    def test_every_cell_is_the_maximum_of_its_block(self):
        rng = np.random.default_rng(16)
        m = rng.random((103, 37)).astype(np.float32)
        got = idlewave.pool_max(m, 10, 7)
        self.assertEqual(got.shape, (10, 7))
        np.testing.assert_array_equal(got, brute_pool(m, 10, 7))
        self.assertEqual(float(got.max()), float(m.max()))

    def test_a_matrix_that_fits_is_unchanged(self):
        m = np.arange(12, dtype=np.float32).reshape(3, 4)
        np.testing.assert_array_equal(idlewave.pool_max(m, 600, 1000), m)
        np.testing.assert_array_equal(idlewave.pool_max(m, 3, 2), [[1, 3], [5, 7], [9, 11]])

    def test_a_five_rank_band_survives_at_4096_ranks(self):
        # A 5 ms wave in 1 ms bins at 4096 ranks: 5 ranks idle at once, drawn on 600 pixel rows.
        m = np.zeros((4096, 200), dtype=np.float32)
        m[2004:2009, 40:45] = 1.0
        rows = 600
        # Nearest-neighbour sampling (the pixel centres' rows) misses it...
        centres = ((np.arange(rows) + 0.5) * 4096 / rows).astype(int)
        self.assertEqual(float(m[centres].max()), 0.0)
        # ... max-pooling keeps it, in the pixel rows that hold ranks 2004–2008 and nowhere else.
        got = idlewave.pool_max(m, rows, 200)
        hit = sorted(set(np.nonzero(got)[0].tolist()))
        self.assertEqual(hit, sorted({i for i in range(rows) if i * 4096 // rows <= 2008 and
                                      (i + 1) * 4096 // rows - 1 >= 2004}))
        self.assertEqual(sorted(set(np.nonzero(got)[1].tolist())), list(range(40, 45)))


class Words(unittest.TestCase):
    def test_decays_are_rounded_to_the_time_resolution(self):
        self.assertEqual(idlewave.decay_text(3.09e-18), "no decay")
        self.assertEqual(idlewave.decay_text(-2e-13), "no decay")  # not "-0"
        self.assertEqual(idlewave.decay_text(-1.4657546252608546e-09), "decay -1.466 ns/rank")
        self.assertEqual(idlewave.decay_text(2.5e-6), "decay 2.5 µs/rank")
        self.assertEqual(idlewave.decay_text(-1.4657546252608546e-09, 1e-9, "hop"), "decay -1 ns/hop")

    def test_a_flat_amplitude_is_inside_the_frame(self):
        lo, hi = idlewave.amplitude_limits([0.02] * 100)
        self.assertEqual(lo, 0.0)
        self.assertAlmostEqual(hi, 0.024)
        self.assertEqual(idlewave.amplitude_limits([]), (0.0, 1.0))

    def test_the_star_is_at_the_delays_start(self):
        info = {"t_exec_s": 0.001}
        w = {"source_time_s": 0.0411613, "delay_s": 0.02, "injected": True}
        self.assertAlmostEqual(idlewave.wave_onset(w, info), 0.0201613)
        self.assertAlmostEqual(idlewave.wave_onset(dict(w, injected=False), info), 0.0211613)
        self.assertEqual(idlewave.wave_onset(dict(w, onset_s=0.5), info), 0.5)


class Pictures(unittest.TestCase):
    def run_dir(self, waves):
        d = tempfile.mkdtemp(prefix="waitlab-idlewave-plot-")
        ranks, bins, b = 4096, 120, 0.001
        idle = np.zeros((ranks, bins), dtype=np.float32)
        idle[2001:2006, 40:45] = b
        np.save(os.path.join(d, "idle_matrix.npy"), idle)
        info = {"t_exec_s": b, "predicted_ranks_per_s": 1000.0, "waves": waves,
                "matrix": {"t0_s": 0.0, "bin_s": b, "bins": bins, "ranks": ranks, "file": "idle_matrix.npy"},
                "self_sync": {"slow_group": False}}
        with open(os.path.join(d, "idlewave.json"), "w") as f:
            json.dump(info, f)
        with open(os.path.join(d, "idlewave_fronts.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["wave", "source_rank", "direction", "rank", "distance", "time_s", "iteration", "amplitude_s"])
            for i in range(1, 6) if waves else []:
                w.writerow([0, 2000, "up", 2000 + i, i, 0.040 + i * 0.001, 40 + i, 0.005])
        return d

    def test_no_wave_no_amplitude_picture(self):
        d = self.run_dir([])
        idlewave.main(d)
        self.assertTrue(os.path.exists(os.path.join(d, "idlewave_heatmap.png")))
        self.assertFalse(os.path.exists(os.path.join(d, "idlewave_amplitude.png")))
        self.assertFalse(os.path.exists(os.path.join(d, "idlewave_selfsync.png")))

    def test_a_wave_gets_its_amplitude_picture(self):
        front = {"direction": "up", "speed_ranks_per_s": 1000.0, "predicted_ranks_per_s": 1000.0,
                 "measured_over_predicted": 1.0, "decay_s_per_rank": 3e-18, "stop": "end_of_trace", "at_once": False}
        d = self.run_dir([{"source_rank": 2000, "source_time_s": 0.045, "delay_s": 0.005, "injected": True,
                           "fronts": [front]}])
        idlewave.main(d)
        for name in ("idlewave_heatmap", "idlewave_amplitude"):
            self.assertTrue(os.path.exists(os.path.join(d, name + ".png")), name)

    def test_no_idle_time_no_heat_map(self):
        d = self.run_dir([])
        np.save(os.path.join(d, "idle_matrix.npy"), np.zeros((64, 10), dtype=np.float32))
        with open(os.path.join(d, "idlewave.json")) as f:
            info = json.load(f)
        info["matrix"].update(ranks=64, bins=10)
        with open(os.path.join(d, "idlewave.json"), "w") as f:
            json.dump(info, f)
        idlewave.main(d)
        self.assertFalse(os.path.exists(os.path.join(d, "idlewave_heatmap.png")))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
