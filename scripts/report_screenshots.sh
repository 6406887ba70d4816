#!/usr/bin/env bash
# Screenshots of report.html's idle-wave section at 256, 1024 and 4096 ranks, for a reviewer
# to look at by eye (issue 16): one delay in the 1D heat code of
# scenarios/teaching/single_delay.yaml (20 ms at 256 and 1024 ranks; 5 ms at 4096 ranks,
# a wave 5 ranks wide that must stay visible on the heat map), the slow socket of
# scenarios/teaching/slow_socket.yaml (a slow group of every other socket, no wave: no
# amplitude picture), eager_unidirectional.yaml (another σ), two_delays.yaml (two waves meet)
# and halo3d_delay.yaml (a 3D grid: distances in hops, fronts per axis). Few iterations, so that the
# whole takes about a minute (the 4096-rank run most of it). Not part of the test run.
#
# Usage: scripts/report_screenshots.sh [OUT_DIR] [WAITLAB]   (default: out/screenshots, build/app/waitlab)
# Writes OUT_DIR/<run>/ (the run's outputs, its matplotlib PNGs among them) and
# OUT_DIR/<run>.png, a 1400 × 4400 pixel screenshot of the report (the idle-wave section in
# its lower half).
# Needs Debian's chromium (scripts/setup.sh installs it; or set WAITLAB_CHROMIUM).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/out/screenshots}" && cd "${1:-$ROOT/out/screenshots}" && pwd)"
WAITLAB="${2:-$ROOT/build/app/waitlab}"
CHROMIUM="${WAITLAB_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -x "$WAITLAB" ] || { echo "no waitlab binary at $WAITLAB (scripts/build.sh)" >&2; exit 1; }
[ -n "$CHROMIUM" ] || { echo "no chromium (apt-get install --no-install-recommends chromium)" >&2; exit 1; }
T="$ROOT/scenarios/teaching"

run() {  # name scenario --set ... : one run, then its screenshot
  local name=$1 scenario=$2
  shift 2
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  echo "== $name" >&2
  "$WAITLAB" run "$scenario" --no-progress --out "$OUT/$name" "${sets[@]}" >"$OUT/$name.log"
  local profile
  profile="$(mktemp -d)"
  # The whole page: the window is taller than the report of these runs.
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
    --virtual-time-budget=5000 --window-size=1400,4400 --screenshot="$OUT/$name.png" \
    "file://$OUT/$name/report.html" 2>/dev/null
  rm -rf "$profile"
  echo "   $OUT/$name.png ($(ls "$OUT/$name"/idlewave_*.png | xargs -n1 basename | tr '\n' ' '))" >&2
}

run single_delay_256 "$T/single_delay.yaml" workload.ranks=256 platform.nodes=256 'perturbations[0].rank=128' \
  workload.iterations=200
run single_delay_1024 "$T/single_delay.yaml" workload.ranks=1024 platform.nodes=1024 'perturbations[0].rank=512' \
  workload.iterations=150
run single_delay_4096 "$T/single_delay.yaml" workload.ranks=4096 platform.nodes=4096 'perturbations[0].rank=2048' \
  'perturbations[0].duration=5ms' workload.iterations=120
run slow_socket_1024 "$T/slow_socket.yaml" workload.iterations=60
run eager_unidirectional "$T/eager_unidirectional.yaml" workload.iterations=150
run two_delays "$T/two_delays.yaml"
run halo3d_delay "$T/halo3d_delay.yaml"
echo "look at $OUT/*.png and $OUT/*/idlewave_*.png" >&2
