#!/usr/bin/env bash
# Engine benchmark: waitlab vs plain `smpirun -replay` on the same MPI calls.
#
# For each workload (heat1d blocking, halo2d non-blocking, allreduce_loop) and each
# rank count, runs `waitlab run` on a flat cluster given as a SimGrid XML file, then
# exports the same workload as a time-independent trace (bench/workload_to_ti.cpp) and
# replays it with `smpirun -replay` under SimGrid's default settings on the same XML.
# Prints host wall time and simulated MPI operations per wall second for both.
#
# With --against REV, the engine against itself as of git revision REV instead of smpirun:
# REV is checked out in a temporary worktree and its `waitlab` built there (same build type,
# ccache if present); each workload then runs with both builds, back to back, REPEAT times
# (the best of each is kept), and the simulated times must be identical.
#
# usage: bench/run.sh [--against REV] [BUILD_DIR] [RANKS...]   (default: build, 1024 4096 8192)
# env:   ITER=100  TIMEOUT=900 (s per smpirun run; a timed-out run is reported as ">TIMEOUT")
#        WORKLOADS="heat1d halo2d allreduce_loop"  REPEAT=1 (--against only)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/cluster.sh
source "$ROOT/bench/cluster.sh"
AGAINST=""
if [ "${1:-}" = "--against" ]; then
  AGAINST="${2:?--against needs a git revision}"; shift 2
