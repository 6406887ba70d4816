#!/usr/bin/env bash
# Quick start 1: install what is missing, build, and run the demo scenario
# (a 1D heat code on 1024 simulated ranks with one injected delay).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Only what the demo needs: the build's packages and the `waitlab` executable. The tests,
# benchmarks and the Python module are built by scripts/test.sh in the same build/ directory.
"$ROOT/scripts/setup.sh" --build
WAITLAB_TARGETS=waitlab "$ROOT/scripts/build.sh" "$ROOT/build"
OUT="$ROOT/out/demo"
"$ROOT/build/app/waitlab" run "$ROOT/scenarios/demo.yaml" --out "$OUT"
echo
echo "demo results are in $OUT: report.html (open it in a browser), summary.json, trace.wlt, the analyses' CSV tables"
echo "and the idle wave's heat map idlewave_heatmap.png (docs/analyses.md explains them; docs/teaching.md has more waves)"
