"""waitlab from Python: traces as pandas DataFrames, analyses, runs (docs/python.md).

    import waitlab
    t = waitlab.read("traces.otf2")      # .wlt, OTF2 (anchor file or directory), Paraver .prv/.prv.gz
    t.events      # one row per event: Timestamp (s), Event Type, Name, Process, Thread, ...
    t.messages    # one row per matched point-to-point message
    t.regions     # one row per region definition
    t.ranks       # one row per location (rank, thread)
    a = waitlab.analyze(t, ["waitstate", "delay"])
    a.tables["waitstates"]                # the analyses' tables, as `waitlab analyze` writes them
    a.summary["waitstate"]                # summary.json's analyses.waitstate
    r = waitlab.run("scenarios/heat1d.yaml", workload__ranks=64)   # a child `waitlab run`
    r.summary["simulated_time_s"], r.tables["waitstates"], r.trace.events, r.figures["idlewave_heatmap"]

The reading, the matching and the columns are waitlab's C++ (the extension ``_waitlab``, the
same code as the command line); this package only makes DataFrames of the columns it exports,
without a copy and without a Python loop per row. Each table is built on first use and kept.
Bad input raises :class:`InputError` (a ValueError) with the command line's message, which
names the file and the position (also as attributes: ``file``, ``line``, ``column``, ``key``).
Simulations run in a child ``waitlab`` process (SimGrid's engine starts once per process) after
the scenario is checked in this process by the same C++ loader.
"""
from functools import cached_property
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import warnings
import weakref

import numpy as np
import pandas as pd

from . import _waitlab

__all__ = ["Analyses", "InputError", "Pop", "Run", "Study", "Trace", "Validation", "analysis_names",
           "analyze", "analyze_options", "executable", "footprint_distance_figure", "footprint_figure",
           "idle_wave_figure", "pop", "read", "replay", "run", "sweep", "timeresolved_figure", "validate", "whatif"]

InputError = _waitlab.InputError
InputError.__module__ = "waitlab"
InputError.__doc__ = (
    "Bad input: the message is the command line's (without its `waitlab: error: `), naming the file "
    "and the position. Attributes: `file`, `line`, `column` (int; None where the message names "
    "none: `file:line:col: ...` gives all three, `file:line: ...` no column), `key` (the key path "
    "of a dict scenario's error, `workload.ranks`, or the key of a `--set` override; else None).")
# "file:line:col: " or "file:line: " at the start of a message (the loaders' and readers' form).
_POSITION = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+)(?::(?P<column>\d+))?: ")
_SET = re.compile(r"^--set (?P<key>[^=\s]+)=")


def _where(error):
    """(file, line, column, key) of an InputError: given when it was made (a dict scenario's),
    else read from the start of its message."""
    given = error.__dict__.get("_where")
    if given is not None:
        return given
    message = str(error.args[0]) if error.args else ""
    m = _POSITION.match(message)
    if m:
        return m["file"], int(m["line"]), int(m["column"]) if m["column"] else None, None
    m = _SET.match(message)
    return None, None, None, m["key"] if m else None


InputError.file = property(lambda self: _where(self)[0], doc="The file the message names, or None.")
InputError.line = property(lambda self: _where(self)[1], doc="The line (from 1), or None.")
InputError.column = property(lambda self: _where(self)[2], doc="The column (from 1), or None.")
InputError.key = property(lambda self: _where(self)[3],
                          doc="The key path of a dict scenario's error, or the key of a --set override; else None.")


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
        """One row per event, the locations of `ranks` one after the other (each in time order),
        as the Trace holds them; the index is the row (`messages` names its events by it). For
        one global timeline, as pipit gives it, see `timeline`. Columns:
        Timestamp (s) float64; Event Type category (Enter, Leave, Instant); Name category (the
        region of an Enter/Leave, the kind of an instant event); Kind category (waitlab's event
        kind: Enter, Leave, Send, Recv, IsendStart, ...); Process, Thread int32; Partner int32
        (the peer rank of a message or the root of a collective, -1 if none); Tag int32; Bytes
        uint64 (a message's bytes, a collective's bytes sent)."""
        return _frame(self._data.event_columns(), ["Timestamp (s)", "Event Type", "Name", "Process", "Thread", "Kind",
                          "Partner", "Tag", "Bytes"])

    @cached_property
    def timeline(self):
        """`events` in global time order, as pipit users expect them: sorted by Timestamp (s),
        ties in the order of `events` (location by location, then each location's order: a
        stable sort, so an Enter stays before the Leave and the instant events at its time).
        The index stays that of `events`, so `messages`' Send Event and Receive Event still find
        their rows with `.loc`. The same columns; a second frame (the events' columns taken in
        the new order)."""
        e = self.events
        return e.take(np.argsort(e["Timestamp (s)"].to_numpy(), kind="stable"))

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
    "critical_path_profile", "timeresolved" (the POP metrics per window), "idlewave_fronts";
    text columns as categories), `matching` (summary.json's analyses.matching: messages,
    collective instances, what was left unmatched), `clock_correction` (what the clock correction
    did: mode, method, reason, violations before and after, events moved) and `figures` (by
    name, a matplotlib Figure drawn from the analyses' data: "idlewave_heatmap" when idlewave
    ran and some rank idled, "timeresolved" when timeresolved ran)."""

    def __init__(self, ran, summary, tables, matching=None, clock_correction=None, figures=None):
        self.ran = ran
        self.summary = summary
        self.tables = tables
        self.matching = matching
        self.clock_correction = clock_correction
        self.figures = figures or {}

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


def analyze_options():
    """The options analyze() takes, as `waitlab analyze` names them (its long options without
    the dashes, `_` for `-`)."""
    return list(_waitlab.analyze_option_names())


def _option_text(name, value):
    """An option's value as the command line writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return repr(value)
    raise TypeError(f"{name}: expected a str, a number or a bool, got {type(value).__name__}")


