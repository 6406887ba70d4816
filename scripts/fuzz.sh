#!/usr/bin/env bash
# Fuzzes the readers of user input with libFuzzer (fuzz/README.md): builds the fuzz targets
# with clang, ASan and UBSan into build-fuzz/ (or $WAITLAB_FUZZ_BUILD), replays every committed
# input (fuzz/corpus/<target>/ and the bad inputs of fuzz/regressions/<target>/), then fuzzes
# each target.
#
#   scripts/fuzz.sh                    CI: a fixed budget per target (-seed=1, -runs=N, about
#                                      60 s each here), reproducible
#   scripts/fuzz.sh SECONDS            fuzz each target for SECONDS of wall time (exploration;
#                                      new inputs kept in build-fuzz/fuzz-work/<target>/corpus;
#                                      WAITLAB_FUZZ_ARGS adds libFuzzer flags)
#   --target NAME                      only this target (repeatable; scenario ti paraver otf2 wlt)
#   --replay-only                      build and replay the committed inputs, no fuzzing
#   --findings                         also replay fuzz/findings/<target>/ (open findings: they
#                                      fail until the reader is fixed)
#   --runs N                           this many runs per target instead of the calibrated ones
#   --no-build                         use the targets already built
#
# Exits non-zero on any finding (crash, sanitizer report, leak, timeout, an exception other than
# InputError) and prints the reproducer's path; replay one with build-fuzz/fuzz/fuzz_<target> FILE
# (WAITLAB_FUZZ_VERBOSE=1 prints what the reader said).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(realpath -m "${WAITLAB_FUZZ_BUILD:-$ROOT/build-fuzz}")"
JOBS="${WAITLAB_JOBS:-2}"
ALL_TARGETS=(scenario ti paraver otf2 wlt)
# Runs per target for CI, calibrated to about 50 s of CPU each on the project's 2-core machine with
# -seed=1 (fuzz/README.md, "Budget"). Fixed counts, not time: the same inputs every time.
declare -A CI_RUNS=([scenario]=110000 [ti]=150000 [paraver]=15000 [otf2]=16000 [wlt]=140000)
# What every run gets: a finding is a crash, a sanitizer report, a leak, a run above 2 GiB of
# memory, or a hang: a run longer than 60 s (a hang guard far above what any load makes of an
# input's milliseconds, so that a busy machine finds nothing a quiet one does not; issue 28).
LIMITS=(-timeout=60 -rss_limit_mb=2048)

targets=()
seconds=""
replay_only=0
with_findings=0
runs_override=""
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --target) IFS=, read -r -a more <<<"$2"; targets+=("${more[@]}"); shift 2 ;;
    --target=*) IFS=, read -r -a more <<<"${1#--target=}"; targets+=("${more[@]}"); shift ;;
    --replay-only|--regressions-only) replay_only=1; shift ;;
    --findings) with_findings=1; shift ;;
    --runs) runs_override="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    [0-9]*) seconds="$1"; shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=("${ALL_TARGETS[@]}")
for t in "${targets[@]}"; do
  [ -n "${CI_RUNS[$t]:-}" ] || { echo "fuzz.sh: unknown target '$t' (targets: ${ALL_TARGETS[*]})" >&2; exit 2; }
done

T0=$SECONDS  # wallclock-ok: the seconds printed, never a bound
if [ "$build" = 1 ]; then
  CC_BIN="$(command -v clang-14 || command -v clang || true)"
  CXX_BIN="$(command -v clang++-14 || command -v clang++ || true)"
  if [ -z "$CC_BIN" ] || [ -z "$CXX_BIN" ]; then
    echo "fuzz.sh: clang not found (scripts/setup.sh installs clang-14 and libclang-rt-14-dev)" >&2
    exit 2
  fi
  # Extra configure arguments, e.g. WAITLAB_FUZZ_CMAKE="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache".
  read -r -a WAITLAB_FUZZ_CMAKE_ARGS <<<"${WAITLAB_FUZZ_CMAKE:-}"
  echo "== fuzz build ($(basename "$CXX_BIN"), libFuzzer + ASan + UBSan) in $BUILD =="
  # -O1 and line tables only: what libFuzzer recommends, and a quicker build than -O2 -g.
  CC="$CC_BIN" CXX="$CXX_BIN" cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWAITLAB_FUZZ=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DWAITLAB_BUILD_TESTS=OFF -DWAITLAB_BUILD_BENCH=OFF "${WAITLAB_FUZZ_CMAKE_ARGS[@]}" >/dev/null
  cmake --build "$BUILD" -j"$JOBS" --target "${targets[@]/#/fuzz_}"
  echo "fuzz build: $((SECONDS - T0)) s"
fi

