# Sourced by the benchmark scripts: the flat cluster they all run on (1 Gf cores, 10 GB/s and
# 1 us links, a loopback link), as a SimGrid XML file and a hostfile listing its N nodes.
# usage: write_cluster N XML_FILE HOSTFILE
write_cluster() {
  local n="$1"
  cat > "$2" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="bench" prefix="node-" suffix="" radical="0-$((n - 1))" speed="1Gf"
           bw="10GBps" lat="1us" loopback_bw="50GBps" loopback_lat="0.1us"/>
</platform>
XML
  seq 0 $((n - 1)) | sed 's/^/node-/' > "$3"
}
