#!/usr/bin/env bash
# boto3's managed multipart upload (upload_file: 8 MiB parts, 10 threads, then
# CompleteMultipartUpload) to two server binaries side by side (A/B, e.g. main's build against a
# change), with dd's write of a file of the same size (fdatasync) in the same round.
#
#   bench/s3_upload_ab.sh BINARY_A BINARY_B [MIB] [ROUNDS]
#
# MIB defaults to 512, ROUNDS to 6. Each binary runs its own `tensorfleet up` (its own data
# directory under /var/tmp); each round uploads the same file to both, the order alternating
# round by round, then runs dd. Before every step the test's files (and only those) are dropped
# from the page cache (as COLD=files does in run_s3_bench.sh). Each step prints MB/s over the
# whole upload (parts and Complete) and, for the uploads, how long Complete took (the time from
# the last part's answer to Complete's, measured in the client). Each object is deleted after
# its round. With CLIENT=curl each upload is instead one PutObject by curl (SigV4,
# UNSIGNED-PAYLOAD), the single-blob path, for checking that it did not change.
# CLIENT=curl CEILING=1 adds two servers to every round, both bench/bare_put_server.py: "bare"
# takes the same curl PUT by writing the body to a file and fdatasync (no signature, no store,
# no checksums), "md5" does that and takes the body's MD5 on a thread of its own, as S3 must for
# a PutObject's ETag: the most any server can do with this client on these cores, without and
# with the MD5. The servers of a round then take turns at going first.
set -euo pipefail
bin_a=$1
bin_b=$2
mib=${3:-512}
rounds=${4:-6}
dir=$(mktemp -d /var/tmp/tf-upload-ab.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p"; wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
head -c "${mib}M" /dev/urandom >"$dir/src.bin"
declare -A URL KEY_ID SECRET BIN
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
for side in A B; do
  BIN[$side]=$bin_a
  [ "$side" = B ] && BIN[$side]=$bin_b
  export TENSORFLEET_HOME="$dir/$side"
  mkdir -p "$TENSORFLEET_HOME"
  "${BIN[$side]}" up --port 0 2>"$dir/$side.log" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$TENSORFLEET_HOME/url" ] && break; sleep 0.1; done
  URL[$side]=$(cat "$TENSORFLEET_HOME/url")
  "${BIN[$side]}" bucket create bench >/dev/null
  key_json=$("${BIN[$side]}" --json s3 key create bench)
  KEY_ID[$side]=$(echo "$key_json" | json_field id)
  SECRET[$side]=$(echo "$key_json" | json_field secret)
done
sides=(A B)
if [ "${CEILING:-0}" = 1 ]; then
  [ "${CLIENT:-boto3}" = curl ] || { echo "CEILING=1 needs CLIENT=curl" >&2; exit 2; }
  for side in bare md5; do
    mkdir -p "$dir/$side"
    flag=
    [ "$side" = md5 ] && flag=--md5
    python3 "$(dirname "$0")/bare_put_server.py" "$dir/$side" "$dir/$side.port" $flag &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$dir/$side.port" ] && break; sleep 0.1; done
    URL[$side]="http://127.0.0.1:$(cat "$dir/$side.port")"
    sides+=("$side")
  done
fi

cold() {
  sync
  find "$dir" -type f -size +1M -print0 |
    xargs -0 -r -I{} dd if={} iflag=nocache count=0 status=none
}
upload() {  # upload SIDE KEY: prints "MB/s complete_seconds"
  if [ "${CLIENT:-boto3}" = curl ]; then
    local start end
    start=$(date +%s.%N)
    if [ -z "${BIN[$1]:-}" ]; then  # a bare server: no signature
      curl -sf -o /dev/null -T "$dir/src.bin" "${URL[$1]}/$2"
    else
      curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "${KEY_ID[$1]}:${SECRET[$1]}" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -o /dev/null -T "$dir/src.bin" \
        "${URL[$1]}/bench/$2"
    fi
    end=$(date +%s.%N)
    echo "$(echo "$mib * 1048576 / 1000000 / ($end - $start)" | bc) -"
    return
  fi
  S3_ENDPOINT=${URL[$1]} S3_KEY_ID=${KEY_ID[$1]} S3_SECRET=${SECRET[$1]} \
    /usr/bin/python3 - "$2" "$dir/src.bin" <<'PY'
import os, sys, time
import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
key, src = sys.argv[1:]
s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"], region_name="us-east-1",
                  aws_access_key_id=os.environ["S3_KEY_ID"],
                  aws_secret_access_key=os.environ["S3_SECRET"],
                  config=Config(s3={"addressing_style": "path"}, max_pool_connections=16,
                                read_timeout=600))
marks = {}
def before_complete(**kwargs):
    marks["complete"] = time.monotonic()
s3.meta.events.register("before-call.s3.CompleteMultipartUpload", before_complete)
managed = TransferConfig(multipart_threshold=8 << 20, multipart_chunksize=8 << 20,
                         max_concurrency=10)
start = time.monotonic()
s3.upload_file(src, "bench", key, Config=managed)
end = time.monotonic()
print("%.0f %.2f" % (os.path.getsize(src) / 1e6 / (end - start), end - marks.get("complete", end)))
PY
}
step() {  # step SIDE ROUND
  cold
  read -r rate complete < <(upload "$1" "o$2")
  printf '%s %5s MB/s (Complete %ss) | ' "$1" "$rate" "$complete"
  if [ -n "${BIN[$1]:-}" ]; then TENSORFLEET_HOME="$dir/$1" "${BIN[$1]}" rm "tf://bench/o$2" >/dev/null; fi
}
for r in $(seq "$rounds"); do
  n=${#sides[@]}
  for i in $(seq 0 $((n - 1))); do
    step "${sides[$(((r - 1 + i) % n))]}" "$r"
  done
  cold
  start=$(date +%s.%N)
  dd if="$dir/src.bin" of="$dir/dd.bin" bs=1M conv=fdatasync status=none
  end=$(date +%s.%N)
  rm -f "$dir/dd.bin"
  printf 'dd write %5.0f MB/s\n' "$(echo "$mib * 1048576 / 1000000 / ($end - $start)" | bc -l)"
done