def analyze(trace, analyses=("waitstate",), **options):
    """Runs waitlab's analyses on a Trace, a trace's path or a Run (its trace.wlt), as `waitlab
    analyze TRACE -a NAMES`
    does (without its output directory). `analyses`: names as `-a` takes them, a list or a string
    "waitstate,delay" or "all". `options`: the command's options by their long names, without the
    dashes and with `_` for `-` (analyze_options() lists them): clock_correction ("auto", "none",
    "linear", "clc", "clamp", "linear+clamp"), alltoallv_nxn (bool), convention ("auto", "bsc",
    "scalasca", "waitlab"), ideal ("auto", "lamport", "smpi", "both"), windows ("50", "10ms",
    "adaptive:N"), and one cut of the timeresolved analysis: time_range ("1.5s:2s"), region
    ("solve"), iterations ("solve:10-20"). They are checked by the command's own code: a bad
    value raises InputError with its message (`--windows: ...`), an unknown option InputError
    naming the allowed ones. The clocks are corrected as the command corrects them, on a copy
    (the Trace is left as read). The SMPI ideal-network estimate (ideal "smpi", "both", and
    "auto" on a measured trace) runs in a child `waitlab smpi-ideal` (executable(); it sets
    $WAITLAB_BIN for it when unset). Returns an Analyses. An unknown analysis raises InputError
    with a "did you mean"."""
    if isinstance(trace, Run):
        trace = trace.trace
        if trace is None:
            raise InputError("the run wrote no trace.wlt (outputs.trace: false)")
    if not isinstance(trace, Trace):
        trace = read(trace)
    names = [analyses] if isinstance(analyses, str) else list(analyses)
    texts = {name: _option_text(name, value) for name, value in options.items()}
    if "WAITLAB_BIN" not in os.environ:
        found = _find_executable()
        if found:
            os.environ["WAITLAB_BIN"] = found
    tables = {}
    with tempfile.TemporaryDirectory(prefix="waitlab-analyze-") as d:
        out = trace._data.run_analyses(names, d, texts)
        files = [f for written in out["files"].values() for f in written]
        for f in files:
            if f.endswith(".csv"):
                tables[os.path.basename(f)[:-4]] = _table(f)
        figures = _figures(d)
    summary = json.loads(out["summary"])
    ran = list(out["ran"])
    return Analyses(ran, {name: summary[name] for name in ran}, tables, summary.get("matching"),
                    json.loads(out["clock"]), figures)


# --- Pictures -------------------------------------------------------------------------------


def idle_wave_figure(directory):
    """The idle-wave heat map of a run or analysis directory (idlewave.json, idle_matrix.npy,
    idlewave_fronts.csv, as the idlewave analysis writes them) as a matplotlib Figure: the
    fraction of each time bin each rank spent idle (rank × time; its image data is
    idle_matrix.npy / the bin length, cell for cell), the fronts' points on it. None when the
    analysis did not run or no rank idled. Made without pyplot (no backend is chosen or
    changed); a notebook shows it, `fig.savefig(...)` writes it. The command line's own
    picture (idlewave_heatmap.png, app/plots/idlewave.py) adds the fitted fronts and legends."""
    info_file = os.path.join(directory, "idlewave.json")
    if not os.path.exists(info_file):
        return None
    with open(info_file) as f:
        info = json.load(f)
    mx = info["matrix"]
    idle = np.load(os.path.join(directory, mx["file"]))
    b = mx["bin_s"]
    frac = idle / b if b > 0 else idle
    if frac.size == 0 or not float(frac.max()) > 0:
        return None
    from matplotlib.figure import Figure
    t0 = mx["t0_s"]
    t1 = t0 + mx["bins"] * b
    fig = Figure(figsize=(10, 6))
    ax = fig.add_subplot()
    im = ax.imshow(frac, aspect="auto", origin="lower", interpolation="nearest", cmap="magma_r", vmin=0,
                   vmax=min(1.0, float(frac.max())), extent=[t0, t1, -0.5, mx["ranks"] - 0.5])
    fig.colorbar(im, ax=ax, pad=0.015).set_label("idle fraction of the time bin")
    fronts_file = os.path.join(directory, "idlewave_fronts.csv")
    if os.path.exists(fronts_file):
        fronts = pd.read_csv(fronts_file)
        for (wave, direction), points in fronts.groupby(["wave", "direction"], sort=True):
            ax.plot(points["time_s"], points["rank"], ls="none", marker=".", ms=4,
                    label=f"wave {wave} {direction}")
        if len(fronts):
            ax.legend(loc="upper left", framealpha=0.85)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("rank")
    ax.set_title("Idle periods")
    return fig


