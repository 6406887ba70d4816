#!/usr/bin/env python3
"""Independent reference for Scalasca 2.6's MPI wait-state metrics on an OTF2 trace.

Reads the text output of `otf2-print` (package otf2-tools), never waitlab code, and applies
Scalasca 2.6's rules (scout's MPI.pattern / MpiCommunicationHandler.cpp) WITHOUT clock
correction (scout's default, no --time-correct).  Timestamps are the ones otf2-print prints:
the OTF2 library has already applied the archive's ClockOffset records to them (otf2-print
reads the local definitions, and its global event reader always applies their clock
offsets: linear interpolation between the records, extrapolation outside them).  All rules
are evaluated on integer ticks; seconds = ticks / timerResolution at the end.

Usage: scalasca_reference.py TRACE/traces.otf2 [--per-rank] [--instances]
Output: JSON on stdout; pattern names follow waitlab's waitstate kNames.
"""
import json
import re
import subprocess
import sys
from collections import defaultdict, deque

PATTERNS = ["late_sender", "late_sender_wrong_order_same_source", "late_sender_wrong_order_different_source",
            "late_receiver", "wait_at_barrier", "barrier_completion", "wait_at_nxn", "nxn_completion",
            "late_broadcast", "early_reduce", "early_scan", "wait_at_init", "init_completion", "wait_at_finalize"]
