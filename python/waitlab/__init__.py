"""waitlab from Python: traces as pandas DataFrames (docs/python.md).

    import waitlab
    t = waitlab.read("traces.otf2")      # .wlt, OTF2 (anchor file or directory), Paraver .prv/.prv.gz
    t.events      # one row per event: Timestamp (s), Event Type, Name, Process, Thread, ...
    t.messages    # one row per matched point-to-point message
    t.regions     # one row per region definition
    t.ranks       # one row per location (rank, thread)
    a = waitlab.analyze(t, ["waitstate", "delay"])
    a.tables["waitstates"]                # the analyses' tables, as `waitlab analyze` writes them
    a.summary["waitstate"]                # summary.json's analyses.waitstate

The reading, the matching and the columns are waitlab's C++ (the extension ``_waitlab``, the
same code as the command line); this package only makes DataFrames of the columns it exports,
without a copy and without a Python loop per row. Each table is built on first use and kept.
Bad input raises :class:`InputError` (a ValueError) with the C++ reader's message, which names
the file and the position.
"""
from functools import cached_property
import json
import os
import tempfile

import pandas as pd

from . import _waitlab

__all__ = ["Analyses", "InputError", "Trace", "analysis_names", "analyze", "read"]

InputError = _waitlab.InputError
InputError.__module__ = "waitlab"
InputError.__doc__ = ("Bad input (a trace waitlab cannot read): the message names the file and "
                      "the position, as the command line says it.")


def _frame(columns, order):
    """A DataFrame of the C++ columns (a dict of NumPy arrays; "X categories" gives the
    categories of a categorical column X, whose array holds the codes), in `order`."""
    data = {}
    for name in order:
        values = columns[name]
        categories = columns.get(name + " categories")
        if categories is not None:
            values = pd.Categorical.from_codes(values, categories=categories)
        data[name] = values
    # copy=False: each column keeps the array C++ filled (pandas 1.5 copies dict input otherwise).
    # No columns=: with it, pandas 1.5 turns every column into an object array first (the dict
    # keeps `order`).
    return pd.DataFrame(data, copy=False)


def _reader_fact(name, doc, convert=lambda value: value):
    """A read-only property of a Trace: what the C++ reader said of it."""
    return property(lambda self: convert(getattr(self._data, name)), doc=doc)


class Trace:
    """A trace read by waitlab. Its tables are DataFrames built on first use."""

    def __init__(self, data):
        self._data = data

    def __repr__(self):
        return (f"<waitlab.Trace {self.path!r}: {self._data.ranks} ranks, "
                f"{self._data.threads} further threads, origin {self.origin}>")

    path = _reader_fact("path", "The path the trace was read from.")
    origin = _reader_fact("origin", "Where the trace comes from: 'simulated', 'extrae', 'scorep' or 'unknown'.")
    attributes = _reader_fact("attributes", "The trace's key/value metadata (scenario, platform, seed, ...), "
                                            "a dict of str.")
    span = _reader_fact("span", "The run's time range the trace declares, (begin, end) in seconds, or None.")
    warnings = _reader_fact("warnings", "What the reader found suspect but read, one line each.", list)
    skipped = _reader_fact("skipped", "What the reader left out of the trace: [(kind, count), ...].", list)

    @cached_property
    def events(self):
        """One row per event, the locations of `ranks` one after the other (each in time order):
        Timestamp (s) float64; Event Type category (Enter, Leave, Instant); Name category (the
        region of an Enter/Leave, the kind of an instant event); Kind category (waitlab's event
        kind: Enter, Leave, Send, Recv, IsendStart, ...); Process, Thread int32; Partner int32
        (the peer rank of a message or the root of a collective, -1 if none); Tag int32; Bytes
        uint64 (a message's bytes, a collective's bytes sent)."""
        return _frame(self._data.event_columns(), ["Timestamp (s)", "Event Type", "Name", "Process", "Thread", "Kind",
                          "Partner", "Tag", "Bytes"])

    @cached_property
    def messages(self):
        """One row per point-to-point message waitlab's matcher pairs (MPI's non-overtaking
        order): Sender, Receiver int32; Communicator uint32 (its id; 0 is MPI_COMM_WORLD); Tag
        int32; Bytes uint64 (as sent); Send Time (s), Receive Time (s) float64 (the Send /
        IsendStart event, the Recv / IrecvComplete event); Send Call, Receive Call category
        (the MPI function that posts each side); Send Event, Receive Event int64 (their rows in
        `events`)."""
        return _frame(self._data.message_columns(),
                      ["Sender", "Receiver", "Communicator", "Tag", "Bytes", "Send Time (s)",
                       "Receive Time (s)", "Send Call", "Receive Call", "Send Event",
                       "Receive Event"])

    @cached_property
    def regions(self):
        """One row per region definition (index: the region id): Name, File str; MPI Op
        category (missing for a user region); Is MPI bool; Enters uint64 (its Enter events)."""
        return _frame(self._data.region_columns(), ["Name", "File", "MPI Op", "Is MPI", "Enters"])

    @cached_property
    def ranks(self):
        """One row per location, the ranks then their further threads: Process, Thread int32;
        Events uint64; First Time (s), Last Time (s) float64 (NaN without events); State
        Intervals, OpenMP Intervals uint64 (measured traces)."""
        return _frame(self._data.location_columns(),
                      ["Process", "Thread", "Events", "First Time (s)", "Last Time (s)",
                       "State Intervals", "OpenMP Intervals"])