def timeresolved_figure(directory):
    """The POP efficiencies over time of a run or analysis directory (timeresolved.csv, as the
    timeresolved analysis writes it) as a matplotlib Figure: per window, as steps from its start
    to its end, the parallel efficiency (PE), load balance (LB), communication, serialisation and
    transfer efficiency (CommE, SerE, TrfE) — each line's y data the table's column, its last
    value repeated at the last window's end — and the cumulative PE from the run's start
    (dashed). None without the table or windows. Made without pyplot, as idle_wave_figure."""
    table = os.path.join(directory, "timeresolved.csv")
    if not os.path.exists(table):
        return None
    w = pd.read_csv(table)
    if len(w) == 0:
        return None
    from matplotlib.figure import Figure
    x = np.append(w["start_s"].to_numpy(dtype=float), float(w["end_s"].iloc[-1]))
    fig = Figure(figsize=(10, 5))
    ax = fig.add_subplot()
    for column, label, width in (("pe", "parallel efficiency", 2.2), ("lb", "load balance", 1.4),
                                 ("comm_e", "communication efficiency", 1.4), ("ser_e", "serialisation efficiency", 1.0),
                                 ("trf_e", "transfer efficiency", 1.0)):
        y = w[column].to_numpy(dtype=float)
        ax.plot(x, np.append(y, y[-1]), drawstyle="steps-post", linewidth=width, label=label)
    cum = w["cum_pe"].to_numpy(dtype=float)
    ax.plot(x, np.append(cum, cum[-1]), drawstyle="steps-post", color="black", linestyle="--", linewidth=1.4,
            label="parallel efficiency from the start")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("efficiency")
    ax.set_title(f"POP efficiencies over time ({len(w)} windows)")
    ax.legend(loc="lower left", framealpha=0.85)
    return fig


def footprint_figure(directory):
    """The counterfactual footprint of a run directory (footprint.json, footprint_shift.npy,
    idle_matrix.npy, as `run.footprint` writes them; docs/analyses.md) as a matplotlib Figure:
    left, how far the perturbation shifted each rank's timeline over the run's time (rank × time
    bins; its image data is footprint_shift.npy in ms, cell for cell); right, the idle fraction of
    the same bins (idle_matrix.npy / the bin length). None when the footprint did not run. Made
    without pyplot, as idle_wave_figure."""
    info_file = os.path.join(directory, "footprint.json")
    if not os.path.exists(info_file):
        return None
    with open(info_file) as f:
        mx = json.load(f)["matrix"]
    shift = np.load(os.path.join(directory, "footprint_shift.npy"))
    if shift.size == 0:
        return None
    from matplotlib.figure import Figure
    t0, b = mx["t0_s"], mx["bin_s"]
    extent = [t0, t0 + mx["bins"] * b, -0.5, mx["ranks"] - 0.5]
    fig = Figure(figsize=(14, 6))
    left, right = fig.subplots(1, 2, sharey=True)
    im = left.imshow(shift * 1e3, aspect="auto", origin="lower", interpolation="nearest", cmap="viridis",
                     extent=extent)
    fig.colorbar(im, ax=left, pad=0.015).set_label("shift [ms]")
    left.set_title("Shift of each rank's timeline")
    left.set_xlabel("time [s]")
    left.set_ylabel("rank")
    idle_file = os.path.join(directory, "idle_matrix.npy")
    if os.path.exists(idle_file) and b > 0:
        idle = np.load(idle_file) / b
        im2 = right.imshow(idle, aspect="auto", origin="lower", interpolation="nearest", cmap="magma_r", vmin=0,
                           vmax=1, extent=extent)
        fig.colorbar(im2, ax=right, pad=0.015).set_label("idle fraction of the time bin")
    right.set_title("Idle periods")
    right.set_xlabel("time [s]")
    return fig


