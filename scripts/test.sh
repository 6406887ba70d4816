#!/usr/bin/env bash
# Quick start 2: install what is missing, build with warnings as errors, run the whole
# test suite; then build the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer
# and run them again (all but the 1024-rank validation suite, label validation_suite, the
# idle-wave study's simulations, label idlewave, and the fault-injection harness, label faults,
# which the first pass runs). Set WAITLAB_SKIP_SANITIZE=1 to skip the second pass locally.
# Third: the fuzz pass (scripts/fuzz.sh): the readers' fuzz targets built with clang, every committed
# input replayed and a fixed budget of runs per target. Set WAITLAB_SKIP_FUZZ=1 to skip it locally.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${WAITLAB_JOBS:-2}"
"$ROOT/scripts/setup.sh"

echo "== build (warnings as errors) =="
"$ROOT/scripts/build.sh" "$ROOT/build"
# Timeouts are hang guards only, far above what a busy machine makes of any test (issue 28:
# no test bounds how long it takes; tests/CMakeLists.txt's lint.no_wallclock_in_tests checks).
echo "== tests =="
ctest --test-dir "$ROOT/build" -j"$JOBS" --output-on-failure --timeout 1800

if [ "${WAITLAB_SKIP_SANITIZE:-0}" != "1" ]; then
  echo "== build (ASan + UBSan) =="
  "$ROOT/scripts/build.sh" "$ROOT/build-asan" -DCMAKE_BUILD_TYPE=Debug -DWAITLAB_SANITIZE=ON \
    -DWAITLAB_BUILD_BENCH=OFF
  echo "== tests under ASan + UBSan =="
  ASAN_OPTIONS="detect_leaks=0:detect_stack_use_after_return=0:abort_on_error=1" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --test-dir "$ROOT/build-asan" -j"$JOBS" --output-on-failure --timeout 2700 -LE 'validation_suite|idlewave|faults'
fi

if [ "${WAITLAB_SKIP_FUZZ:-0}" != "1" ]; then
  echo "== fuzz (libFuzzer + ASan + UBSan: committed inputs, then a fixed budget per target) =="
  "$ROOT/scripts/fuzz.sh"
fi
