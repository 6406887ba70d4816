#!/bin/sh
# `waitlab analyze` against `mpirun -np P waitlab-mpi analyze` on one trace (issue 32, bench/README.md §10):
# the whole command's wall time and every process's peak resident set (/usr/bin/time around each
# process), the outputs compared byte for byte with the serial ones (host.json apart), and the run
# under an address-space limit (prlimit --as) that the serial analysis cannot meet.
#
# usage: bench/mpi_analyze_scaling.sh BUILD_DIR TRACE WORK_DIR [P ...]   (default P: 1 2 4 8)
# env:   LIMIT=4G (the prlimit --as case; LIMIT= to skip it), ANALYZE_ARGS (extra options)
set -eu
build=$1 trace=$2 work=$3
shift 3
[ $# -gt 0 ] || set -- 1 2 4 8
limit=${LIMIT-4G}
args=${ANALYZE_ARGS-}
bin=$build/app
mkdir -p "$work"
mpirun="mpirun --allow-run-as-root --oversubscribe"

peak() {  # the largest "Maximum resident set size" in a /usr/bin/time -v log, MB; and how many
  awk '/Maximum resident set size/ { kb = $NF; if (kb > m) m = kb; n++ } END { printf "%.0f MB (max of %d)", m / 1024, n }' "$1"
}

echo "trace: $trace ($(du -h "$trace" | cut -f1)); $(nproc) cores; load $(cut -d' ' -f1 /proc/loadavg)"
rm -rf "$work/serial"
start=$(date +%s.%N)
/usr/bin/time -v "$bin/waitlab" analyze "$trace" --out "$work/serial" $args >"$work/serial.out" 2>"$work/serial.time"
serial=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
echo "serial waitlab analyze: ${serial} s, peak $(peak "$work/serial.time")"
for p in "$@"; do
  rm -rf "$work/np$p"
  start=$(date +%s.%N)
  $mpirun -np "$p" /usr/bin/time -v "$bin/waitlab-mpi" analyze "$trace" --out "$work/np$p" $args \
    >"$work/np$p.out" 2>"$work/np$p.time"
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  same=$(diff -rq -x host.json "$work/serial" "$work/np$p" >/dev/null && echo "identical files" || echo "FILES DIFFER")
  echo "-np $p: ${wall} s (speed-up $(awk -v s="$serial" -v w="$wall" 'BEGIN { printf "%.2f", s / w }')), peak per process $(peak "$work/np$p.time"); $same"
done
[ -n "$limit" ] || exit 0
rm -rf "$work/limited-serial" "$work/limited"
echo "under prlimit --as=$limit (each process's address space):"
if prlimit --as="$(numfmt --from=iec "$limit")" "$bin/waitlab" analyze "$trace" --out "$work/limited-serial" \
  $args >/dev/null 2>"$work/limited-serial.err"; then
  echo "  serial: ran (the limit is not below its need)"
else
  echo "  serial: exit $? — $(grep 'waitlab: error' "$work/limited-serial.err" | head -1)"
fi
p=${LIMIT_P:-8}
if $mpirun -np "$p" prlimit --as="$(numfmt --from=iec "$limit")" /usr/bin/time -v "$bin/waitlab-mpi" analyze "$trace" \
  --out "$work/limited" $args >/dev/null 2>"$work/limited.time"; then
  same=$(diff -rq -x host.json "$work/serial" "$work/limited" >/dev/null && echo "identical files" || echo "FILES DIFFER")
  echo "  -np $p: ran, peak per process $(peak "$work/limited.time"); $same"
else
  echo "  -np $p: failed — $(grep 'waitlab: error' "$work/limited.time" | head -1)"
fi