def read(path):
    """Reads a trace in any format waitlab reads: a .wlt file, an OTF2 archive (its
    traces.otf2 or its directory), a Paraver trace (.prv or .prv.gz, with its .pcf and .row
    when present). A time-independent (TI) trace has no times and is refused. Raises
    InputError on bad input."""
    return Trace(_waitlab.read_trace(os.fspath(path)))


def analysis_names():
    """The registry's analyses, in the order they run (what `waitlab list` names)."""
    return list(_waitlab.analysis_names())


class Analyses:
    """The results of waitlab's analyses on one trace: `ran` (their names, in the order they ran,
    those the selected ones need included), `summary` (by analysis name: its section of
    summary.json, as `waitlab analyze` writes it) and `tables` (by table name, the CSV file's
    stem: a DataFrame of the table `waitlab analyze` writes, e.g. "waitstates", "delay",
    "critical_path_profile"; text columns as categories)."""

    def __init__(self, ran, summary, tables):
        self.ran = ran
        self.summary = summary
        self.tables = tables

    def __repr__(self):
        return f"<waitlab.Analyses {', '.join(self.ran)}: tables {', '.join(self.tables)}>"

    def __getitem__(self, table):
        return self.tables[table]


def _table(csv):
    """An analysis's CSV table as a DataFrame: its times (columns `*_s`, `seconds`) float64 even
    when every value is whole, its text columns categories."""
    frame = pd.read_csv(csv)
    for c in frame.columns:
        if c.endswith("_s") or c == "seconds":
            frame[c] = frame[c].astype("float64")
        elif frame[c].dtype == object:
            frame[c] = frame[c].astype("category")
    return frame


def analyze(trace, analyses=("waitstate",)):
    """Runs waitlab's analyses (names as `waitlab analyze -a` takes them: a list, or a string
    "waitstate,delay" or "all") on a Trace or a trace's path, with their default options.
    Returns an Analyses. An unknown name raises InputError with a "did you mean"."""
    if not isinstance(trace, Trace):
        trace = read(trace)
    names = [analyses] if isinstance(analyses, str) else list(analyses)
    tables = {}
    with tempfile.TemporaryDirectory(prefix="waitlab-analyze-") as d:
        out = trace._data.run_analyses(names, d)
        for files in out["files"].values():
            for f in files:
                if f.endswith(".csv"):
                    tables[os.path.basename(f)[:-4]] = _table(f)
    return Analyses(list(out["ran"]), json.loads(out["summary"]), tables)
