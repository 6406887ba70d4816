"""The waitlab Python module (python/, docs/python.md) against the C++ reader's known values.

Run by ctest (label python) with PYTHONPATH=<the module's build directory>,
WAITLAB_SOURCE_DIR=<the repository> and WAITLAB_BINARY=<the waitlab command line>.
Fixture D's values are tests/trace/test_paraver.cpp's (FixtureDAsExtraeWritesIt); the Score-P
ping-pong's are otf2-print's records of tests/data/scorep/ping-pong-otf2 (ticks at 2095197216
per second from the global offset 7397466976977800).
"""
import functools
import json
import os
import pathlib
import subprocess
import tempfile
import unittest

import numpy as np
import pandas as pd

import waitlab

SOURCE = os.environ["WAITLAB_SOURCE_DIR"]
DATA = os.path.join(SOURCE, "tests", "data")
FIXTURE_D = os.path.join(DATA, "fixture_d.prv")
PING_PONG = os.path.join(DATA, "scorep", "ping-pong-otf2", "traces.otf2")
TICKS = 2095197216
OFFSET = 7397466976977800


def seconds(ticks):
    return (ticks - OFFSET) / TICKS


@functools.lru_cache(maxsize=None)
def read_once(path):
    """Each trace read once for the tests of its class (the tables are kept by the Trace)."""
    return waitlab.read(path)