WO_BUFFER = 100  # MPI_LATESENDER_WO's BUFFERSIZE
TESTX = {"MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"}
WAIT_MULTI = {"MPI_Waitall", "MPI_Waitany", "MPI_Waitsome"}
WAIT_SINGLE = {"MPI_Wait"}
BLOCK_SEND = {"MPI_Send", "MPI_Ssend"}  # pearl: P2P send, standard or synchronous mode, blocking
INIT = {"MPI_Init", "MPI_Init_thread"}
ONE2N = {"BCAST", "SCATTER", "SCATTERV"}
N2N = {"ALLGATHER", "ALLGATHERV", "ALLTOALL", "ALLREDUCE", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK"}
N21 = {"GATHER", "GATHERV", "REDUCE"}
SCAN = {"SCAN", "EXSCAN"}
IGNORED = {"ALLTOALLV", "ALLTOALLW"}  # scout returns before dispatch: arbitrary patterns

RE_ID = re.compile(r"<(\d+)>")
RE_REGION = re.compile(r'Region: "(.*)" <(\d+)>')
RE_PEER = re.compile(r'(?:Receiver|Sender): (\d+)[^,]*, Communicator: "[^"]*" <(\d+)>, Tag: (-?\d+), '
                     r'Length: (\d+)(?:, Request: (\d+))?')
RE_REQ = re.compile(r"Request: (\d+)")
RE_COLL = re.compile(r'Operation: (\w+), Communicator: "[^"]*" <(\d+)>, Root: (NONE|UNDEFINED|\d+)[^,]*'
                     r'(?:, [^,]*\))?, Sent: (\d+), Received: (\d+)')


def otf2_print(args):
    return subprocess.run(["otf2-print"] + args, check=True, capture_output=True, text=True).stdout


def read_definitions(anchor):
    """Clock properties, location -> world rank, communicator -> list of world ranks."""
    res = offset = None
    comm_locs, groups, comms, locations = {}, {}, {}, []
    for line in otf2_print(["-G", anchor]).splitlines():
        kind = line.split(" ", 1)[0]
        if kind == "CLOCK_PROPERTIES":
            res = int(re.search(r"Ticks per Seconds: (\d+)", line).group(1))
            offset = int(re.search(r"Global Offset: (\d+)", line).group(1))
        elif kind == "LOCATION":
            locations.append(int(line.split()[1]))
        elif kind == "GROUP":
            gid = int(line.split()[1])
            gtype = re.search(r"Type: (\w+)", line).group(1)
            mpi = 'Paradigm: "MPI"' in line
            members = line.split("Members", 1)[1] if "Members:" in line else ""
            if gtype == "COMM_LOCATIONS" and mpi:  # rank i of MPI_COMM_WORLD = member i
                comm_locs = {loc: i for i, loc in enumerate(int(x) for x in RE_ID.findall(members))}
            elif gtype == "COMM_GROUP":  # members: "rank ("name" <loc>)" -> ranks in COMM_LOCATIONS
                groups[gid] = ("group", [int(x) for x in re.findall(r"(?:: |, )(\d+) \(", members)])
            elif gtype == "COMM_SELF":
                groups[gid] = ("self", [])
        elif kind == "COMM":
            cid = int(line.split()[1])
            comms[cid] = int(re.search(r'Group: "[^"]*" <(\d+)>', line).group(1))
    if res is None:
        sys.exit("no CLOCK_PROPERTIES in the global definitions")
    rank_of = {loc: comm_locs.get(loc, i) for i, loc in enumerate(sorted(locations))}
    comm_ranks = {c: groups.get(g, ("self", [])) for c, g in comms.items()}
    return res, offset, rank_of, comm_ranks


def world(comm_ranks, comm, local, me):
    kind, members = comm_ranks[comm]
    return me if kind == "self" else members[local]


def read_events(anchor, rank_of, comm_ranks):
    """Per rank: calls [name, enter, leave], p2p records, collective records."""
    n = len(rank_of)
    calls = [[] for _ in range(n)]
    stack = [[] for _ in range(n)]
    sends = defaultdict(deque)      # (src, dst, comm, tag) -> send records in send order
    recvs = [[] for _ in range(n)]  # receive completions in location order
    colls = [defaultdict(list) for _ in range(n)]
    begin = [None] * n
    isend_pending, irecv_pending = {}, {}
    for line in otf2_print([anchor]).splitlines():
        f = line.split(None, 3)
        if len(f) < 3 or line[0] == " " or not f[1].isdigit():
            continue
        kind, r, t = f[0], rank_of[int(f[1])], int(f[2])
        attrs = f[3] if len(f) > 3 else ""
        if kind == "ENTER":
            calls[r].append([RE_REGION.search(attrs).group(1), t, None])
            stack[r].append(len(calls[r]) - 1)
        elif kind == "LEAVE":
            calls[r][stack[r].pop()][2] = t
        elif kind in ("MPI_SEND", "MPI_ISEND"):
            m = RE_PEER.search(attrs)
            comm, tag = int(m.group(2)), int(m.group(3))
            dst = world(comm_ranks, comm, int(m.group(1)), r)
            rec = {"ts": t, "call": stack[r][-1], "rank": r, "done": stack[r][-1] if kind == "MPI_SEND" else None}
            sends[(r, dst, comm, tag)].append(rec)
            if kind == "MPI_ISEND":
                isend_pending[(r, int(m.group(5)))] = rec
        elif kind == "MPI_ISEND_COMPLETE":
            rec = isend_pending.pop((r, int(RE_REQ.search(attrs).group(1))), None)
            if rec is not None:
                rec["done"] = stack[r][-1]
        elif kind == "MPI_IRECV_REQUEST":
            irecv_pending[(r, int(RE_REQ.search(attrs).group(1)))] = stack[r][-1]
        elif kind in ("MPI_RECV", "MPI_IRECV"):
            m = RE_PEER.search(attrs)
            comm, tag, local = int(m.group(2)), int(m.group(3)), int(m.group(1))
            post = stack[r][-1] if kind == "MPI_RECV" else irecv_pending.pop((r, int(m.group(5))), None)
            recvs[r].append({"ts": t, "call": stack[r][-1], "post": post, "comm": comm, "tag": tag,
                             "local_src": local, "src": world(comm_ranks, comm, local, r)})
        elif kind == "MPI_COLLECTIVE_BEGIN":
            begin[r] = t
        elif kind == "MPI_COLLECTIVE_END":
            m = RE_COLL.search(attrs)
            root = int(m.group(3)) if m.group(3).isdigit() else None
            colls[r][int(m.group(2))].append({"op": m.group(1), "begin": begin[r], "end": t, "root": root,
                                              "sent": int(m.group(4)), "recv": int(m.group(5)), "rank": r})
    return calls, sends, recvs, colls


class Result:
    def __init__(self, n):
        self.total = {p: 0 for p in PATTERNS}
        self.count = {p: 0 for p in PATTERNS}
        self.per_rank = {p: [0] * n for p in PATTERNS}
        self.instances = []
        self.coll_violations = defaultdict(int)  # by operation

    def add(self, pattern, rank, ticks, where):
        if ticks > 0:
            self.total[pattern] += ticks
            self.count[pattern] += 1
            self.per_rank[pattern][rank] += ticks
            self.instances.append((pattern, rank, where, ticks))


def point_to_point(calls, sends, recvs, out):
    """Match messages (FIFO per sender, receiver, communicator, tag, in the order of the
    receive events, as PEARL's replay re-sends them), then Late Sender (+ wrong order) and
    Late Receiver.  Returns (messages, p2p clock violations, unmatched receives)."""
    enter = lambda r, c: calls[r][c][1]
    leave = lambda r, c: calls[r][c][2]
    name = lambda r, c: calls[r][c][0]
    messages, violations, unmatched = [], 0, 0
    ls_candidate_calls = set()  # multi-wait calls with a Late Sender candidate (LATE_SENDER_CANDIDATE)
    for r, rlist in enumerate(recvs):
        buffer = deque()  # wrong-order buffer: [send ts, local source, idle, recv call]
        multi = None      # open multi-wait: [call, max idle, send ts, local source]

        def flush():  # GROUP_LEAVE of a multi-wait: its maximum Late Sender, once
            if multi is not None and multi[1] > 0:
                out.add("late_sender", r, multi[1], ("call", multi[0], enter(r, multi[0])))
                if len(buffer) == WO_BUFFER:
                    buffer.popleft()
                buffer.append([multi[2], multi[3], multi[1], multi[0]])

        for rv in rlist:
            if multi is not None and multi[0] != rv["call"]:
                flush()
                multi = None
            q = sends.get((rv["src"], r, rv["comm"], rv["tag"]))
            if not q:
                unmatched += 1
                continue
            s = q.popleft()
            messages.append((s, rv, r))
            if s["ts"] > rv["ts"]:
                violations += 1
            region = name(r, rv["call"])
            if region not in TESTX:  # MPI_LATESENDER POST_RECV
                idle = min(enter(s["rank"], s["call"]), leave(r, rv["call"])) - enter(r, rv["call"])
                if idle > 0:
                    if region in WAIT_MULTI:
                        ls_candidate_calls.add((r, rv["call"]))
                        if multi is None:
                            multi = [rv["call"], 0, None, None]
                        if idle > multi[1]:
                            multi[1:] = [idle, s["ts"], rv["local_src"]]
                    else:
                        out.add("late_sender", r, idle, ("call", rv["call"], enter(r, rv["call"])))
                        if len(buffer) == WO_BUFFER:
                            buffer.popleft()
                        buffer.append([s["ts"], rv["local_src"], idle, rv["call"]])
            # MPI_LATESENDER_WO POST_RECV: every receive, MPI_Test* included
            keep = deque()
            for e in buffer:
                if e[0] > s["ts"]:
                    p = "same_source" if e[1] == rv["local_src"] else "different_source"
                    out.add("late_sender_wrong_order_" + p, r, e[2], ("call", e[3], enter(r, e[3])))
                else:
                    keep.append(e)
            buffer = keep
        flush()

    # MPI_LATERECEIVER (backward replay; the order of summation does not matter)
    multi_lr = {}
    for s, rv, r in messages:
        done, post = s["done"], rv["post"]
        if done is None or post is None:
            continue
        sr = s["rank"]
        idle = 0 if leave(sr, done) <= enter(r, post) else enter(r, post) - enter(sr, done)
        region = name(sr, done)
        if region in BLOCK_SEND or region in WAIT_SINGLE:
            out.add("late_receiver", sr, idle, ("call", done, enter(sr, done)))
        elif region in WAIT_MULTI and (sr, done) not in ls_candidate_calls:
            multi_lr[(sr, done)] = max(multi_lr.get((sr, done), 0), idle)
    for (sr, done), idle in sorted(multi_lr.items()):
        out.add("late_receiver", sr, idle, ("call", done, enter(sr, done)))
    return len(messages), violations, unmatched


def maxloc(pairs):  # MPI_MAXLOC on (time, rank): the largest time, the lowest rank on ties
    return max(pairs, key=lambda p: (p[0], -p[1]))


def collectives(colls, comm_ranks, out):
    """Collective instances: the k-th collective on a communicator on each member."""
    unknown, ignored, instances = defaultdict(int), 0, 0
    for comm in sorted({c for per in colls for c in per}):
        kind, members = comm_ranks[comm]
        if kind == "self" or len(members) < 2:
            continue  # size-1 communicators do not synchronize
        seqs = [colls[m].get(comm, []) for m in members]
        if len({len(x) for x in seqs}) != 1:
            sys.exit("communicator %d: members have different numbers of collectives" % comm)
        for k in range(len(seqs[0])):
            mem = [seq[k] for seq in seqs]  # indexed by communicator-local rank
            op = mem[0]["op"]
            at = lambda x: ("coll", comm, k, x["begin"])  # where an instance is: for --instances
            instances += 1
            if op in IGNORED:
                ignored += 1
                continue
            if op == "BARRIER":
                latest = max(x["begin"] for x in mem)
                e_end = min(x["end"] for x in mem)
                for x in mem:
                    lb = min(latest, x["end"])
                    out.coll_violations[op] += latest > x["end"]
                    out.add("wait_at_barrier", x["rank"], lb - x["begin"], at(x))
                    out.add("barrier_completion", x["rank"], x["end"] - max(e_end, lb), at(x))
            elif op in ONE2N:
                root = mem[mem[0]["root"]]
                if root["sent"] == 0:
                    continue
                waits = [x for x in mem if x["recv"] > 0 and x["begin"] < root["begin"]]
                for x in waits:  # the root's own idle is 0
                    out.coll_violations[op] += root["begin"] > x["end"]
                    out.add("late_broadcast", x["rank"], min(root["begin"], x["end"]) - x["begin"], at(x))
            elif op in N2N:
                part = [(i, x) for i, x in enumerate(mem) if x["sent"] > 0 or x["recv"] > 0]
                if not part:
                    continue
                latest = max(x["begin"] for _, x in part)
                e_end = min(x["end"] for _, x in part)
                if e_end > latest:  # step 1: full overlap, everyone synchronizes
                    sync = [x for _, x in part]
                else:  # step 2: partial overlap, the latest sender and the receivers before it
                    senders = [(x["begin"], i) for i, x in part if x["sent"] > 0]
                    if not senders:
                        continue
                    latest, last = maxloc(senders)
                    sync = [x for i, x in part if (x["recv"] > 0 and x["begin"] < latest)
                            or (x["sent"] > 0 and i == last)]
                    e_end = min(x["end"] for x in sync)
                for x in sync:
                    lb = min(latest, x["end"])
                    out.coll_violations[op] += latest > x["end"]
                    out.add("wait_at_nxn", x["rank"], lb - x["begin"], at(x))
                    out.add("nxn_completion", x["rank"], x["end"] - max(e_end, lb), at(x))
            elif op in N21:
                root = mem[mem[0]["root"]]
                if root["recv"] == 0:
                    continue
                senders = [(x["begin"], i) for i, x in enumerate(mem) if x["sent"] > 0]
                if not senders:
                    continue
                latest, last = maxloc(senders)
                if root["begin"] < latest:  # syncpoints: root and latest sender; idle only on the root
                    for x in (root, mem[last]):
                        out.coll_violations[op] += latest > x["end"]
                    out.add("early_reduce", root["rank"], min(latest, root["end"]) - root["begin"], at(root))
            elif op in SCAN:
                latest = None
                for x in mem:
                    if x["sent"] == 0 and x["recv"] == 0:
                        continue  # returns before the MPI_Scan of the analysis
                    if x["sent"] > 0:
                        latest = x["begin"] if latest is None else max(latest, x["begin"])
                    if latest is not None and x["begin"] < latest:
                        out.coll_violations[op] += latest > x["end"]
                        out.add("early_scan", x["rank"], min(latest, x["end"]) - x["begin"], at(x))
            else:
                unknown[op] += 1
    return instances, ignored, dict(unknown)


def init_finalize(calls, out):
    """MPI_Init(_thread) and MPI_Finalize over MPI_COMM_WORLD, on ENTER/LEAVE."""
    for names, label in ((INIT, "init"), ({"MPI_Finalize"}, "finalize")):
        mem = []
        for r, cl in enumerate(calls):
            c = [(i, x) for i, x in enumerate(cl) if x[0] in names]
            if len(c) != 1:
                break
            mem.append((r, c[0][0], c[0][1][1], c[0][1][2]))
        if len(mem) != len(calls) or len(mem) < 2:
            continue
        latest = max(m[2] for m in mem)
        e_end = min(m[3] for m in mem)
        for r, call, b, e in mem:
            lb = min(latest, e)
            out.coll_violations[label.upper()] += latest > e
            if label == "init":  # Scalasca: completion only; the wait is waitlab's own metric
                out.add("init_completion", r, e - max(e_end, lb), ("call", call, b))
                out.add("wait_at_init", r, lb - b, ("call", call, b))
            else:
                out.add("wait_at_finalize", r, lb - b, ("call", call, b))


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    anchor = args[0]
    res, offset, rank_of, comm_ranks = read_definitions(anchor)
    calls, sends, recvs, colls = read_events(anchor, rank_of, comm_ranks)
    n = len(rank_of)
    out = Result(n)
    messages, violations, unmatched = point_to_point(calls, sends, recvs, out)
    instances, ignored, unknown = collectives(colls, comm_ranks, out)
    init_finalize(calls, out)
    sec = lambda ticks: ticks / res
    doc = {
        "trace": anchor,
        "clock": {"timer_resolution": res, "global_offset": offset,
                  "clock_offsets": "applied by the OTF2 library (otf2-print reads the local definitions)"},
        "ranks": n,
        "patterns": {p: {"seconds": sec(out.total[p]), "count": out.count[p]} for p in PATTERNS},
        "messages": messages,
        "clock_violations": violations,
        "collective_clock_violations": dict(sorted(out.coll_violations.items())),
        "unmatched": {"receives": unmatched, "sends": sum(len(q) for q in sends.values())},
        "collective_instances": instances,
        "ignored_collective_instances": ignored,
        "unknown_collectives": unknown,
        "notes": {"wait_at_init": "not a Scalasca 2.6 metric (scout reports MPI_Init completion only); "
                                  "computed with Scalasca's Wait-at-Finalize rule for comparison",
                  "late_sender": "includes its wrong-order subsets, as Scalasca's raw severities do"},
    }
    if "--per-rank" in argv:
        doc["per_rank_seconds"] = {p: [sec(v) for v in out.per_rank[p]] for p in PATTERNS if out.count[p]}
    if "--instances" in argv:
        doc["instances"] = [{"pattern": p, "rank": r, "enter_s": sec(w[-1] - offset), "seconds": sec(v),
                             "where": list(w[:-1])} for p, r, w, v in sorted(out.instances, key=lambda x: x[:3])]
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