def footprint_distance_figure(directory):
    """The footprint by distance from the source (footprint.csv): per rank, by its signed offset
    from the delayed rank, the peak shift of its timeline and its largest idle period in the run
    and in the twin (the noise background), in ms on a log scale — the lines' y data are the
    table's columns × 1e3 in offset order. Where the idle curve meets the background the wave
    has decayed; where the shift stays high it has dispersed. None without a single source."""
    info_file = os.path.join(directory, "footprint.json")
    if not os.path.exists(info_file):
        return None
    with open(info_file) as f:
        if json.load(f).get("source_rank") is None:
            return None
    t = pd.read_csv(os.path.join(directory, "footprint.csv")).sort_values("offset", kind="stable")
    from matplotlib.figure import Figure
    fig = Figure(figsize=(12, 5))
    ax = fig.add_subplot()
    x = t["offset"].to_numpy()
    ax.plot(x, t["peak_shift_s"].abs().to_numpy() * 1e3, linewidth=2.2, label="peak shift of the rank's timeline")
    ax.plot(x, t["largest_idle_s"].to_numpy() * 1e3, linewidth=1.4, label="largest idle period, this run")
    ax.plot(x, t["twin_largest_idle_s"].to_numpy() * 1e3, linewidth=1.0, linestyle="--",
            label="largest idle period, twin (background)")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("distance from the source [ranks; negative: below it]")
    ax.set_ylabel("ms")
    ax.set_title("Footprint by distance from the source")
    ax.legend(loc="lower center", framealpha=0.85)
    return fig


def _figures(directory):
    """The Figures drawn from the data in `directory` (by name; those that have something to show)."""
    figures = {}
    for name, draw in (("idlewave_heatmap", idle_wave_figure), ("timeresolved", timeresolved_figure),
                       ("footprint", footprint_figure), ("footprint_distance", footprint_distance_figure)):
        fig = draw(directory)
        if fig is not None:
            figures[name] = fig
    return figures


# --- Runs in a child waitlab -----------------------------------------------------------------


def _find_executable():
    path = os.environ.get("WAITLAB_BIN")
    if path:
        return path
    try:
        from . import _executable
        if os.access(_executable.PATH, os.X_OK):
            return _executable.PATH
    except ImportError:
        pass
    return shutil.which("waitlab")


def executable():
    """The `waitlab` executable that runs the simulations: $WAITLAB_BIN, else the build tree's
    (the package in <build>/python runs <build>/app/waitlab) or the installed one
    (<prefix>/bin/waitlab, which `cmake --install` puts there), else `waitlab` on PATH.
    RuntimeError if there is none."""
    path = _find_executable()
    if not path:
        raise RuntimeError("no waitlab executable: set WAITLAB_BIN, or put waitlab on PATH (cmake --install)")
    return path


def _override_key(name):
    """A keyword argument's name as a --set key: `__` separates the parts, a part of digits is a
    list index: workload__ranks -> workload.ranks, perturbations__0__duration ->
    perturbations[0].duration."""
    key = ""
    for part in name.split("__"):
        if part.isdigit() and key:
            key += f"[{part}]"
        else:
            key += ("." if key else "") + part
    return key


