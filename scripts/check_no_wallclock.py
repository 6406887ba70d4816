#!/usr/bin/env python3
"""No test may depend on how fast the host is (issue 28).

Lists every place under the given folders (default: tests/) that reads a wall or CPU clock,
or sets a hard timeout below the hang-guard floor, and exits 1 if there is one. A test that
guards against a blow-up bounds the work instead (nodes visited, bytes allocated, iterations);
a clock may be read only as a hang guard far above any load, or by a test of a clock itself,
and such a line says so with a marker and a reason:

    ... // wallclock-ok: hang guard of 300 s
    # wallclock-ok: ...

A file that tests the clocks themselves carries `wallclock-ok-file: REASON` in its first 30
lines. `--self-test` checks the checker on a tree of known cases.
"""
import os
import re
import sys
import tempfile

HANG_GUARD_FLOOR_S = 60  # a hard timeout below this is a time bound, not a hang guard

SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".c", ".py", ".sh", ".cmake", ".txt")

# What reads a clock, in the languages of the tests.
CLOCK_PATTERNS = [
    (re.compile(r"\b(steady_clock|system_clock|high_resolution_clock|file_clock)\b"), "reads a std::chrono clock"),
    (re.compile(r"\bClock::now\b"), "reads a clock"),
    (re.compile(r"\b(clock_gettime|gettimeofday|getrusage|timespec_get)\s*\("), "reads a clock"),
    (re.compile(r"\bCLOCK_(MONOTONIC|REALTIME|PROCESS_CPUTIME_ID|THREAD_CPUTIME_ID|BOOTTIME)\w*"), "names a clock"),
    (re.compile(r"\bstd::clock\s*\(|(?<![\w:.])clock\s*\(\s*\)"), "reads the CPU clock"),
    (re.compile(r"\bru_[us]time\b"), "reads CPU time"),
    (re.compile(r"\btime\s*\(\s*(nullptr|NULL|0)\s*\)"), "reads the wall clock"),
    (re.compile(r"\btime\.(time|perf_counter|monotonic|process_time|thread_time)(_ns)?\s*\("), "reads a clock"),
    (re.compile(r"\b(timeit|datetime\.(datetime\.)?now|datetime\.utcnow)\b"), "reads a clock"),
    (re.compile(r"\bdate\s+\+%[sN]"), "reads the wall clock"),
    (re.compile(r"\$\{?SECONDS\b|\$EPOCHREALTIME|\$EPOCHSECONDS"), "reads the shell's clock"),
]
# Hard timeouts: a hang guard must be far above any load.
TIMEOUT_PATTERNS = [
    re.compile(r"\btimeout\s+(?:-[a-zA-Z]+\s+\S+\s+|--\S+\s+)*(\d+(?:\.\d+)?)(s|m|h)?\b"),
    re.compile(r"\bTIMEOUT\s+(\d+(?:\.\d+)?)()\b"),
    re.compile(r"\balarm\s*\(\s*(\d+)()\s*\)"),
    re.compile(r"(?<![\w-])-timeout=(\d+)()\b"),  # libFuzzer's per-input timeout
]
LINE_MARKER = re.compile(r"wallclock-ok:\s*\S")
FILE_MARKER = re.compile(r"wallclock-ok-file:\s*\S")


def seconds(value, unit):
    return float(value) * {"": 1, "s": 1, "m": 60, "h": 3600}[unit or ""]


def check_file(path):
    """(line number, what) for each place in `path` that breaks the rule."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError as e:
        return [(0, f"cannot be read: {e.strerror}")]
    if any(FILE_MARKER.search(l) for l in lines[:30]):
        return []
    found = []
    for n, line in enumerate(lines, 1):
        if LINE_MARKER.search(line):
            continue
        if "wallclock-ok" in line:
            found.append((n, "has a wallclock-ok marker without a reason"))
            continue
        for pattern, what in CLOCK_PATTERNS:
            if pattern.search(line):
                found.append((n, what))
                break
        for pattern in TIMEOUT_PATTERNS:
            for m in pattern.finditer(line):
                s = seconds(m.group(1), m.group(2))
                if s < HANG_GUARD_FLOOR_S:
                    found.append((n, f"a hard timeout of {s:g} s is a time bound (a hang guard is at least "
                                     f"{HANG_GUARD_FLOOR_S} s)"))
    return found


def check_tree(roots):
    found = []
    for root in roots:
        if os.path.isfile(root):
            files = [root]
        else:
            files = []
            for d, dirs, names in os.walk(root):
                dirs[:] = sorted(x for x in dirs if x != "data")  # traces and tables, not code
                files += [os.path.join(d, x) for x in sorted(names) if x.endswith(SUFFIXES)]
        for f in files:
            found += [(f, n, what) for n, what in check_file(f)]
    return found


def self_test():
    cases = {
        "a.cpp": ("#include <chrono>\n"
                  "auto t0 = std::chrono::steady_clock::now();\n"          # 2
                  "EXPECT_LT(s, 2.0);\n"
                  "auto t1 = std::chrono::steady_clock::now();  // wallclock-ok: hang guard\n"
                  "int x = clock();\n"                                     # 5
                  "getrusage(RUSAGE_SELF, &u);\n"                          # 6
                  "system(\"timeout 5 waitlab run\");\n"                    # 7
                  "system(\"timeout 120 waitlab run\");\n"
                  "auto t2 = Clock::now();  // wallclock-ok:\n"            # 9
                  "sched_clock(); my_clock();\n"),
        "b.py": ("import time\n"
                 "t = time.perf_counter()\n"                               # 2
                 "x = time.sleep(1)\n"
                 "d = datetime.datetime.now()\n"),                         # 4
        "c.cmake": "set_tests_properties(x PROPERTIES TIMEOUT 30)\nset_tests_properties(y PROPERTIES TIMEOUT 600)\n",
        "d.sh": "start=$(date +%s)\ntimeout 2m true\nLIMITS=(-timeout=10)\nLIMITS=(-timeout=300)\n",  # 1, 3
        "e.cpp": "// wallclock-ok-file: tests the clock interposition\nclock_gettime(CLOCK_MONOTONIC, &t);\n",
        "data/f.cpp": "auto t = std::chrono::steady_clock::now();\n",   # data/ is not code
    }
    want = {("a.cpp", 2), ("a.cpp", 5), ("a.cpp", 6), ("a.cpp", 7), ("a.cpp", 9), ("b.py", 2), ("b.py", 4),
            ("c.cmake", 1), ("d.sh", 1), ("d.sh", 3)}
    with tempfile.TemporaryDirectory() as d:
        for name, text in cases.items():
            os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        got = {(os.path.relpath(f, d), n) for f, n, _ in check_tree([d])}
    if got != want:
        print(f"check_no_wallclock self-test: found {sorted(got)}, expected {sorted(want)}", file=sys.stderr)
        return 1
    print(f"check_no_wallclock self-test: the {len(want)} planted clock reads and short timeouts found, nothing else")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    roots = argv[1:] or [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")]
    found = check_tree(roots)
    for f, n, what in found:
        print(f"{os.path.normpath(f)}:{n}: {what}: a test must not depend on the host's speed; bound the work "
              f"(nodes, bytes allocated, iterations) or mark a hang guard of at least {HANG_GUARD_FLOOR_S} s "
              f"with 'wallclock-ok: REASON'")
    if found:
        print(f"check_no_wallclock: {len(found)} place(s) in the tests read a clock or bound time", file=sys.stderr)
        return 1
    print("check_no_wallclock: no test reads a clock or bounds time")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