WORK="$BUILD/fuzz-work"
mkdir -p "$WORK"
# The TI reader also looks for rank files in the working directory: not the repository's.
cd "$WORK"
# Temporary files of the targets (each input is written to disk): in memory when possible.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then TMP_BASE=/dev/shm; else TMP_BASE="$WORK"; fi
export TMPDIR="$(mktemp -d "$TMP_BASE/waitlab-fuzz.XXXXXX")"
trap 'rm -rf "$TMPDIR"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/fuzz/lsan.supp}"

failures=()
# Runs one committed input; a finding is reported with its path.
replay() {  # target file
  local t="$1" f="$2" log="$WORK/replay.log"
  # An input named *.reject.* must be refused with an InputError (fuzz/README.md).
  local reject=0
  case "$(basename "$f")" in *.reject.*) reject=1 ;; esac
  if ! WAITLAB_FUZZ_EXPECT_REJECT=$reject "$BUILD/fuzz/fuzz_$t" "${LIMITS[@]}" "$f" >"$log" 2>&1; then
    echo "FINDING: fuzz_$t on $f"
    grep -E "==waitlab-fuzz==|ERROR: |SUMMARY: |runtime error|ALARM|out-of-memory" "$log" | head -5 | sed 's/^/    /'
    echo "    replay: $BUILD/fuzz/fuzz_$t $f"
    failures+=("$t: $f")
    return 1
  fi
}

echo "== replay of the committed inputs =="
T1=$SECONDS  # wallclock-ok: the seconds printed, never a bound
for t in "${targets[@]}"; do
  dirs=("$ROOT/fuzz/corpus/$t" "$ROOT/fuzz/regressions/$t")
  [ "$with_findings" = 1 ] && dirs+=("$ROOT/fuzz/findings/$t")
  n=0 bad=0
  for d in "${dirs[@]}"; do
    [ -d "$d" ] || continue
    while IFS= read -r -d '' f; do
      n=$((n + 1))
      replay "$t" "$f" || bad=$((bad + 1))
    done < <(find "$d" -type f ! -name '*.md' -print0 | sort -z)
  done
  echo "fuzz_$t: $n inputs replayed, $bad findings"
done
echo "replay: $((SECONDS - T1)) s"

if [ "$replay_only" = 0 ]; then
  printf '%-10s %10s %8s %8s  %s\n' target runs exec/s seconds result >"$WORK/summary.txt"
  for t in "${targets[@]}"; do
    dir="$WORK/$t"
    if [ -n "$seconds" ]; then
      # Exploration goes on from the inputs earlier explorations found.
      budget=("-max_total_time=$seconds" "-seed=${WAITLAB_FUZZ_SEED:-0}")
    else
      rm -rf "$dir"  # CI: the same start every time
      budget=(-seed=1 "-runs=${runs_override:-${CI_RUNS[$t]}}")
    fi
    rm -rf "$dir/artifacts"
    mkdir -p "$dir/corpus" "$dir/artifacts"
    # Extra libFuzzer flags, e.g. WAITLAB_FUZZ_ARGS="-fork=1 -ignore_crashes=1" to go on after a finding.
    read -r -a extra <<<"${WAITLAB_FUZZ_ARGS:-}"
    dict=()
    [ -f "$ROOT/fuzz/dict/$t.dict" ] && dict=("-dict=$ROOT/fuzz/dict/$t.dict")
    echo "== fuzz_$t (${budget[*]}) =="
    start=$(date +%s)  # wallclock-ok: the seconds printed, never a bound
    status=0
    "$BUILD/fuzz/fuzz_$t" "${budget[@]}" "${LIMITS[@]}" "${dict[@]}" "${extra[@]}" -print_final_stats=1 \
      -artifact_prefix="$dir/artifacts/" "$dir/corpus" "$ROOT/fuzz/corpus/$t" >"$dir/log" 2>&1 || status=$?
    secs=$(( $(date +%s) - start ))  # wallclock-ok: the seconds printed, never a bound
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)
    result=ok
    if [ "$status" != 0 ]; then
      result="FINDING"
      artifact="$(find "$dir/artifacts" -type f | head -1)"
      echo "FINDING: fuzz_$t (exit $status); reproducer: ${artifact:-none written, see $dir/log}"
      grep -E "==waitlab-fuzz==|ERROR: |SUMMARY: |runtime error|ALARM|out-of-memory" "$dir/log" | head -5 | sed 's/^/    /'
      grep -E "^    #[0-9]+ .* in .*waitlab" "$dir/log" | head -3 | sed 's/^/    /' || true
      echo "    log: $dir/log"
      failures+=("$t: ${artifact:-$dir/log}")
    fi
    printf '%-10s %10s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$secs" "$result" | tee -a "$WORK/summary.txt"
  done
  echo "== summary =="
  cat "$WORK/summary.txt"
fi

echo "fuzz.sh: $((SECONDS - T0)) s in all"
if [ ${#failures[@]} -gt 0 ]; then
  echo "fuzz.sh: ${#failures[@]} finding(s):"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "fuzz.sh: no findings"