fi
BUILD="${1:-$ROOT/build}"; shift || true
RANKS=("$@"); [ ${#RANKS[@]} -eq 0 ] && RANKS=(1024 4096 8192)
ITER="${ITER:-100}"
TIMEOUT="${TIMEOUT:-900}"
WORKLOADS="${WORKLOADS:-heat1d halo2d allreduce_loop}"
WAITLAB="$BUILD/app/waitlab"
TI="$BUILD/bench/workload_to_ti"
WORK="$(mktemp -d /tmp/waitlab-bench.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
SPEED=1e9

now() { date +%s.%N; }
calc() { python3 -c "print($1)"; }

if [ -n "$AGAINST" ]; then
  BASE="$WORK/base"
  git -C "$ROOT" worktree add --detach "$BASE" "$AGAINST" > /dev/null 2>&1 || { echo "cannot check out $AGAINST"; exit 2; }
  trap 'git -C "$ROOT" worktree remove --force "$BASE" > /dev/null 2>&1; rm -rf "$WORK"' EXIT
  type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
  launcher=(); command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  echo "building waitlab at $(git -C "$ROOT" rev-parse --short "$AGAINST") (${type:-RelWithDebInfo}) in $BASE/build ..."
  if ! { cmake -S "$BASE" -B "$BASE/build" -DCMAKE_BUILD_TYPE="${type:-RelWithDebInfo}" "${launcher[@]}" &&
         cmake --build "$BASE/build" -j2 --target waitlab; } > "$WORK/base-build.log" 2>&1; then
    echo "build of $AGAINST failed:"; tail -20 "$WORK/base-build.log"; exit 2
  fi
  BASE_WAITLAB="$BASE/build/app/waitlab"
fi
REPEAT="${REPEAT:-1}"

# One timed `waitlab run` of a bench scenario: prints "seconds simulated_time operations".
time_run() {  # BINARY YAML OUT
  local t0 t1
  t0=$(now)
  "$1" run "$2" --out "$3" --no-progress > "$WORK/wl.log" 2>&1 || { echo "fail"; return; }
  t1=$(now)
  python3 -c "import json;s=json.load(open('$3/summary.json'));print($t1 - $t0, repr(s['simulated_time_s']), s['mpi_operations'])"
}

if [ -n "$AGAINST" ]; then
  printf "%-15s %6s %5s | %10s %12s | %10s %12s | %7s | %s\n" workload ranks iter "before s" "ops/s" \
    "now s" "ops/s" speedup "simulated time identical"
fi
[ -z "$AGAINST" ] && printf "%-15s %6s %5s | %10s %12s | %10s %12s | %7s | %s\n" workload ranks iter "waitlab s" "ops/s" \
  "smpirun s" "ops/s" speedup "simulated time waitlab / smpirun"
for n in "${RANKS[@]}"; do
  xml="$WORK/cluster-$n.xml"
  write_cluster "$n" "$xml" "$WORK/hosts-$n.txt"
  for w in $WORKLOADS; do
    extra=""
    [ "$w" = heat1d ] && extra="mode: blocking"
    cat > "$WORK/$w-$n.yaml" <<YAML
name: bench-$w-$n
platform:
  type: xml
  file: $xml
workload:
  type: $w
  ranks: $n
  iterations: $ITER
  $extra
run:
  seed: 1
outputs:
  trace: false
YAML
    if [ -n "$AGAINST" ]; then
      best_old=""; best_new=""; same=yes
      for _ in $(seq "$REPEAT"); do
        read -r s_old sim_old ops < <(time_run "$BASE_WAITLAB" "$WORK/$w-$n.yaml" "$WORK/old-$w-$n")
        read -r s_new sim_new _ < <(time_run "$WAITLAB" "$WORK/$w-$n.yaml" "$WORK/new-$w-$n")
        if [ "$s_old" = fail ] || [ "$s_new" = fail ]; then echo "waitlab failed on $w $n:"; tail -5 "$WORK/wl.log"; continue 2; fi
        [ "$sim_old" = "$sim_new" ] || same="NO ($sim_old vs $sim_new)"
        best_old=$(calc "min(${best_old:-$s_old}, $s_old)"); best_new=$(calc "min(${best_new:-$s_new}, $s_new)")
      done
      printf "%-15s %6d %5d | %10.2f %12.0f | %10.2f %12.0f | %7.2f | %s (%s s)\n" "$w" "$n" "$ITER" "$best_old" \
        "$(calc "$ops / $best_old")" "$best_new" "$(calc "$ops / $best_new")" "$(calc "$best_old / $best_new")" "$same" "$sim_new"
      continue
    fi
    t0=$(now)
    if ! "$WAITLAB" run "$WORK/$w-$n.yaml" --out "$WORK/out-$w-$n" --no-progress > "$WORK/wl.log" 2>&1; then
      echo "waitlab failed on $w $n:"; tail -5 "$WORK/wl.log"; continue
    fi
    t1=$(now)
    wl_s=$(calc "$t1 - $t0")
    ops=$(python3 -c "import json;print(json.load(open('$WORK/out-$w-$n/summary.json'))['mpi_operations'])")
    wl_sim=$(python3 -c "import json;print('%.7g' % json.load(open('$WORK/out-$w-$n/summary.json'))['simulated_time_s'])")

    tiargs="ranks=$n iterations=$ITER"
    [ "$w" = heat1d ] && tiargs="$tiargs mode=blocking"
    index=$("$TI" "$w" "$WORK/ti-$w-$n" "$SPEED" $tiargs)
    t0=$(now)
    # The index lists its rank files relative to its own directory: replay from there.
    (cd "$(dirname "$index")" && timeout "$TIMEOUT" smpirun -np "$n" -platform "$xml" -hostfile "$WORK/hosts-$n.txt" -replay "$(basename "$index")" \
      --cfg=smpi/display-timing:yes > "$WORK/smpi.log" 2>&1)
    rc=$?
    t1=$(now)
    rm -rf "$WORK/ti-$w-$n"
    if [ $rc -eq 124 ]; then
      printf "%-15s %6d %5d | %10.2f %12.0f | %10s %12s | %7s | %s / -\n" "$w" "$n" "$ITER" "$wl_s" \
        "$(calc "$ops / $wl_s")" ">$TIMEOUT" "-" ">$(calc "round($TIMEOUT / $wl_s, 1)")" "$wl_sim"
      continue
    elif [ $rc -ne 0 ]; then
      echo "smpirun failed on $w $n (rc $rc):"; tail -5 "$WORK/smpi.log"; continue
    fi
    sm_s=$(calc "$t1 - $t0")
    sm_sim=$(sed -n 's/.*Simulated time: \([0-9.e+-]*\) seconds.*/\1/p' "$WORK/smpi.log" | tail -1)
    printf "%-15s %6d %5d | %10.2f %12.0f | %10.2f %12.0f | %7.2f | %s / %s\n" "$w" "$n" "$ITER" "$wl_s" \
      "$(calc "$ops / $wl_s")" "$sm_s" "$(calc "$ops / $sm_s")" "$(calc "$sm_s / $wl_s")" "$wl_sim" "$sm_sim"
  done
done
