#!/usr/bin/env bash
# Configures and builds waitlab into build/ (or $1) with warnings as errors.
# Extra arguments are passed to cmake's configure step.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
shift || true
JOBS="${WAITLAB_JOBS:-2}"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWAITLAB_WERROR=ON "$@" >/dev/null
cmake --build "$BUILD" -j"$JOBS"
