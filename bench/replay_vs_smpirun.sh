#!/usr/bin/env bash
# Replay benchmark: `waitlab replay` against SimGrid's own `smpirun -replay` on time-independent
# traces of seven application-like MPI programs (bench/apps/*.c: a 1D heat code, Sweep3D, NPB LU,
# NPB CG, LULESH, NPB FT, NPB IS), recorded with `smpirun -trace-ti` (SimGrid 3.32).
#
# For each APP:RANKS: writes a flat cluster platform (as bench/run.sh: 1 Gf cores, 10 GB/s and
# 1 us links, a loopback link) and a hostfile, compiles bench/apps/APP.c with smpicc, traces it
#   smpirun -np N -platform X -hostfile H -trace-ti --cfg=tracing/filename:APP-N.ti
#           --cfg=smpi/host-speed:1Gf --cfg=smpi/simulate-computation:no ./APP [ARGS]
# (compute phases are smpi_execute_flops() calls, so the trace's `compute` records are
# deterministic), then measures back to back, each under /usr/bin/time -f "%e %M":
#   (a) smpirun -np N -platform X -hostfile H -replay APP-N.ti --cfg=smpi/host-speed:1Gf
#       --cfg=smpi/display-timing:yes  (its simulated time read from the log line's clock
#       printed with 15 decimals, as tests/app/test_smpi_replay.cpp does)
#   (b) BUILD_DIR/app/waitlab replay APP-N.ti --platform X --set run.semantics=smpi-default
#       --no-progress --out DIR  (simulated_time_s of DIR/summary.json)
# %M of smpirun is the peak RSS of the largest process of its tree: smpirun is a shell
# script whose child smpimain does the whole simulation, and GNU time reports the maximum over
# the waited-for descendants (ru_maxrss of RUSAGE_CHILDREN), i.e. smpimain's.
#
# ft and is use SMPI's pairwise exchange for MPI_Alltoall and MPI_Alltoallv, as these codes are
# run at 256 ranks: --cfg=smpi/alltoall:pair --cfg=smpi/alltoallv:pair when tracing and for
# smpirun -replay, --set run.collective_algorithms.alltoall=pair (and alltoallv) for waitlab.
#
# "traced s" is the simulated end of the recording run itself. lulesh's MPI_Waitall over its
# sends only cannot be replayed by smpirun (it aborts); its row compares waitlab with the
# traced run, and the lulesh_all row (lulesh.c built with -DWAITALL_ALL) with smpirun.
#
# usage: bench/replay_vs_smpirun.sh [--reuse] [BUILD_DIR] [APP:RANKS[:ARG,ARG...] ...]
#   default: build heat:1024 sweep3d:1024 lu:1024 cg:256 lulesh:512 lulesh_all:512 ft:256 is:256
#   --reuse: reuse a trace already in the work directory if made from the same source, flags
#            and arguments (traces are always kept there)
# env: WORK=/tmp/waitlab-replay-bench  TIMEOUT=1800 (s per run)
#      WAITLAB_ARGS: more arguments for waitlab replay, e.g. "--set outputs.trace=false" (a replay
#      that writes no trace.wlt and so records no events: as smpirun -replay, which writes none)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/cluster.sh
source "$ROOT/bench/cluster.sh"
REUSE=0
[ "${1:-}" = "--reuse" ] && { REUSE=1; shift; }
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"; shift || true
CASES=("$@"); [ ${#CASES[@]} -eq 0 ] && CASES=(heat:1024 sweep3d:1024 lu:1024 cg:256 lulesh:512 lulesh_all:512 ft:256 is:256)
WORK="${WORK:-/tmp/waitlab-replay-bench}"
TIMEOUT="${TIMEOUT:-1800}"
read -r -a WAITLAB_ARGS <<< "${WAITLAB_ARGS:-}"
WAITLAB="$BUILD/app/waitlab"
mkdir -p "$WORK"
for tool in smpicc smpirun python3; do command -v $tool > /dev/null || { echo "missing: $tool"; exit 2; }; done
[ -x /usr/bin/time ] || { echo "missing: /usr/bin/time (Debian package 'time')"; exit 2; }
[ -x "$WAITLAB" ] || { echo "missing: $WAITLAB"; exit 2; }
LOGFMT='--log=smpi_utils.fmt:[%.15r]%e%m%n'
# The clock of smpirun's "Simulated time" log line (15 decimals), or "-".
simtime() { sed -n 's/^\[\([0-9.eE+-]*\)\] Simulated time: .*/\1/p' "$1" | tail -1 | grep . || echo -; }

printf "%-10s %5s %9s %10s | %8s %7s %17s | %8s %7s %17s | %7s %6s %9s\n" app ranks records "traced s" \
  "smpi s" "RSS MB" "simulated s" "wl s" "RSS MB" "simulated s" speedup "mem" "rel diff"
for c in "${CASES[@]}"; do
  IFS=: read -r app n args <<< "$c"
  args="${args//,/ }"
  src="$app"; cflags=""
  [ "$app" = lulesh_all ] && { src=lulesh; cflags=-DWAITALL_ALL; }
  # The collective algorithms of the recording, given to both replays.
  smpi_coll=(); wl_coll=()
  if [ "$app" = ft ] || [ "$app" = is ]; then
    smpi_coll=(--cfg=smpi/alltoall:pair --cfg=smpi/alltoallv:pair)
    wl_coll=(--set run.collective_algorithms.alltoall=pair --set run.collective_algorithms.alltoallv=pair)
  fi
  d="$WORK/$app-$n${args:+-${args// /_}}"
  mkdir -p "$d"
  xml="$d/cluster.xml"; hosts="$d/hosts"
  write_cluster "$n" "$xml" "$hosts"
  ti="$app.ti"
  stamp="$(md5sum < "$ROOT/bench/apps/$src.c" | cut -d' ' -f1) $cflags $args ${smpi_coll[*]}"  # what the trace was made of
  if [ $REUSE = 0 ] || [ "$(cat "$d/traced.ok" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$d/$ti" "$d/${ti}_files" "$d/traced.ok"
    if ! smpicc -O1 $cflags "$ROOT/bench/apps/$src.c" -o "$d/$app" > "$d/compile.log" 2>&1; then
      echo "$app: smpicc failed:"; tail -5 "$d/compile.log"; continue
    fi
    # shellcheck disable=SC2086
    if ! (cd "$d" && timeout "$TIMEOUT" smpirun -np "$n" -platform "$xml" -hostfile "$hosts" -trace-ti \
          --cfg=tracing/filename:"$ti" --cfg=smpi/host-speed:1Gf --cfg=smpi/simulate-computation:no \
          "${smpi_coll[@]}" --cfg=smpi/display-timing:yes "$LOGFMT" "./$app" $args > trace.log 2>&1); then
      echo "$app: tracing failed:"; tail -5 "$d/trace.log"; continue
    fi
    echo "$stamp" > "$d/traced.ok"
  fi
  traced=$(simtime "$d/trace.log")
  records=$(cd "$d" && xargs cat < "$ti" | wc -l)

  # (a) smpirun -replay, from the trace's directory (the index names its files relatively)
  (cd "$d" && timeout "$TIMEOUT" /usr/bin/time -f "%e %M" -o smpi.time smpirun -np "$n" -platform "$xml" \
     -hostfile "$hosts" -replay "$ti" --cfg=smpi/host-speed:1Gf "${smpi_coll[@]}" --cfg=smpi/display-timing:yes \
     "$LOGFMT" > smpi.log 2>&1)
  smpi_rc=$?
  read -r sm_s sm_kb < <(tail -1 "$d/smpi.time")
  sm_sim=$(simtime "$d/smpi.log")
  if [ $smpi_rc -ne 0 ]; then
    sm_sim="failed"
    why=$(grep -o "action [a-z]* not preceded[^\"]*" "$d/smpi.log" | head -1)
    [ $smpi_rc -eq 124 ] && why="timeout after $TIMEOUT s"
    note="smpirun -replay exit $smpi_rc${why:+: $why}"
  else note=""; fi

  # (b) waitlab replay
  rm -rf "$d/wl"
  (cd "$d" && timeout "$TIMEOUT" /usr/bin/time -f "%e %M" -o wl.time "$WAITLAB" replay "$ti" --platform "$xml" \
     --set run.semantics=smpi-default "${wl_coll[@]}" "${WAITLAB_ARGS[@]}" --no-progress --out wl > wl.log 2>&1) ||
    { echo "$app: waitlab replay failed:"; tail -5 "$d/wl.log"; continue; }
  read -r wl_s wl_kb < <(tail -1 "$d/wl.time")
  wl_sim=$(python3 -c "import json;print(repr(json.load(open('$d/wl/summary.json'))['simulated_time_s']))")

  python3 - "$app" "$n" "$records" "$traced" "$sm_s" "$sm_kb" "$sm_sim" "$wl_s" "$wl_kb" "$wl_sim" "$note" <<'PY'
import sys
app, n, rec, traced, sm_s, sm_kb, sm_sim, wl_s, wl_kb, wl_sim, note = sys.argv[1:]
ok = sm_sim not in ("-", "failed")
ref = float(sm_sim) if ok else (float(traced) if traced != "-" else None)
rel = "-" if ref is None else "%+.1e" % ((float(wl_sim) - ref) / ref)
if not ok and ref is not None:
    rel += "*"
# speed-up and memory ratio only where smpirun replayed the whole trace
speedup = "%.2f" % (float(sm_s) / float(wl_s)) if ok else "-"
mem = "%.2f" % (int(sm_kb) / int(wl_kb)) if ok else "-"
print("%-10s %5s %9s %10.7f | %8.2f %7.0f %17s | %8.2f %7.0f %17.15f | %7s %6s %9s" % (
    app, n, rec, float(traced) if traced != "-" else float("nan"), float(sm_s), int(sm_kb) / 1024,
    ("%.15f" % float(sm_sim)) if ok else sm_sim, float(wl_s), int(wl_kb) / 1024, float(wl_sim), speedup, mem, rel))
if note:
    print("  %s: %s; rel diff* is waitlab against the traced run" % (app, note))
PY
done
echo "(speedup = smpirun wall / waitlab wall; mem = smpirun peak RSS / waitlab peak RSS; rel diff = (waitlab - smpirun) / smpirun simulated time)"
uptime