class FixtureD(unittest.TestCase):
    t = property(lambda self: read_once(FIXTURE_D))

    def test_events_are_the_readers(self):
        e = self.t.events
        self.assertEqual(list(e.columns), ["Timestamp (s)", "Event Type", "Name", "Process", "Thread",
                                           "Kind", "Partner", "Tag", "Bytes"])
        self.assertEqual(list(e["Timestamp (s)"]), [0, 0.5, 0.5, 0.51, 0.6, 0, 0.2, 0.52, 0.52, 0.62])
        self.assertEqual(list(e["Event Type"]), ["Enter", "Enter", "Instant", "Leave", "Leave"] * 2)
        self.assertEqual(list(e["Name"]), ["main", "MPI_Send", "Send", "MPI_Send", "main",
                                           "main", "MPI_Recv", "Recv", "MPI_Recv", "main"])
        self.assertEqual(list(e["Kind"]), ["Enter", "Enter", "Send", "Leave", "Leave",
                                           "Enter", "Enter", "Recv", "Leave", "Leave"])
        self.assertEqual(list(e["Process"]), [0] * 5 + [1] * 5)
        self.assertEqual(list(e["Thread"]), [0] * 10)
        self.assertEqual(list(e["Partner"]), [-1, -1, 1, -1, -1, -1, -1, 0, -1, -1])
        self.assertEqual(list(e["Tag"]), [0, 0, 7, 0, 0, 0, 0, 7, 0, 0])
        self.assertEqual(list(e["Bytes"]), [0, 0, 1048576, 0, 0, 0, 0, 1048576, 0, 0])

    def test_dtypes(self):
        e = self.t.events
        self.assertEqual(e["Timestamp (s)"].dtype, np.float64)
        for name in ("Event Type", "Name", "Kind"):
            self.assertIsInstance(e[name].dtype, pd.CategoricalDtype, name)
        self.assertEqual(e["Process"].dtype, np.int32)
        self.assertEqual(e["Bytes"].dtype, np.uint64)
        m = self.t.messages
        self.assertEqual(m["Send Time (s)"].dtype, np.float64)
        self.assertIsInstance(m["Send Call"].dtype, pd.CategoricalDtype)
        self.assertEqual(self.t.ranks["First Time (s)"].dtype, np.float64)

    def test_message(self):
        m = self.t.messages
        self.assertEqual(len(m), 1)
        row = m.iloc[0]
        self.assertEqual((row["Sender"], row["Receiver"], row["Tag"], row["Bytes"]), (0, 1, 7, 1048576))
        self.assertEqual((row["Send Time (s)"], row["Receive Time (s)"]), (0.5, 0.52))
        self.assertEqual((row["Send Call"], row["Receive Call"]), ("MPI_Send", "MPI_Recv"))
        self.assertEqual(row["Communicator"], 0)
        # The message's events are its rows in .events.
        self.assertEqual(self.t.events.loc[row["Send Event"], "Kind"], "Send")
        self.assertEqual(self.t.events.loc[row["Receive Event"], "Kind"], "Recv")
        self.assertEqual((row["Send Event"], row["Receive Event"]), (2, 7))

    def test_regions_and_ranks(self):
        r = self.t.regions
        self.assertEqual(list(r["Name"]), ["main", "MPI_Send", "MPI_Recv"])
        self.assertEqual(list(r["File"]), ["", "MPI", "MPI"])
        self.assertTrue(pd.isna(r["MPI Op"][0]))
        self.assertEqual(list(r["MPI Op"][1:]), ["MPI_Send", "MPI_Recv"])
        self.assertEqual(list(r["Is MPI"]), [False, True, True])
        self.assertEqual(list(r["Enters"]), [2, 1, 1])
        k = self.t.ranks
        self.assertEqual(list(k["Process"]), [0, 1])
        self.assertEqual(list(k["Events"]), [5, 5])
        self.assertEqual(list(k["First Time (s)"]), [0, 0])
        self.assertEqual(list(k["Last Time (s)"]), [0.6, 0.62])

    def test_trace_facts(self):
        self.assertEqual(self.t.origin, "extrae")
        self.assertEqual(self.t.span, (0.0, 0.62))
        self.assertEqual(self.t.path, FIXTURE_D)

    def test_timeline_is_in_global_time_order(self):
        tl = self.t.timeline
        # Stable: ties keep the order of `events` (rank 0's Enter MPI_Send before its Send at 0.5 s).
        self.assertEqual(list(tl.index), [0, 5, 6, 1, 2, 3, 7, 8, 4, 9])
        self.assertTrue(tl["Timestamp (s)"].is_monotonic_increasing)
        self.assertEqual(tl.loc[self.t.messages["Receive Event"].iloc[0], "Kind"], "Recv")

    def test_tables_are_built_once(self):
        self.assertIs(self.t.events, self.t.events)

    def test_wlt_written_by_the_command_line_reads_alike(self):
        with tempfile.TemporaryDirectory() as d:
            wlt = os.path.join(d, "fixture_d.wlt")
            subprocess.run([os.environ["WAITLAB_BINARY"], "convert", FIXTURE_D, wlt], check=True,
                           stdout=subprocess.DEVNULL)
            w = waitlab.read(wlt)
            pd.testing.assert_frame_equal(w.events, self.t.events)
            pd.testing.assert_frame_equal(w.messages, self.t.messages)


class ScorePPingPong(unittest.TestCase):
    t = property(lambda self: read_once(PING_PONG))

    def test_ranks(self):
        k = self.t.ranks
        self.assertEqual(list(k["Process"]), [0, 1])
        # 21 ENTER, 21 LEAVE, 8 MPI_SEND, 8 MPI_RECV records per location, and PROGRAM_BEGIN and
        # PROGRAM_END, which the reader makes the Enter and Leave of a region named after the program.
        self.assertEqual(list(k["Events"]), [60, 60])
        self.assertEqual(list(k["First Time (s)"]), [seconds(7397466977622557), seconds(7397466976977800)])
        self.assertEqual(list(k["Last Time (s)"]), [seconds(7397467395186088), seconds(7397467395188508)])
        counts = self.t.events.groupby("Process")["Kind"].value_counts()
        self.assertEqual(counts[(0, "Send")], 8)
        self.assertEqual(counts[(1, "Recv")], 8)
        self.assertEqual(counts[(1, "Enter")], 22)  # 21 ENTER and PROGRAM_BEGIN

    def test_first_message(self):
        m = self.t.messages.sort_values("Send Time (s)")
        self.assertEqual(len(m), 16)
        first = m.iloc[0]
        self.assertEqual((first["Sender"], first["Receiver"], first["Tag"], first["Bytes"]), (0, 1, 10, 16384))
        self.assertEqual(first["Send Time (s)"], seconds(7397467382760060))
        self.assertEqual(first["Receive Time (s)"], seconds(7397467382799971))

    def test_region_names(self):
        names = set(self.t.regions["Name"])
        for name in ("int main(int, char**)", "MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Comm_rank"):
            self.assertIn(name, names)
        e = self.t.events
        self.assertEqual(list(e["Name"].iloc[:2]), ["ping-pong.otf2", "int main(int, char**)"])
        self.assertEqual(self.t.origin, "scorep")

    def test_archive_directory_reads_alike(self):
        d = waitlab.read(os.path.dirname(PING_PONG))
        pd.testing.assert_frame_equal(d.events, self.t.events)


