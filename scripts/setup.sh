#!/usr/bin/env bash
# Installs every Debian 12 package waitlab needs to build, test, benchmark and plot.
# Idempotent: when everything is present it installs nothing and does not touch apt.
# `setup.sh --build` installs only what configuring and building needs (scripts/demo.sh):
# not the browser, the fuzzing compiler and the notebook runner that only tests use.
set -euo pipefail

BUILD_PACKAGES=(
  g++ cmake make pkg-config git
  libsimgrid-dev            # SimGrid 3.32 / SMPI (also ships smpirun and smpireplaymain)
  libyaml-cpp-dev           # scenarios
  googletest libgtest-dev libgmock-dev
  libbenchmark-dev
  libotf2-trace-dev otf2-tools
  libopenmpi-dev openmpi-bin
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libzstd-dev
  zlib1g-dev                # .prv.gz Paraver traces
  python3 python3-matplotlib python3-numpy
  pybind11-dev python3-pybind11 python3-dev python3-pandas  # the Python module `import waitlab` (python/, docs/python.md)
)
TEST_PACKAGES=(
  python3-nbclient python3-ipykernel python3-ipywidgets  # notebooks/: run by the tests (label notebooks), sliders
  python3-yaml              # tests/python/test_runs.py: a YAML scenario as the dict waitlab.run takes
  chromium                  # headless: renders report.html in tests/app/test_report.cpp (label chromium)
  clang-14 libclang-rt-14-dev llvm-14  # fuzz targets (scripts/fuzz.sh): clang, libFuzzer's runtime, llvm-symbolizer
  time                      # GNU time: peak memory in bench/replay_vs_smpirun.sh
)

PACKAGES=("${BUILD_PACKAGES[@]}")
case "${1:-}" in
  --build) ;;
  "") PACKAGES+=("${TEST_PACKAGES[@]}") ;;
  *) echo "usage: setup.sh [--build]" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "setup: missing packages (${missing[*]}) and not root; install them or run as root" >&2
    exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
