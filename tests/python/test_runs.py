"""Runs from Python (python/waitlab/__init__.py, docs/python.md "Runs") against the command line.

Run by ctest (label python) with PYTHONPATH=<the module's build directory>,
WAITLAB_SOURCE_DIR=<the repository> and WAITLAB_BINARY=<the waitlab command line>. Every run
here is also made by `waitlab` itself, and the two are compared byte for byte or value for value.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np
import pandas as pd
import yaml

import waitlab

SOURCE = os.environ["WAITLAB_SOURCE_DIR"]
WAITLAB = os.environ["WAITLAB_BINARY"]
DATA = os.path.join(SOURCE, "tests", "python", "data")
SMALL = os.path.join(DATA, "heat1d_small.yaml")
MISSPELT = os.path.join(DATA, "misspelt.yaml")


def cli(*arguments, check=True):
    """`waitlab ARGUMENTS...`: (exit code, stdout, the error line without `waitlab: error: `)."""
    p = subprocess.run([WAITLAB, *arguments], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"waitlab {' '.join(arguments)}: exit {p.returncode}: {p.stderr}")
    errors = [line[len("waitlab: error: "):] for line in p.stderr.splitlines() if line.startswith("waitlab: error: ")]
    return p.returncode, p.stdout, errors[-1] if errors else ""


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


class RunAsTheCommandLine(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="waitlab-test-runs-")
        cls.cli_dir = os.path.join(cls.tmp.name, "cli")
        cli("run", SMALL, "--out", cls.cli_dir, "--no-progress")
        cls.r = waitlab.run(SMALL)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_summary_is_the_command_lines_to_the_bit(self):
        self.assertEqual(read_bytes(os.path.join(self.r.dir, "summary.json")),
                         read_bytes(os.path.join(self.cli_dir, "summary.json")))
        with open(os.path.join(self.cli_dir, "summary.json")) as f:
            expected = json.load(f)
        self.assertEqual(self.r.summary["simulated_time_s"], expected["simulated_time_s"])
        self.assertGreater(self.r.summary["simulated_time_s"], 0.065)  # 60 iterations of 1 ms and a 5 ms delay

    def test_tables_are_the_command_lines(self):
        # idlewave_selfsync.csv only with a slow group, which this run has not.
        self.assertEqual(sorted(self.r.tables), ["delay", "idlewave_fronts", "waitstates"])
        for name, frame in self.r.tables.items():
            pd.testing.assert_frame_equal(frame, waitlab._table(os.path.join(self.cli_dir, name + ".csv")))
        self.assertIs(self.r["waitstates"], self.r.tables["waitstates"])

    def test_wait_states_sum_to_the_summarys(self):
        w = self.r.tables["waitstates"]
        patterns = self.r.summary["analyses"]["waitstate"]["patterns"]
        by_pattern = w.groupby("pattern", observed=True)["seconds"].sum()
        self.assertGreater(len(by_pattern), 0)
        for pattern, seconds in by_pattern.items():
            self.assertAlmostEqual(seconds, patterns[pattern]["total_s"], delta=1e-12 * max(1.0, seconds))
        self.assertGreater(by_pattern["late_sender"], 0.005 * 2)  # the delay idles both neighbours

    def test_trace_is_read_lazily_from_the_run(self):
        t = self.r.trace
        self.assertEqual(t.path, os.path.join(self.r.dir, "trace.wlt"))
        self.assertEqual(sorted(t.ranks["Process"].unique()), list(range(32)))
        self.assertIs(self.r.trace, t)

    def test_idle_wave_figure_holds_the_idle_matrix(self):
        from matplotlib.figure import Figure
        fig = self.r.figures["idlewave_heatmap"]
        self.assertIsInstance(fig, Figure)
        with open(os.path.join(self.r.dir, "idlewave.json")) as f:
            matrix = json.load(f)["matrix"]
        idle = np.load(os.path.join(self.r.dir, "idle_matrix.npy"))
        self.assertEqual(idle.shape[0], 32)
        image = np.asarray(fig.axes[0].images[0].get_array())
        np.testing.assert_array_equal(image, idle / matrix["bin_s"])
        self.assertGreater(image.max(), 0)

    def test_analyze_a_run_as_the_command_line(self):
        # The analyses of the run's own trace are those the run wrote.
        a = waitlab.analyze(self.r, ["waitstate", "delay"])
        pd.testing.assert_frame_equal(a.tables["waitstates"], self.r.tables["waitstates"])
        pd.testing.assert_frame_equal(a.tables["delay"], self.r.tables["delay"])

    def test_temporary_output_goes_with_the_run(self):
        r = waitlab.run(SMALL, workload__iterations=12, perturbations__0__iteration=2)
        d = r.dir
        self.assertTrue(os.path.isfile(os.path.join(d, "summary.json")))
        del r
        self.assertFalse(os.path.exists(d))


class Footprint(unittest.TestCase):
    """run.footprint from Python: the run and its twin without the delay (docs/analyses.md)."""

    @classmethod
    def setUpClass(cls):
        cls.r = waitlab.run(SMALL, run__footprint="delay")

    def test_noise_free_wave_shifts_every_rank_by_the_delay(self):
        t = self.r.tables["footprint"]
        self.assertEqual(len(t), 32)
        self.assertEqual(list(t["offset"]), [r - 16 for r in t["rank"]])
        # The 5 ms delay reached every rank of the chain by the end (16 ranks down, 15 up in the
        # 50 iterations after it): each is shifted by exactly the delay, and all of it reaches the end.
        np.testing.assert_allclose(t["end_shift_s"], 0.005, rtol=0, atol=1e-12)
        fp = self.r.summary["analyses"]["footprint"]
        self.assertEqual(fp["removed"], ["delay"])
        self.assertEqual(fp["source_rank"], 16)
        self.assertAlmostEqual(fp["reached_end_s"], 0.005, delta=1e-12)
        self.assertAlmostEqual(fp["reached_fraction"], 1.0, delta=1e-9)
        self.assertEqual([(x["down"], x["up"]) for x in fp["reach"]], [(16, 15)] * 4)

    def test_footprint_figures_hold_the_files(self):
        from matplotlib.figure import Figure
        fig = self.r.figures["footprint"]
        self.assertIsInstance(fig, Figure)
        shift = np.load(os.path.join(self.r.dir, "footprint_shift.npy"))
        np.testing.assert_array_equal(np.asarray(fig.axes[0].images[0].get_array()), shift * 1e3)
        idle = np.load(os.path.join(self.r.dir, "idle_matrix.npy"))
        self.assertEqual(shift.shape, idle.shape)
        dist = self.r.figures["footprint_distance"]
        t = self.r.tables["footprint"].sort_values("offset")
        np.testing.assert_array_equal(dist.axes[0].lines[0].get_ydata(), t["peak_shift_s"].abs().to_numpy() * 1e3)

    def test_the_twin_is_the_command_lines(self):
        with tempfile.TemporaryDirectory(prefix="waitlab-test-footprint-") as d:
            cli("run", SMALL, "--out", d, "--no-progress", "--footprint", "delay")
            for f in ("summary.json", "footprint.csv", "footprint.json"):
                self.assertEqual(read_bytes(os.path.join(d, f)), read_bytes(os.path.join(self.r.dir, f)), f)
        # The twin's trace, read on first use: the same program (its events), without the delay.
        self.assertEqual(len(self.r.twin.events), len(self.r.trace.events))
        self.assertEqual(self.r.twin.attributes["scenario.perturbations"], "")

    def test_a_selector_that_matches_nothing_raises_where_it_is(self):
        with self.assertRaises(waitlab.InputError) as e:
            waitlab.run(SMALL, run__footprint="noise")
        self.assertIn("run.footprint: 'noise' matches no perturbation of the scenario", str(e.exception))
        self.assertEqual(e.exception.key, "run.footprint")


class Overrides(unittest.TestCase):
    def test_keywords_are_the_command_lines_set(self):
        with tempfile.TemporaryDirectory() as d:
            cli("run", SMALL, "--out", os.path.join(d, "cli"), "--no-progress", "--set", "workload.ranks=16",
                "--set", "perturbations[0].rank=3", "--set", "outputs.analyses=[waitstate]")
            r = waitlab.run(SMALL, out=os.path.join(d, "py"), workload__ranks=16, perturbations__0__rank=3,
                            outputs__analyses=["waitstate"])
            self.assertEqual(read_bytes(os.path.join(d, "py", "summary.json")),
                             read_bytes(os.path.join(d, "cli", "summary.json")))
            self.assertEqual(r.summary["ranks"], 16)
            r2 = waitlab.run(SMALL, out=os.path.join(d, "py2"),
                             set={"workload.ranks": 16, "perturbations[0].rank": 3, "outputs.analyses": ["waitstate"]})
            self.assertEqual(r2.summary, r.summary)

    def test_unknown_key_is_the_command_lines_error(self):
        code, _, message = cli("run", SMALL, "--out", "/nonexistent/never-written", "--set", "workload.ranx=3",
                               check=False)
        self.assertEqual(code, 2)
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.run(SMALL, out="/nonexistent/never-written", workload__ranx=3)
        self.assertEqual(str(cm.exception), message)
        self.assertIn("did you mean 'ranks'", message)
        self.assertEqual(cm.exception.key, "workload.ranx")


class ScenarioErrors(unittest.TestCase):
    def test_misspelt_key_has_file_line_column(self):
        code, _, message = cli("run", MISSPELT, check=False)
        self.assertEqual(code, 2)
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.run(MISSPELT)
        e = cm.exception
        self.assertEqual(str(e), message)
        self.assertEqual((e.file, e.line, e.column), (MISSPELT, 10, 3))
        self.assertIn("did you mean 'iterations'", str(e))
        self.assertIsInstance(e, ValueError)

    def test_checked_in_this_process_before_any_child(self):
        # No executable to start: the loader in this process finds the mistake first.
        saved = os.environ.get("WAITLAB_BIN")
        os.environ["WAITLAB_BIN"] = os.path.join(DATA, "no-such-waitlab")
        try:
            with self.assertRaises(waitlab.InputError) as cm:
                waitlab.run(MISSPELT)
            self.assertEqual(cm.exception.line, 10)
            with self.assertRaises(waitlab.InputError):
                waitlab.run(SMALL, workload__ranx=3)
            with self.assertRaises(FileNotFoundError):  # a good scenario gets as far as the child
                waitlab.run(SMALL)
        finally:
            if saved is None:
                del os.environ["WAITLAB_BIN"]
            else:
                os.environ["WAITLAB_BIN"] = saved

    def test_dict_error_names_the_key_path(self):
        with open(MISSPELT) as f:
            scenario = yaml.safe_load(f)
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.run(scenario)
        e = cm.exception
        self.assertEqual(e.key, "workload.iteratons")
        self.assertEqual((e.file, e.line, e.column), (None, None, None))
        self.assertTrue(str(e).startswith("workload.iteratons: unknown option 'iteratons' for workload 'heat1d'"),
                        str(e))

    def test_dict_bad_unit_names_its_key(self):
        with open(SMALL) as f:
            scenario = yaml.safe_load(f)
        scenario["perturbations"][0]["duration"] = "5 parsecs"
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.run(scenario)
        self.assertEqual(cm.exception.key, "perturbations[0].duration")

    def test_dict_scenario_equals_the_yaml_one(self):
        with open(SMALL) as f:
            scenario = yaml.safe_load(f)
        with tempfile.TemporaryDirectory() as d:
            waitlab.run(SMALL, out=os.path.join(d, "yaml"), workload__iterations=20)
            waitlab.run(scenario, out=os.path.join(d, "dict"), workload__iterations=20)
            for name in ("summary.json", "waitstates.csv", "delay.csv", "trace.wlt"):
                self.assertEqual(read_bytes(os.path.join(d, "dict", name)), read_bytes(os.path.join(d, "yaml", name)),
                                 name)


class Interrupt(unittest.TestCase):
    """Ctrl-C in a notebook cell: a Python process running a long simulation gets SIGINT."""

    def test_sigint_stops_the_child_and_leaves_the_output_as_it_was(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            os.mkdir(out)
            with open(os.path.join(out, "summary.json"), "w") as f:
                f.write("an earlier run's\n")
            before = {n: read_bytes(os.path.join(out, n)) for n in os.listdir(out)}
            script = textwrap.dedent("""
                import signal, sys, waitlab
                signal.signal(signal.SIGINT, signal.default_int_handler)
                try:
                    waitlab.run(sys.argv[1], out=sys.argv[2], workload__iterations=1000000)
                except KeyboardInterrupt:
                    print("KeyboardInterrupt", flush=True)
                    sys.exit(42)
                print("finished", flush=True)
                """)
            python = subprocess.Popen([sys.executable, "-c", script, SMALL, out], stdout=subprocess.PIPE, text=True)
            # Wait (on /proc, no clock) until its child waitlab has started.
            children = f"/proc/{python.pid}/task/{python.pid}/children"
            grandchild = None
            while grandchild is None and python.poll() is None:
                with open(children) as f:
                    pids = f.read().split()
                for pid in pids:
                    try:
                        if os.readlink(f"/proc/{pid}/exe") == os.path.realpath(waitlab.executable()):
                            grandchild = int(pid)
                    except OSError:
                        pass
            self.assertIsNotNone(grandchild, "the Python process ended before its waitlab started")
            python.send_signal(signal.SIGINT)
            stdout, _ = python.communicate()
            try:
                self.assertEqual((python.returncode, stdout), (42, "KeyboardInterrupt\n"))
                self.assertFalse(os.path.exists(f"/proc/{grandchild}"), "the waitlab child is still there")
            finally:
                if os.path.exists(f"/proc/{grandchild}"):  # a failed test leaves no simulation running
                    os.kill(grandchild, signal.SIGKILL)
            after = {n: read_bytes(os.path.join(out, n)) for n in os.listdir(out)}
            self.assertEqual(after, before)


class Replay(unittest.TestCase):
    def test_replay_of_a_run_is_the_command_lines(self):
        with tempfile.TemporaryDirectory() as d:
            r = waitlab.run(SMALL, out=os.path.join(d, "run"), workload__iterations=15)
            cli("replay", os.path.join(d, "run", "trace.wlt"), "--out", os.path.join(d, "cli"), "--no-progress",
                "--set", "outputs.analyses=[waitstate]")
            p = waitlab.replay(r, out=os.path.join(d, "py"), outputs__analyses=["waitstate"])
            for name in ("summary.json", "waitstates.csv"):
                self.assertEqual(read_bytes(os.path.join(d, "py", name)), read_bytes(os.path.join(d, "cli", name)), name)
            self.assertEqual(p.summary["ranks"], 32)
            self.assertEqual(len(p.trace.ranks), 32)

    def test_missing_trace_is_the_command_lines_error(self):
        missing = os.path.join(DATA, "no-such-trace.wlt")
        code, _, message = cli("replay", missing, "--out", "/nonexistent/never-written", check=False)
        self.assertEqual(code, 2)
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.replay(missing, out="/nonexistent/never-written")
        self.assertEqual(str(cm.exception), message)
        self.assertIn("no-such-trace.wlt", message)


class Studies(unittest.TestCase):
    def test_sweep_is_the_command_lines(self):
        with tempfile.TemporaryDirectory() as d:
            cli("sweep", SMALL, "--grid", "workload.ranks=24,32", "--set", "workload.iterations=15", "--out",
                os.path.join(d, "cli"))
            s = waitlab.sweep(SMALL, {"workload.ranks": [24, 32]}, out=os.path.join(d, "py"), workload__iterations=15)
            self.assertEqual(read_bytes(os.path.join(d, "py", "sweep.csv")), read_bytes(os.path.join(d, "cli", "sweep.csv")))
            self.assertEqual(list(s.table["name"]), ["point_0000", "point_0001"])
            self.assertEqual(list(s.runs), ["point_0000", "point_0001"])
            self.assertEqual(s["point_0001"].summary["ranks"], 32)
            # sweep.csv writes 15 significant digits, summary.json every digit.
            np.testing.assert_allclose(s.table["simulated_time_s"], [s[n].summary["simulated_time_s"] for n in s.runs],
                                       rtol=1e-14, atol=0)

    def test_whatif_variant(self):
        s = waitlab.whatif(SMALL, variants=[{"name": "no_delay", "remove": ["delay"]}], workload__iterations=15)
        self.assertEqual(list(s.table["name"]), ["baseline", "no_delay"])
        base, nodelay = (s.runs[n].summary["simulated_time_s"] for n in ("baseline", "no_delay"))
        self.assertAlmostEqual(base - nodelay, 0.005, delta=1e-9)

    def test_whatif_bad_variant_raises_before_running(self):
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.whatif(SMALL, variants=["{name: x, nosuch: 1}"], out="/nonexistent/never-written")
        code, _, message = cli("whatif", SMALL, "--variant", "{name: x, nosuch: 1}", "--out",
                               "/nonexistent/never-written", check=False)
        self.assertEqual(code, 2)
        self.assertEqual(str(cm.exception), message)


class PopAndValidation(unittest.TestCase):
    def test_pop_table_is_the_command_lines(self):
        extrae = os.path.join(SOURCE, "tests", "data", "extrae")
        traces = [os.path.join(extrae, "epoch_1proc.prv.gz"), os.path.join(extrae, "epoch_2proc.prv.gz")]
        with tempfile.TemporaryDirectory() as d:
            cli("pop", *traces, "--out", os.path.join(d, "cli"))
            p = waitlab.pop(traces)
            for name in ("pop.csv", "modelfactors.csv", "pop.json"):
                self.assertEqual(read_bytes(os.path.join(p.dir, name)), read_bytes(os.path.join(d, "cli", name)), name)
        self.assertEqual(list(p.table["ranks"]), [1, 2])
        self.assertEqual(p.modelfactors.columns[0], "Number of processes")
        self.assertEqual(len(p.summary["runs"]), 2)

    def test_pop_bad_trace(self):
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.pop([os.path.join(SOURCE, "tests", "data", "paraver_bad_header.prv")])
        self.assertEqual(cm.exception.line, 1)

    def test_validation_rows_are_the_command_lines(self):
        with tempfile.TemporaryDirectory() as d:
            cli("validate", SMALL, "--no-plot", "--out", os.path.join(d, "cli"))
            v = waitlab.validate(SMALL, out=os.path.join(d, "py"))
            self.assertEqual(read_bytes(os.path.join(d, "py", "validation.csv")),
                             read_bytes(os.path.join(d, "cli", "validation.csv")))
            self.assertGreater(len(v.rows), 0)
            self.assertEqual(set(v.rows["scenario"]), {"heat1d_small"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
