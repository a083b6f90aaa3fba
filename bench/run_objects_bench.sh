#!/usr/bin/env bash
# Large-object PUT and GET through `tensorfleet up`, beside dd on the same disk.
#
#   bench/run_objects_bench.sh [BINARY] [MIB] [DIR]
#
# BINARY defaults to build/src/tensorfleet, MIB to 1024, DIR (where the server's data directory
# and the test file go: put it on the disk to measure) to /var/tmp. Each round: dd writes the
# file with fdatasync, then curl PUTs it; dd reads the stored blob file, then curl GETs the
# object. Run as root, the page cache is dropped before every step, so reads come from the disk.
set -euo pipefail
tf_bin=${1:-build/src/tensorfleet}
mib=${2:-1024}
dir=$(mktemp -d "${3:-/var/tmp}/tf-objects-bench.XXXXXX")
. "$(dirname "$0")/start_server.sh"
start_server "$tf_bin" "$dir"
"$tf_bin" bucket create bench >/dev/null
head -c "${mib}M" /dev/urandom >"$dir/src.bin"

cold() { sync; if [ "$(id -u)" -eq 0 ]; then echo 3 >/proc/sys/vm/drop_caches; fi; }
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
rate() { echo "scale=0; $mib * 1048576 / 1000000 / $1" | bc; }

echo "$mib MiB, data in $dir ($(df --output=source "$dir" | tail -1))"
for round in 1 2 3; do
  cold
  dd_write=$(seconds dd if="$dir/src.bin" of="$dir/dd.bin" bs=1M conv=fdatasync status=none)
  cold
  cat "$dir/src.bin" >/dev/null  # the source in memory, as for dd
  put=$(seconds curl -sf -o /dev/null -T "$dir/src.bin" -H "$auth" "$url/v1/buckets/bench/objects/o$round")
  blob=$(find "$dir/data/objects" -path "$dir/data/objects/??/??/*" -type f -newer "$dir/dd.bin")
  cold
  dd_read=$(seconds dd if="$blob" of=/dev/null bs=1M status=none)
  cold
  get=$(seconds curl -sf -o /dev/null -H "$auth" "$url/v1/buckets/bench/objects/o$round")
  printf 'round %d: PUT %5s MB/s (dd write %5s MB/s)   GET %5s MB/s (dd read %5s MB/s)\n' \
    "$round" "$(rate "$put")" "$(rate "$dd_write")" "$(rate "$get")" "$(rate "$dd_read")"
  rm -f "$dir/dd.bin"
done