def _value_text(key, value):
    """A Python value as a --set value: bool true/false, a list inline ([a, b]), numbers exactly."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value_text(key, v) for v in value) + "]"
    if value is None:
        raise TypeError(f"{key}: None is no scenario value")
    return _option_text(key, value)


def _overrides(set, keywords):
    """The --set texts: `set` (a dict {key: value} with keys as --set writes them, or an
    iterable of "key=value" texts), then the keyword arguments (keys by _override_key)."""
    texts = []
    if isinstance(set, dict):
        texts += [f"{k}={_value_text(k, v)}" for k, v in set.items()]
    elif set is not None:
        if isinstance(set, str):
            raise TypeError("set: a dict {key: value} or a list of 'key=value' texts, not a str")
        texts += list(set)
    for name, value in keywords.items():
        key = _override_key(name)
        texts.append(f"{key}={_value_text(key, value)}")
    return texts


class _ScenarioFile:
    """A dict scenario written as a file (waitlab's YAML reads it: it is JSON, one key or item per
    line) in a private temporary directory, kept while this object lives, with the key path of
    each line, so that an error's "file:line:col" becomes the key path it points at. Relative
    paths of `platform.file` and `workload.trace` are made absolute from the working directory
    (a file's are relative to the file, which here is in a temporary directory)."""

    def __init__(self, scenario):
        scenario = dict(scenario)
        for section, key in (("platform", "file"), ("workload", "trace")):
            part = scenario.get(section)
            if isinstance(part, dict) and isinstance(part.get(key), (str, os.PathLike)):
                value = os.fspath(part[key])
                if not os.path.isabs(value):
                    scenario[section] = dict(part, **{key: os.path.abspath(value)})
        self.lines, self.paths = [], []
        self._emit(scenario, "", "", "")
        name = scenario.get("name") if isinstance(scenario.get("name"), str) else "scenario"
        self._dir = tempfile.mkdtemp(prefix="waitlab-scenario-")
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._dir, True)
        self.path = os.path.join(self._dir, (name if re.fullmatch(r"[A-Za-z0-9_.-]+", name) else "scenario") + ".yaml")
        self.text = "\n".join(self.lines) + "\n"
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(self.text)

    def _emit(self, value, path, prefix, comma, depth=0):
        """Appends `value` (at key path `path`) as JSON lines: a dict's keys and a list's items one
        per line, each line's key path in self.paths."""
        indent = "  " * depth
        if isinstance(value, (dict, list, tuple)):
            is_dict = isinstance(value, dict)
            self.lines.append(prefix + ("{" if is_dict else "["))
            self.paths.append(path)
            items = list(value.items()) if is_dict else list(enumerate(value))
            for n, (k, v) in enumerate(items):
                if is_dict and not isinstance(k, str):
                    raise TypeError(f"{path or 'scenario'}: keys are str, not {type(k).__name__} ({k!r})")
                key = json.dumps(k, ensure_ascii=False) + ": " if is_dict else ""
                child = (f"{path}.{k}" if path else k) if is_dict else f"{path}[{k}]"
                self._emit(v, child, indent + "  " + key, "," if n + 1 < len(items) else "", depth + 1)
            self.lines.append(indent + ("}" if is_dict else "]") + comma)
            self.paths.append(path)
            return
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if isinstance(value, float) and not np.isfinite(value):
            raise ValueError(f"{path}: {value} is no scenario value")
        if value is not None and not isinstance(value, (str, bool, int, float)):
            raise TypeError(f"{path}: expected a str, number, bool, list or dict, got {type(value).__name__}")
        self.lines.append(prefix + json.dumps(value, ensure_ascii=False) + comma)
        self.paths.append(path)

    def error(self, message):
        """An InputError of `message`, its "<file>:line:col" made the key path of that line."""
        m = _POSITION.match(message)
        if m and m["file"] == self.path and 1 <= int(m["line"]) <= len(self.paths):
            key = self.paths[int(m["line"]) - 1] or "scenario"
            e = InputError(key + message[m.end() - 2:])
            e._where = (None, None, None, key)
            return e
        return InputError(message)


def _check(path, sets=(), variants=(), scenario_file=None):
    """The scenario file checked in this process by the C++ loader (scenarios.hpp), as the command
    checks it before it simulates; a dict scenario's errors name the key path."""
    try:
        return _waitlab.check_scenario(path, list(sets), list(variants))
    except InputError as e:
        if scenario_file is not None:
            raise scenario_file.error(str(e)) from None
        raise


class _TemporaryOutput:
    """A run's output directory made for it (out=None), removed when the result is collected."""

    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.path, True)


def _child(arguments, scenario_file=None):
    """Runs `waitlab ARGUMENTS...` to its end and returns its terminal output (stdout); its
    `waitlab: ...` lines on standard error become Python warnings (UserWarning). Exit 2
    raises InputError with its error line (a dict scenario's naming the key path), another
    failure RuntimeError. Ctrl-C (KeyboardInterrupt) sends SIGINT to the child, waits for it
    (which leaves its output directory as it was: docs/cli.md, "Outputs, failures and signals")
    and re-raises; a second one while it winds up kills it. The child is in a process group of
    its own, so that a terminal's Ctrl-C reaches it only through this."""
    command = [executable()] + [os.fspath(a) for a in arguments]
    # A Ctrl-C while the child starts (inside Popen, which would lose it) is held back until the
    # child is known, then stops it as one that comes later. Only the main thread sets handlers.
    held = []
    main = threading.current_thread() is threading.main_thread()
    if main:
        previous = signal.signal(signal.SIGINT, lambda number, frame: held.append(number))
    child = None
    try:
        try:
            child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, process_group=0)
        finally:
            if main:  # None: a handler not set from Python, which cannot be set back; the default then
                signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
        if held:
            raise KeyboardInterrupt
        out, err = child.communicate()
    except KeyboardInterrupt:
        if child is not None:
            child.send_signal(signal.SIGINT)
            try:
                child.communicate()
            except KeyboardInterrupt:
                child.kill()
                child.wait()
        raise
    except BaseException:
        if child is not None:
            child.kill()
            child.wait()
        raise
    out = out.decode("utf-8", "replace")
    err = err.decode("utf-8", "replace")
    if child.returncode in (0, 3):
        # What the command says on standard error beside its results (a trace's suspect parts, a
        # picture not drawn) as Python warnings.
        for line in err.splitlines():
            if line.startswith("waitlab: "):
                warnings.warn(line[len("waitlab: "):], stacklevel=3)
        return out
    lines = [line[len("waitlab: error: "):] for line in err.splitlines() if line.startswith("waitlab: error: ")]
    message = lines[-1] if lines else (err.strip() or f"{command[0]} {command[1]} ended with exit code {child.returncode}")
    if child.returncode == 2:
        raise scenario_file.error(message) if scenario_file is not None else InputError(message)
    raise RuntimeError(f"waitlab {command[1]} failed (exit code {child.returncode}): {message}")


