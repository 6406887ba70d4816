#!/usr/bin/env bash
# libwaitlab-profiler's overhead on real Open MPI (docs/profiler.md, "Overhead").
#
# Runs bench/profiler_overhead.c's micro-benchmarks (8-byte messages) three ways — without
# the profiler, with it preloaded and the test at entry of MPI_Wait off
# (WAITLAB_PROFILER_TEST=0), and with the test on (the default) — and prints the time per
# iteration and the profiler's overhead per iteration and per MPI call on the iteration's
# path. Each figure is the fastest of RUNS × REPS runs of ITER iterations: RUNS mpirun
# commands per configuration, taking turns with the other configurations, each timing REPS
# runs (the fastest is the least disturbed by the rest of the machine).
#
# usage: bench/profiler_overhead.sh [BUILD_DIR]     (default: build)
# env:   ITER=200000 REPS=5 RUNS=3 ALLREDUCE_RANKS=4
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
ITER="${ITER:-200000}"
REPS="${REPS:-5}"
RUNS="${RUNS:-3}"
ALLREDUCE_RANKS="${ALLREDUCE_RANKS:-4}"
BENCH="$BUILD/bench/profiler_overhead"
LIB="$BUILD/profiler/libwaitlab-profiler.so"
for f in "$BENCH" "$LIB"; do
  if [ ! -e "$f" ]; then
    echo "missing $f: cmake --build $BUILD --target profiler_overhead waitlab-profiler" >&2
    exit 1
  fi
done
OUT="$(mktemp -d /tmp/waitlab-profiler-bench.XXXXXX)"
trap 'rm -rf "$OUT"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 WAITLAB_PROFILER_OUT="$OUT"

# run MODE RANKS CONFIG -> "ns_per_iteration calls"
run() {
  local extra=()
  case "$3" in
    off) extra=(-x "LD_PRELOAD=$LIB" -x WAITLAB_PROFILER_OUT -x WAITLAB_PROFILER_TEST=0) ;;
    on) extra=(-x "LD_PRELOAD=$LIB" -x WAITLAB_PROFILER_OUT -x WAITLAB_PROFILER_TEST=1) ;;
  esac
  mpirun --oversubscribe -np "$2" ${extra[@]+"${extra[@]}"} "$BENCH" "$1" "$ITER" "$REPS" |
    awk '{print $2, $3}'
}

printf "%-14s %5s | %-20s | %12s | %14s %8s %12s\n" benchmark ranks configuration "ns/iteration" \
  "overhead ns" "%" "ns per call"
for spec in "pingpong 2" "pingpong-wait 2" "allreduce $ALLREDUCE_RANKS"; do
  read -r mode ranks <<< "$spec"
  # The three configurations take turns, RUNS times; each keeps its fastest run.
  declare -A best=()
  for ((r = 0; r < RUNS; r++)); do
    for config in none off on; do
      read -r t calls < <(run "$mode" "$ranks" "$config")
      best[$config]=$(awk -v a="${best[$config]:-}" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
  done
  base=${best[none]}
  printf "%-14s %5d | %-20s | %12.1f | %14s %8s %12s\n" "$mode" "$ranks" "no profiler" "$base" - - -
  for config in off on; do
    label="preloaded, TEST=$([ $config = on ] && echo 1 || echo 0)"
    awk -v m="$mode" -v n="$ranks" -v l="$label" -v t="${best[$config]}" -v b="$base" -v c="$calls" 'BEGIN {
      printf "%-14s %5d | %-20s | %12.1f | %14.1f %7.1f%% %12.1f\n",
        m, n, l, t, t - b, 100 * (t - b) / b, (t - b) / c }'
  done
  unset best
done
