#!/usr/bin/env bash
# Configures and builds waitlab into build/ (or $1) with warnings as errors.
# Extra arguments are passed to cmake's configure step. WAITLAB_TARGETS="a b" builds only
# those targets (scripts/demo.sh builds only `waitlab`); by default everything is built.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
shift || true
JOBS="${WAITLAB_JOBS:-2}"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWAITLAB_WERROR=ON "$@" >/dev/null
TARGETS=()
for t in ${WAITLAB_TARGETS:-}; do TARGETS+=(--target "$t"); done
cmake --build "$BUILD" -j"$JOBS" "${TARGETS[@]}"
