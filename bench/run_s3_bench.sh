#!/usr/bin/env bash
# Large-object PUT and GET through the S3 API with boto3, beside the native API with curl, on one
# `tensorfleet up`.
#
#   bench/run_s3_bench.sh [BINARY] [MIB] [DIR]
#
# BINARY defaults to build/src/tensorfleet, MIB to 1024, DIR (where the server's data directory
# and the test file go) to /var/tmp. Each round: curl PUTs and GETs the file through /v1/; boto3
# (Debian's /usr/bin/python3) does put_object and get_object (one request each; over plain HTTP
# boto3 signs the SHA-256 of the body, which it computes first), then upload_file and
# download_file (its managed transfers: 8 MiB parts, 10 threads); and dd writes the file (with
# fdatasync) and reads it back, on the same disk, for the disk's own bandwidth in the same
# round. Over plain HTTP botocore (boto3 and the AWS CLI alike) signs the payload's SHA-256 by
# default; put_object is also run with Config(s3={"payload_signing_enabled": False}), which
# sends UNSIGNED-PAYLOAD instead (what botocore does by default over HTTPS with a checksum).
# curl signs with SigV4 itself (--aws-sigv4, UNSIGNED-PAYLOAD) for a PUT and a GET through the
# S3 API with a client that costs next to nothing, so that the server is what is measured; its
# GET writes to /dev/null (boto3's get_object checks the bytes). Run as root, the page cache is
# dropped before every step (COLD, below). Then 4 KiB PUTs and GETs per second
# (bench/s3_small_objects_bench.py, SMALL_OBJECTS of them, 8 threads). ROUNDS (default 3) sets
# how many rounds of large transfers run first.
set -euo pipefail
tf_bin=${1:-build/src/tensorfleet}
mib=${2:-1024}
dir=$(mktemp -d "${3:-/var/tmp}/tf-s3-bench.XXXXXX")
. "$(dirname "$0")/start_server.sh"
start_server "$tf_bin" "$dir"
"$tf_bin" bucket create bench >/dev/null
key_json=$("$tf_bin" --json s3 key create bench)
export S3_ENDPOINT=$url
S3_KEY_ID=$(echo "$key_json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
S3_SECRET=$(echo "$key_json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')
export S3_KEY_ID S3_SECRET
head -c "${mib}M" /dev/urandom >"$dir/src.bin"

# Before each step, as root: COLD=all (the default) drops the whole page cache, the server's and
# the clients' own code with it, which they then read back in small random reads during the
# step; COLD=files drops only the test's files (the source, what was downloaded, dd's file and
# every blob), so that the step reads from the disk exactly the bytes it moves.
cold() {
  sync
  [ "$(id -u)" -eq 0 ] || return 0
  if [ "${COLD:-all}" = files ]; then
    find "$dir" -type f -size +1M -print0 | xargs -0 -r -I{} dd if={} iflag=nocache count=0 status=none
  else
    echo 3 >/proc/sys/vm/drop_caches
  fi
}
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
rate() { echo "scale=0; $mib * 1048576 / 1000000 / $1" | bc; }
s3curl() {  # curl through the S3 API, signed with the access key
  curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$S3_KEY_ID:$S3_SECRET" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}
boto() {  # boto OPERATION KEY: one boto3 transfer of the test file
  /usr/bin/python3 - "$@" "$dir/src.bin" "$dir/out.bin" <<'EOF'
import os, sys
import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
op, key, src, dst = sys.argv[1:]
s3_config = {"addressing_style": "path"}
if op == "put-unsigned":
    s3_config["payload_signing_enabled"] = False
s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"], region_name="us-east-1",
                  aws_access_key_id=os.environ["S3_KEY_ID"],
                  aws_secret_access_key=os.environ["S3_SECRET"],
                  config=Config(s3=s3_config, max_pool_connections=16))
managed = TransferConfig(multipart_threshold=8 << 20, multipart_chunksize=8 << 20,
                         max_concurrency=10)
if op in ("put", "put-unsigned"):
    with open(src, "rb") as f:
        s3.put_object(Bucket="bench", Key=key, Body=f)
elif op == "get":
    with open(dst, "wb") as f:
        for piece in s3.get_object(Bucket="bench", Key=key)["Body"].iter_chunks(1 << 20):
            f.write(piece)
elif op == "upload":
    s3.upload_file(src, "bench", key, Config=managed)
elif op == "download":
    s3.download_file("bench", key, dst, Config=managed)
EOF
}

echo "$mib MiB, data in $dir ($(df --output=source "$dir" | tail -1))"
for round in $(seq "${ROUNDS:-3}"); do
  cold
  put=$(seconds curl -sf -o /dev/null -T "$dir/src.bin" -H "$auth" "$url/v1/buckets/bench/objects/n$round")
  cold
  get=$(seconds curl -sf -o "$dir/out.bin" -H "$auth" "$url/v1/buckets/bench/objects/n$round")
  cold
  s3c_put=$(seconds s3curl -o /dev/null -T "$dir/src.bin" "$url/bench/c$round")
  cold
  s3c_get=$(seconds s3curl -o /dev/null "$url/bench/c$round")
  cold
  s3_put=$(seconds boto put "p$round")
  cold
  s3_put_unsigned=$(seconds boto put-unsigned "u$round")
  cold
  s3_get=$(seconds boto get "p$round")
  cmp -s "$dir/src.bin" "$dir/out.bin" || { echo "get_object returned other bytes"; exit 1; }
  cold
  s3_up=$(seconds boto upload "m$round")
  cold
  s3_down=$(seconds boto download "m$round")
  cmp -s "$dir/src.bin" "$dir/out.bin" || { echo "download_file returned other bytes"; exit 1; }
  cold
  dd_write=$(seconds dd if="$dir/src.bin" of="$dir/dd.bin" bs=1M conv=fdatasync status=none)
  cold
  dd_read=$(seconds dd if="$dir/dd.bin" of=/dev/null bs=1M status=none)
  rm -f "$dir/dd.bin"
  printf 'round %d: native PUT %5s GET %5s | S3 curl PUT %5s GET %5s | boto3 put_object %5s (unsigned payload %5s) get_object %5s | upload_file %5s download_file %5s | dd write %5s read %5s MB/s\n' \
    "$round" "$(rate "$put")" "$(rate "$get")" "$(rate "$s3c_put")" "$(rate "$s3c_get")" "$(rate "$s3_put")" "$(rate "$s3_put_unsigned")" \
    "$(rate "$s3_get")" "$(rate "$s3_up")" "$(rate "$s3_down")" "$(rate "$dd_write")" "$(rate "$dd_read")"
  for key in "n$round" "c$round" "p$round" "u$round" "m$round"; do "$tf_bin" rm "tf://bench/$key" >/dev/null; done
done
# Small objects: 4 KiB PUTs, then GETs, per second (8 threads).
/usr/bin/python3 "$(dirname "$0")/s3_small_objects_bench.py" "${SMALL_OBJECTS:-4000}" 8
