#!/usr/bin/env python3
"""The layer table of docs/architecture.md, enforced (issue 31).

Reads the table "| module | may include |" of docs/architecture.md and every `#include "…"`
of the product code (the modules' folders; tests, bench and fuzz are above every layer and
not checked), and names, by file:line:
  - an include of a module the including module may not depend on;
  - a cycle of includes between units (a unit is a header and its source file: a.hpp with
    a.cpp), the smallest cycles found, each once.
Exit status 1 if there is either. `--self-test` checks the checker on a planted tree.

Usage: check_layers.py [REPO]   (default: the repository holding this script)
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".cpp", ".hpp", ".h", ".c")


def read_table(repo):
    """{module: set of modules it may include}, in the table's order."""
    path = os.path.join(repo, "docs", "architecture.md")
    table = {}
    in_table = False
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| module | may include"):
            in_table = True
            continue
        if not in_table:
            continue
        if not line.startswith("|"):
            break
        if set(cells[0]) <= set("- "):
            continue
        name = cells[0].strip("`")
        allowed = set(re.findall(r"`([^`]+)`", cells[1]))
        table[name] = allowed
    if not table:
        sys.exit(f"check_layers: no layer table ('| module | may include |') in {path}")
    return table


def module_of(rel, table):
    """The module of the table that holds the file: the longest named module (analysis/trace
    before analysis), else, for a row `P/*`, the folder P/NAME that holds it (a module of its
    own, held to that row: e.g. a new analysis under analysis/)."""
    best = None
    for m in table:
        if "*" in m:
            continue
        if rel == m or rel.startswith(m + "/"):
            if best is None or len(m) > len(best):
                best = m
    if best is not None:
        return best
    for m in table:
        if m.endswith("/*"):
            parts = rel[len(m) - 1:].split("/")
            if rel.startswith(m[:-1]) and len(parts) > 1 and parts[0]:
                return m[:-1] + parts[0]
    return None


def rules(module, table):
    """The row a module is held to: its own, or its wildcard row's."""
    if module in table:
        return table[module]
    return table[module.rsplit("/", 1)[0] + "/*"]


def may_include(a, b, table):
    """`P/*` in a row allows the folders under P that the table does not name."""
    allowed = rules(a, table)
    return b in allowed or (b not in table and b.rsplit("/", 1)[0] + "/*" in allowed)


def scan(repo, table):
    files = []
    for m in table:
        top = os.path.join(repo, m.rstrip("*").rstrip("/"))
        for d, _, names in os.walk(top):
            for n in names:
                if n.endswith(SOURCES):
                    rel = os.path.relpath(os.path.join(d, n), repo)
                    if rel not in files and module_of(rel, table) is not None:
                        files.append(rel)
    includes = []  # (file, line, included file)
    for f in sorted(files):
        with open(os.path.join(repo, f), encoding="utf-8", errors="replace") as src:
            for no, line in enumerate(src, 1):
                m = INCLUDE.match(line)
                if m and os.path.exists(os.path.join(repo, m.group(1))):
                    includes.append((f, no, m.group(1)))
    return files, includes


def unit(path):
    return os.path.splitext(path)[0]


def cycles(includes):
    """The smallest include cycles between units, each once (as its sorted unit tuple)."""
    graph = {}
    where = {}
    for f, no, inc in includes:
        a, b = unit(f), unit(inc)
        if a == b:
            continue
        graph.setdefault(a, set()).add(b)
        where.setdefault((a, b), f"{f}:{no}")
    found = {}
    for start in sorted(graph):
        # Breadth-first from start: the shortest path back to it.
        prev = {start: None}
        queue = [start]
        hit = None
        while queue and hit is None:
            nxt = []
            for u in queue:
                for v in sorted(graph.get(u, ())):
                    if v == start:
                        hit = u
                        break
                    if v not in prev:
                        prev[v] = u
                        nxt.append(v)
                if hit is not None:
                    break
            queue = nxt
        if hit is None:
            continue
        path = [hit]
        while prev[path[-1]] is not None:
            path.append(prev[path[-1]])
        path = list(reversed(path))  # start ... hit
        key = tuple(sorted(path))
        if key not in found:
            steps = [where[(path[i], path[(i + 1) % len(path)])] for i in range(len(path))]
            found[key] = " -> ".join(path + [path[0]]) + "  (" + ", ".join(steps) + ")"
    return [found[k] for k in sorted(found)]


def check(repo):
    table = read_table(repo)
    _, includes = scan(repo, table)
    problems = []
    for f, no, inc in includes:
        a, b = module_of(f, table), module_of(inc, table)
        if b is None or a == b:
            continue
        if not may_include(a, b, table):
            problems.append(f"{f}:{no}: {a} includes {inc} of {b}, which it may not (docs/architecture.md)")
    for c in cycles(includes):
        problems.append(f"include cycle: {c}")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as d:
        def write(p, text):
            os.makedirs(os.path.dirname(os.path.join(d, p)), exist_ok=True)
            with open(os.path.join(d, p), "w") as f:
                f.write(text)
        write("docs/architecture.md", "| module | may include |\n| --- | --- |\n| `low` | |\n"
                                      "| `high` | `low` |\n| `plug/*` | `low` |\n| `top` | `plug/*` `low` |\n\ntext\n")
        write("plug/one/p.cpp", '#include "low/b.hpp"\n')                   # a folder under plug/: fine
        write("plug/two/q.cpp", '#include "plug/one/p.hpp"\n')              # another plug: not allowed
        write("plug/one/p.hpp", "\n")
        write("top/t.cpp", '#include "plug/two/q.hpp"\n#include "high/h.hpp"\n')  # plug/* yes, high no
        write("plug/two/q.hpp", "\n")
        write("low/a.hpp", '#include "low/b.hpp"\n')
        write("low/b.hpp", "\n")
        write("low/b.cpp", '#include "low/b.hpp"\n#include "low/a.hpp"\n')   # cycle a <-> b
        write("low/c.cpp", '#include "high/h.hpp"\n')                       # upward
        write("high/h.hpp", '#include "low/a.hpp"\n#include <vector>\n')    # fine
        got = check(d)
        want = ["low/c.cpp:1: low includes high/h.hpp of high, which it may not (docs/architecture.md)",
                "plug/two/q.cpp:1: plug/two includes plug/one/p.hpp of plug/one, which it may not (docs/architecture.md)",
                "top/t.cpp:2: top includes high/h.hpp of high, which it may not (docs/architecture.md)",
                "include cycle: low/a -> low/b -> low/a  (low/a.hpp:1, low/b.cpp:2)"]
        if got != want:
            print("check_layers self-test failed:\n  got  " + "\n       ".join(got) + "\n  want " +
                  "\n       ".join(want), file=sys.stderr)
            return 1
    print("check_layers self-test: ok")
    return 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check(repo)
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