def _output(out, prefix):
    """(the directory to give the child, what keeps it): `out` as given, or a fresh temporary one."""
    if out is None:
        keep = _TemporaryOutput(prefix)
        return keep.path, keep
    return os.fspath(out), None


def _scenario(scenario):
    """(path, _ScenarioFile or None) of a scenario given as a path or a dict."""
    if isinstance(scenario, dict):
        f = _ScenarioFile(scenario)
        return f.path, f
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario), None
    raise TypeError(f"scenario: a YAML file's path or a dict, not {type(scenario).__name__}")


def _tables(directory):
    """Every CSV table in `directory` as a DataFrame, by its file's stem."""
    return {os.path.basename(f)[:-4]: _table(f) for f in sorted(glob.glob(os.path.join(directory, "*.csv")))}


def _json(path):
    with open(path) as f:
        return json.load(f)


class _Outputs:
    """What a command wrote into a directory (Run, Study, Pop, Validation): `dir`, `log` (its
    terminal output, when this process ran it) and `pictures` (the PNG files it drew); `_keep`
    holds what must live as long as the result (a temporary output directory, a dict scenario's file)."""

    def __init__(self, directory, log="", keep=None):
        self.dir = os.fspath(directory)
        self.log = log
        self._keep = keep

    def __repr__(self):
        return f"<waitlab.{type(self).__name__} {self.dir!r}>"

    @property
    def pictures(self):
        return sorted(glob.glob(os.path.join(self.dir, "*.png")))


class Run(_Outputs):
    """The outputs of one run (`waitlab run` or `replay`; a what-if variant; a sweep point), read
    from its directory on first use: `dir`; `summary` (summary.json, a dict); `tables` (by name,
    the file's stem: every CSV table of the directory as a DataFrame — waitstates, delay,
    critical_path, critical_path_profile, timeresolved, idlewave_fronts, ... as the scenario's
    outputs.analyses asked); `trace` (trace.wlt read by waitlab.read, on first use; None without
    one), `baseline` (baseline.wlt, with run.baseline) and `twin` (twin.wlt, with run.footprint);
    `figures` (by name, matplotlib Figures drawn from the run's data: "idlewave_heatmap",
    "timeresolved", "footprint", "footprint_distance"); `pictures` (the PNG files the command drew);
    `log` (the command's terminal summary, when this process ran it). `r["waitstates"]` is
    `r.tables["waitstates"]`. A run into a temporary directory (out=None) keeps it while the Run
    (or what holds it) lives."""

    def __getitem__(self, table):
        return self.tables[table]

    @cached_property
    def summary(self):
        return _json(os.path.join(self.dir, "summary.json"))

    @cached_property
    def tables(self):
        return _tables(self.dir)

    def _trace(self, name):
        path = os.path.join(self.dir, name)
        return read(path) if os.path.exists(path) else None

    @cached_property
    def trace(self):
        return self._trace("trace.wlt")

    @cached_property
    def baseline(self):
        return self._trace("baseline.wlt")

    @cached_property
    def twin(self):
        return self._trace("twin.wlt")

    @cached_property
    def figures(self):
        return _figures(self.dir)


def run(scenario, out=None, set=None, **overrides):
    """Simulates a scenario as `waitlab run SCENARIO --out OUT --set KEY=VALUE...` does, in a child
    `waitlab` (executable()), and returns its Run.

    `scenario`: a YAML file's path, or a dict with the file's content (as yaml.safe_load gives
    it; its errors name the key path, `workload.ranks`, in the message and as `.key`; relative
    paths in platform.file and workload.trace are relative to the working directory; its name,
    without `name`, is "scenario"). Overrides are the command's `--set`: keyword arguments, `__`
    for the dots and a part of digits for a list index (workload__ranks=64,
    perturbations__0__duration="5ms", outputs__analyses=["waitstate", "idlewave"]), and/or `set`,
    a dict with keys as --set writes them ({"workload.ranks": 64}) or a list of "key=value"
    texts; values as Python gives them (True -> true, lists inline). `out`: the output directory,
    as --out; None (the default) a fresh temporary directory that the Run keeps and that goes
    with it (give `out` to keep the files).

    The scenario and its overrides are checked in this process by the command's C++ loader
    first: bad input raises InputError at once with the command's message and `.file`, `.line`,
    `.column`. Ctrl-C stops the child (SIGINT), which leaves `out` as it was, and raises
    KeyboardInterrupt."""
    path, scenario_file = _scenario(scenario)
    sets = _overrides(set, overrides)
    _check(path, sets, (), scenario_file)
    directory, keep = _output(out, "waitlab-run-")
    arguments = ["run", path, "--out", directory, "--no-progress"]
    for s in sets:
        arguments += ["--set", s]
    log = _child(arguments, scenario_file)
    return Run(directory, log, (keep, scenario_file))