class HybridThreads(unittest.TestCase):
    """tests/data/hybrid_2x2.md: 2 ranks x 2 threads; the workers hold no events, only OpenMP
    intervals and states (not created, synchronisation, idle)."""

    def test_ranks_then_their_threads(self):
        k = waitlab.read(pathlib.Path(DATA) / "hybrid_2x2.prv").ranks
        self.assertEqual(list(k["Process"]), [0, 1, 0, 1])
        self.assertEqual(list(k["Thread"]), [0, 0, 1, 1])
        self.assertEqual(list(k["Events"]), [4, 4, 0, 0])
        self.assertEqual(list(k["First Time (s)"][:2]), [600e-9, 800e-9])
        self.assertEqual(list(k["Last Time (s)"][:2]), [900e-9, 900e-9])
        self.assertTrue(k["First Time (s)"][2:].isna().all())
        self.assertEqual(list(k["OpenMP Intervals"]), [2, 2, 1, 1])
        self.assertEqual(list(k["State Intervals"]), [1, 0, 3, 3])


class Analyze(unittest.TestCase):
    def test_wait_states_of_fixture_d(self):
        # Rank 1 enters MPI_Recv at 0.2 s, rank 0 MPI_Send at 0.5 s: 0.3 s of Late Sender.
        a = waitlab.analyze(FIXTURE_D, ["waitstate"])
        self.assertEqual(a.ran, ["waitstate"])
        w = a.tables["waitstates"]
        self.assertEqual(list(w.columns), ["pattern", "call_path", "rank", "seconds", "instances"])
        late = w[w["pattern"] == "late_sender"]
        self.assertEqual(len(late), 1)
        self.assertEqual((late["call_path"].iloc[0], late["rank"].iloc[0], late["instances"].iloc[0]),
                         ("main/MPI_Recv", 1, 1))
        self.assertEqual(late["seconds"].iloc[0], 0.5 - 0.2)
        self.assertIsInstance(w["pattern"].dtype, pd.CategoricalDtype)
        self.assertEqual(a.summary["waitstate"]["ranks"], 2)

    def test_times_are_float64_even_when_whole(self):
        # Fixture D's long-term delay costs are all 0 in delay.csv, written "0".
        d = waitlab.analyze(FIXTURE_D, ["delay"]).tables["delay"]
        self.assertEqual(list(d["long_term_s"]), [0.0] * len(d))
        self.assertEqual(d["long_term_s"].dtype, np.float64)
        self.assertEqual(d["rank"].dtype, np.int64)

    def test_needs_run_first(self):
        a = waitlab.analyze(waitlab.read(FIXTURE_D), "delay")
        self.assertEqual(a.ran, ["waitstate", "delay"])
        self.assertIn("delay", a.tables)

    def test_options_are_the_command_lines(self):
        # `waitlab analyze -a timeresolved --windows 4 --ideal lamport`: the same windows, byte for byte.
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([os.environ["WAITLAB_BINARY"], "analyze", FIXTURE_D, "-a", "timeresolved", "--windows", "4",
                            "--ideal", "lamport", "--out", d], check=True, stdout=subprocess.DEVNULL)
            expected = waitlab._table(os.path.join(d, "timeresolved.csv"))
        a = waitlab.analyze(FIXTURE_D, "timeresolved", windows=4, ideal="lamport")
        self.assertEqual(len(a.tables["timeresolved"]), 4)
        pd.testing.assert_frame_equal(a.tables["timeresolved"], expected)
        self.assertEqual(len(waitlab.analyze(FIXTURE_D, "timeresolved", windows="2").tables["timeresolved"]), 2)
        # The Figure's parallel efficiency is the table's, window by window.
        from matplotlib.figure import Figure
        fig = a.figures["timeresolved"]
        self.assertIsInstance(fig, Figure)
        pe = next(line for line in fig.axes[0].lines if line.get_label() == "parallel efficiency")
        self.assertEqual(list(pe.get_ydata()[:-1]), list(expected["pe"]))
        self.assertEqual(list(pe.get_xdata()), list(expected["start_s"]) + [expected["end_s"].iloc[-1]])

    def test_smpi_estimate_by_a_child_waitlab(self):
        # A measured trace: `ideal` auto is both, the SMPI replay by a child waitlab as for the command line.
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([os.environ["WAITLAB_BINARY"], "analyze", FIXTURE_D, "-a", "timeresolved", "--out", d],
                           check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(d, "summary.json")) as f:
                expected = json.load(f)["analyses"]["timeresolved"]
        a = waitlab.analyze(FIXTURE_D, "timeresolved")
        self.assertEqual(a.summary["timeresolved"], expected)
        self.assertIn("smpi_replay", json.dumps(expected))

    def test_bad_option_value_is_the_command_lines_error(self):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([os.environ["WAITLAB_BINARY"], "analyze", FIXTURE_D, "-a", "timeresolved", "--windows",
                                "0", "--out", d], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.analyze(FIXTURE_D, "timeresolved", windows=0)
        self.assertEqual("waitlab: error: " + str(cm.exception) + "\n", p.stderr)
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.analyze(FIXTURE_D, "waitstate", windows="10ms")
        self.assertIn("--windows: only for the timeresolved analysis", str(cm.exception))

    def test_unknown_option(self):
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.analyze(FIXTURE_D, "waitstate", window="10ms")
        self.assertIn("unknown option 'window'; did you mean 'windows'?", str(cm.exception))
        self.assertIn("allowed: " + ", ".join(waitlab.analyze_options()), str(cm.exception))

    def test_clock_correction_leaves_the_trace_as_read(self):
        t = waitlab.read(FIXTURE_D)
        before = t.events["Timestamp (s)"].copy()
        a = waitlab.analyze(t, "waitstate", clock_correction="clamp")
        self.assertEqual(a.clock_correction["mode"], "clamp")
        pd.testing.assert_series_equal(t.events["Timestamp (s)"], before)

    def test_unknown_analysis(self):
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.analyze(FIXTURE_D, ["waitstates"])
        self.assertIn("did you mean 'waitstate'", str(cm.exception))


class Errors(unittest.TestCase):
    def test_bad_trace_names_the_file_and_line(self):
        bad = os.path.join(DATA, "paraver_bad_header.prv")
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.read(bad)
        self.assertIn("paraver_bad_header.prv:1: bad Paraver header", str(cm.exception))
        self.assertIsInstance(cm.exception, ValueError)

    def test_ti_is_refused_with_the_readers_message(self):
        ti = os.path.join(DATA, "ti", "smpi_calls.ti")
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.read(ti)
        self.assertIn(ti + ": read as a time-independent (TI) trace, which has no times", str(cm.exception))

    def test_missing_path(self):
        with self.assertRaises(waitlab.InputError) as cm:
            waitlab.read(os.path.join(DATA, "no-such-trace.prv"))
        self.assertIn("no-such-trace.prv", str(cm.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
