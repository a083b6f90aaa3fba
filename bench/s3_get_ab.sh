#!/usr/bin/env bash
# Cold GETs of one large object through the S3 API with curl, two server binaries side by side
# (A/B, e.g. main's build against a change), with dd's read of a file of the same size in the
# same round.
#
#   bench/s3_get_ab.sh BINARY_A BINARY_B [MIB] [ROUNDS]
#
# MIB defaults to 512, ROUNDS to 12. Each binary runs its own `tensorfleet up` (its own data
# directory under /var/tmp) holding one object of MIB MiB; each round GETs from both, the
# order alternating round by round (the first GET after dd tends to be the slower), then runs
# dd. Run as root: before every step the test's files (and only those) are dropped from the
# page cache, as COLD=files does in run_s3_bench.sh. Each step prints MB/s, the read requests
# the disk took (/proc/diskstats, device DISK, default vda), the CPU time of the whole machine
# against the step's wall time (/proc/stat) and the server's own CPU time.
#
# PAUSE=SECONDS (default 0) waits that long between the drop and each step. On a virtual
# machine that reports freed memory to its host (virtio-balloon free page reporting, after
# about 2 s), pages dropped that long ago have gone back to the host, and the next read into
# the page cache pays a fault for each of them (docs/benchmarks/objects.md, "Why slow GETs
# burn CPU"); with no pause the step mostly gets back the pages the drop just freed.
# DD_DIRECT=1 adds a step reading the dd file with O_DIRECT (iflag=direct, 4 MiB reads), the
# disk without the page cache.
# CEILING=1 adds a third server to every round, bench/sendfile_server.py, which answers a plain
# curl GET of a file of the same size with nothing but sendfile (no signature, no store, no
# checksums): the most any server can do with this client on these cores, labelled "bare". The
# three GETs of a round then take turns at going first.
set -euo pipefail
bin_a=$1
bin_b=$2
mib=${3:-512}
rounds=${4:-12}
disk=${DISK:-vda}
dir=$(mktemp -d /var/tmp/tf-get-ab.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p"; wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
head -c "${mib}M" /dev/urandom >"$dir/src.bin"
cp "$dir/src.bin" "$dir/dd.bin"
declare -A URL KEY_ID SECRET SERVER
s3curl() {  # s3curl SIDE ARGS...: curl through SIDE's S3 API, signed with its access key
  local side=$1
  shift
  curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "${KEY_ID[$side]}:${SECRET[$side]}" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
for side in A B; do
  bin=$bin_a
  [ "$side" = B ] && bin=$bin_b
  export TENSORFLEET_HOME="$dir/$side"
  mkdir -p "$TENSORFLEET_HOME"
  "$bin" up --port 0 2>"$dir/$side.log" &
  pids+=($!)
  SERVER[$side]=$!
  for _ in $(seq 100); do [ -s "$TENSORFLEET_HOME/url" ] && break; sleep 0.1; done
  URL[$side]=$(cat "$TENSORFLEET_HOME/url")
  "$bin" bucket create bench >/dev/null
  key_json=$("$bin" --json s3 key create bench)
  KEY_ID[$side]=$(echo "$key_json" | json_field id)
  SECRET[$side]=$(echo "$key_json" | json_field secret)
  s3curl "$side" -o /dev/null -T "$dir/src.bin" "${URL[$side]}/bench/o"
done
sides=(A B)
if [ "${CEILING:-0}" = 1 ]; then
  cp "$dir/src.bin" "$dir/bare.bin"
  python3 "$(dirname "$0")/sendfile_server.py" "$dir/bare.bin" "$dir/bare.port" &
  pids+=($!)
  SERVER[bare]=$!
  for _ in $(seq 100); do [ -s "$dir/bare.port" ] && break; sleep 0.1; done
  URL[bare]="http://127.0.0.1:$(cat "$dir/bare.port")"
  sides+=(bare)
fi

cold() {
  sync
  find "$dir" -type f -size +1M -print0 |
    xargs -0 -r -I{} dd if={} iflag=nocache count=0 status=none
}
disk_reads() { awk -v d="$disk" '$3 == d {print $4}' /proc/diskstats; }
busy_jiffies() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
server_jiffies() { if [ -n "$1" ]; then awk '{print $14 + $15}' "/proc/$1/stat"; else echo 0; fi; }
step() {  # step LABEL COMMAND...: one cold step, one line of figures
  local label=$1 server=${SERVER[$1]:-}
  shift
  cold
  sleep "${PAUSE:-0}"
  local r0 b0 c0 start end r1 b1 c1
  r0=$(disk_reads); b0=$(busy_jiffies); c0=$(server_jiffies "$server")
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  r1=$(disk_reads); b1=$(busy_jiffies); c1=$(server_jiffies "$server")
  printf '%s %5.0f MB/s %4d reqs cpu %.2f/%.2fs srv %.2fs | ' "$label" \
    "$(echo "$mib * 1048576 / 1000000 / ($end - $start)" | bc -l)" $((r1 - r0)) \
    "$(echo "($b1 - $b0) / 100" | bc -l)" "$(echo "$end - $start" | bc -l)" \
    "$(echo "($c1 - $c0) / 100" | bc -l)"
}
get() {
  if [ "$1" = bare ]; then curl -sf -o /dev/null "${URL[bare]}/o"; else s3curl "$1" -o /dev/null "${URL[$1]}/bench/o"; fi
}
for r in $(seq "$rounds"); do
  n=${#sides[@]}
  for i in $(seq 0 $((n - 1))); do
    side=${sides[$(((r - 1 + i) % n))]}
    step "$side" get "$side"
  done
  step dd dd if="$dir/dd.bin" of=/dev/null bs=1M status=none
  if [ "${DD_DIRECT:-0}" = 1 ]; then
    step ddD dd if="$dir/dd.bin" of=/dev/null bs=4M iflag=direct status=none
  fi
  echo
done
