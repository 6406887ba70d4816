#!/usr/bin/env bash
# Engine benchmark: waitlab vs plain `smpirun -replay` on the same MPI calls.
#
# For each workload (heat1d blocking, halo2d non-blocking, allreduce_loop) and each
# rank count, runs `waitlab run` on a flat cluster given as a SimGrid XML file, then
# exports the same workload as a time-independent trace (bench/workload_to_ti.cpp) and
# replays it with `smpirun -replay` under SimGrid's default settings on the same XML.
# Prints host wall time and simulated MPI operations per wall second for both.
#
# usage: bench/run.sh [BUILD_DIR] [RANKS...]   (default: build, 1024 4096 8192)
# env:   ITER=100  TIMEOUT=900 (s per smpirun run; a timed-out run is reported as ">TIMEOUT")
#        WORKLOADS="heat1d halo2d allreduce_loop"
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
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

printf "%-15s %6s %5s | %10s %12s | %10s %12s | %7s | %s\n" workload ranks iter "waitlab s" "ops/s" \
  "smpirun s" "ops/s" speedup "simulated time waitlab / smpirun"
for n in "${RANKS[@]}"; do
  xml="$WORK/cluster-$n.xml"
  cat > "$xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="bench" prefix="node-" suffix="" radical="0-$((n - 1))" speed="1Gf"
           bw="10GBps" lat="1us" loopback_bw="50GBps" loopback_lat="0.1us"/>
</platform>
XML
  seq 0 $((n - 1)) | sed 's/^/node-/' > "$WORK/hosts-$n.txt"
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