def replay(trace, out=None, platform=None, scenario=None, compute_scale=(), iterations_from=None, speed=None,
           set=None, **overrides):
    """Simulates a trace on a modelled platform as `waitlab replay TRACE` does, in a child
    `waitlab`, and returns its Run. `trace`: a path (.wlt, OTF2, .prv, TI) or a Trace (its path)
    or a Run (its trace.wlt). `platform`, `scenario`, `compute_scale` (a str or a list of them:
    FACTOR, REGION=FACTOR, @RANKS=FACTOR), `iterations_from`, `speed`: the command's options;
    overrides and `out` as for run(). `scenario` (a path) is checked in this process with the
    overrides first; the rest (the trace, the platform) by the child before it simulates, with
    the command's messages, raised as InputError. Ctrl-C as for run()."""
    if isinstance(trace, Run):
        trace = os.path.join(trace.dir, "trace.wlt")
    elif isinstance(trace, Trace):
        trace = trace.path
    sets = _overrides(set, overrides)
    arguments = ["replay", os.fspath(trace)]
    scenario_file = None
    if scenario is not None:
        path, scenario_file = _scenario(scenario)
        arguments += ["--scenario", path]
    if platform is not None:
        arguments += ["--platform", os.fspath(platform)]
    for c in [compute_scale] if isinstance(compute_scale, str) else compute_scale:
        arguments += ["--compute-scale", c]
    if iterations_from is not None:
        arguments += ["--iterations-from", iterations_from]
    if speed is not None:
        arguments += ["--speed", _option_text("speed", speed)]
    for s in sets:
        arguments += ["--set", s]
    directory, keep = _output(out, "waitlab-replay-")
    arguments += ["--out", directory, "--no-progress"]
    log = _child(arguments, scenario_file)
    return Run(directory, log, (keep, scenario_file))


class Study(_Outputs):
    """The outputs of a study (`waitlab whatif` or `sweep`), read from its directory on first use:
    `dir`; `kind` ("whatif" or "sweep"); `table` (whatif.csv / sweep.csv: one row per run, a
    DataFrame); `summary` (whatif.json / sweep.json); `runs` (by the run's name — baseline and
    the variants, or point_0000, ... — its Run, in the table's order); `log` (the terminal
    output). `s["baseline"]` is `s.runs["baseline"]`."""

    def __init__(self, directory, kind, log="", keep=None):
        super().__init__(directory, log, keep)
        self.kind = kind

    def __repr__(self):
        return f"<waitlab.Study {self.kind} {self.dir!r}: {', '.join(self.runs)}>"

    def __getitem__(self, name):
        return self.runs[name]

    @cached_property
    def table(self):
        return _table(os.path.join(self.dir, self.kind + ".csv"))

    @cached_property
    def summary(self):
        return _json(os.path.join(self.dir, self.kind + ".json"))

    @cached_property
    def runs(self):
        return {str(name): Run(os.path.join(self.dir, str(name)), keep=self) for name in self.table["name"]}


def _study_arguments(sets, jobs):
    arguments = []
    for s in sets:
        arguments += ["--set", s]
    if jobs != 1:
        arguments += ["--jobs", str(jobs)]
    return arguments


def whatif(scenario, variants=(), only=None, out=None, jobs=1, set=None, **overrides):
    """Simulates a scenario's what-if variants side by side with its baseline, as `waitlab whatif`
    does, in a child `waitlab`, and returns a Study. `scenario`: a YAML path, a dict (as for
    run()) or a run directory (its scenario and overrides); `variants`: more variants, each a
    YAML mapping text ("{name: ideal, network: ideal}") or a dict; `only`: the variants to run
    (a list or "a,b"; the baseline always runs); `jobs`: simulations at once; overrides and `out`
    as for run(). A scenario file or dict is checked in this process (with the overrides and the
    extra variants) first. Ctrl-C as for run()."""
    path, scenario_file = _scenario(scenario)
    sets = _overrides(set, overrides)
    texts = [v if isinstance(v, str) else json.dumps(v) for v in variants]
    if scenario_file is not None or os.path.isfile(path):
        _check(path, sets, texts, scenario_file)
    directory, keep = _output(out, "waitlab-whatif-")
    arguments = ["whatif", path, "--out", directory] + _study_arguments(sets, jobs)
    for v in texts:
        arguments += ["--variant", v]
    if only is not None:
        arguments += ["--only", only if isinstance(only, str) else ",".join(only)]
    log = _child(arguments, scenario_file)
    return Study(directory, "whatif", log, (keep, scenario_file))


