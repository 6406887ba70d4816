#!/usr/bin/env python3
"""Where the engine's host time goes: reads `perf report --stdio` output (flat, per symbol,
`--sort dso,symbol`) and sums the samples by part of the stack: SimGrid's kernel (context
switches, simcalls and actors, activities, the max-min (LMM) solver, resource models and
routing), SMPI's MPI layer, waitlab's own code, the C library's allocator, the rest of libc
and libstdc++, and the OS kernel.

usage: perf report -i perf.data --no-children --sort dso,symbol --stdio | bench/perf_breakdown.py [--top N]
"""
import re
import sys
from collections import defaultdict

# (category, predicate on dso and symbol), first match wins.
RULES = [
    ("SimGrid: context switches", lambda d, s: "libsimgrid" in d and re.search(
        r"swapcontext|kernel::context::|Context::self|ContextFactory", s)),
    ("SimGrid: simcalls, actors, engine loop", lambda d, s: "libsimgrid" in d and re.search(
        r"kernel::actor::|simcall|EngineImpl|s4u::Actor|s4u::Engine|s4u::this_actor|intrusive_ptr_(add_ref|release)$|"
        r"s4u::intrusive_ptr", s)),
    ("SimGrid: activities (comms, sleeps, mailboxes)", lambda d, s: "libsimgrid" in d and re.search(
        r"kernel::activity::", s)),
    ("SimGrid: max-min (LMM) solver", lambda d, s: "libsimgrid" in d and "kernel::lmm::" in s),
    ("SimGrid: resource models, routing, action heaps", lambda d, s: "libsimgrid" in d and re.search(
        r"kernel::resource::|kernel::routing::|kernel::timer|s4u::Host|s4u::Link|s4u::NetZone|ActionHeap|"
        r"boost::heap|surf_|kernel::profile", s)),
    ("SMPI: MPI layer (requests, datatypes, matching, collectives)", lambda d, s: "libsimgrid" in d and re.search(
        r"smpi|PMPI_|MPI_|colls::|Coll_", s)),
    ("SimGrid: other (xbt, unresolved)", lambda d, s: "libsimgrid" in d),
    ("waitlab (actions, recording, ground truth)", lambda d, s: d == "waitlab" or d.startswith("waitlab")),
    ("C library: malloc/free", lambda d, s: "libc" in d and re.search(
        r"malloc|free|unlink_chunk|tcache|_int_realloc|realloc|calloc|memalign", s)),
    ("C library: other (memcpy, ...)", lambda d, s: "libc" in d or "ld-linux" in d),
    ("C++ library (dynamic_cast, strings, ...)", lambda d, s: "libstdc++" in d or "libgcc" in d),
    ("OS kernel (page faults, system calls)", lambda d, s: "kernel" in d),
]


def main():
    top = 0
    if "--top" in sys.argv:
        top = int(sys.argv[sys.argv.index("--top") + 1])
    parts = defaultdict(float)
    symbols = []
    line_re = re.compile(r"^\s*([0-9.]+)%\s+(\S+)\s+\[[.k]\]\s+(.*?)\s*$")
    for line in sys.stdin:
        m = line_re.match(line)
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2), m.group(3)
        for name, rule in RULES:
            if rule(dso, sym):
                parts[name] += pct
                break
        else:
            parts["other"] += pct
        symbols.append((pct, dso, sym))
    total = sum(parts.values())
    print("| part | share of samples |")
    print("| --- | ---: |")
    for name, _ in RULES + [("other", None)]:
        if parts.get(name):
            print(f"| {name} | {parts[name]:.1f} % |")
    print(f"| (all) | {total:.1f} % |")
    if top:
        print()
        for pct, dso, sym in symbols[:top]:
            print(f"{pct:6.2f}%  {dso:20.20s} {sym[:110]}")


if __name__ == "__main__":
    main()