def sweep(scenario, grid, out=None, jobs=1, set=None, **overrides):
    """Simulates a scenario over a grid of values, as `waitlab sweep SCENARIO --grid ...` does, in
    a child `waitlab`, and returns a Study. `grid`: a dict {key: values} (keys as --set writes
    them; the Cartesian product, first key slowest) or a list of "KEY=V1,V2" texts; overrides and
    `out` as for run(). The scenario (a path or a dict) is checked in this process with the
    overrides first, the grid by the child before anything runs. Ctrl-C as for run()."""
    path, scenario_file = _scenario(scenario)
    sets = _overrides(set, overrides)
    _check(path, sets, (), scenario_file)
    if isinstance(grid, dict):
        grid = [f"{k}=" + ",".join(_value_text(k, v) for v in values) for k, values in grid.items()]
    directory, keep = _output(out, "waitlab-sweep-")
    arguments = ["sweep", path, "--out", directory] + _study_arguments(sets, jobs)
    for g in grid:
        arguments += ["--grid", g]
    log = _child(arguments, scenario_file)
    return Study(directory, "sweep", log, (keep, scenario_file))


class Pop(_Outputs):
    """The POP model factors of a scaling study as `waitlab pop` computes them: `dir`; `table`
    (pop.csv: one row per run, sorted by units; efficiencies as fractions, times in µs);
    `modelfactors` (modelfactors.csv, BSC's table: one row per factor, one column per run, as
    read with pandas' sep=";"); `summary` (pop.json: scaling, reference, rows, runs); `figures`;
    `log`."""


    @cached_property
    def table(self):
        return _table(os.path.join(self.dir, "pop.csv"))

    @cached_property
    def modelfactors(self):
        return pd.read_csv(os.path.join(self.dir, "modelfactors.csv"), sep=";")

    @cached_property
    def summary(self):
        return _json(os.path.join(self.dir, "pop.json"))


def pop(traces, out=None, scaling=None, convention=None, ideal=None, time_range=None, region=None, iterations=None):
    """The POP model factors of a scaling study, as `waitlab pop TRACE...` computes them (in a
    child `waitlab`; with ideal="smpi" it replays every trace with SimGrid): `traces` are paths
    (.prv, .prv.gz, OTF2, .wlt, run or sweep directories), Runs, Traces or a Study (its runs);
    `scaling` ("strong", "weak"), `convention`, `ideal` ("lamport", "smpi") and one cut
    (time_range, region, iterations): the command's options. Bad input raises InputError with
    the command's message. Returns a Pop."""
    if isinstance(traces, (str, os.PathLike, Run, Study, Trace)):
        traces = [traces]
    arguments = ["pop"]
    for t in traces:
        arguments.append(t.dir if isinstance(t, (Run, Study)) else t.path if isinstance(t, Trace) else os.fspath(t))
    for option, value in (("--scaling", scaling), ("--convention", convention), ("--ideal", ideal),
                          ("--time-range", time_range), ("--region", region), ("--iterations", iterations)):
        if value is not None:
            arguments += [option, _option_text(option, value)]
    directory, keep = _output(out, "waitlab-pop-")
    arguments += ["--out", directory]
    return Pop(directory, _child(arguments), keep)


class Validation(_Outputs):
    """The minimum-duration estimator against the trace-based truth, as `waitlab validate`
    writes it: `dir`; `rows` (validation.csv: one row per scenario × call path × pattern ×
    estimator variant, a DataFrame); `summary` (validation.json); `log`."""


    @cached_property
    def rows(self):
        return _table(os.path.join(self.dir, "validation.csv"))

    @cached_property
    def summary(self):
        return _json(os.path.join(self.dir, "validation.json"))


def validate(scenarios, out=None, plot=False, set=None, **overrides):
    """Simulates scenarios and compares the minimum-duration wait-state estimator with the truth,
    as `waitlab validate SCENARIO...` does (in a child `waitlab`). `scenarios`: a path or a dict,
    or a list of them; overrides (applied to every scenario) and `out` as for run(); `plot`: draw
    validation.png (off by default: `rows` is the data). Each scenario is checked in this process
    with the overrides first. Returns a Validation. Ctrl-C as for run()."""
    if isinstance(scenarios, (str, os.PathLike, dict)):
        scenarios = [scenarios]
    sets = _overrides(set, overrides)
    paths, keep_files = [], []
    for s in scenarios:
        path, scenario_file = _scenario(s)
        _check(path, sets, (), scenario_file)
        paths.append(path)
        keep_files.append(scenario_file)
    directory, keep = _output(out, "waitlab-validate-")
    arguments = ["validate"] + paths + ["--out", directory]
    if not plot:
        arguments.append("--no-plot")
    for s in sets:
        arguments += ["--set", s]
    return Validation(directory, _child(arguments), (keep, keep_files))
