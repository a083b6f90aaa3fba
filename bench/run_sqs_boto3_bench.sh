#!/usr/bin/env bash
# Python clients against one tensorfleet server on its embedded SQLite store, taking turns on
# the same queue: boto3 through the SQS API, then Python's own HTTP client through the native API
# (the cycle of bench/queue_bench.cc: send 10, receive, delete). Prints one JSON line per run.
#
# Usage: bench/run_sqs_boto3_bench.sh [--rounds 2] [--threads 8] [--seconds 8]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=2
threads=8
seconds=8
while [ "$#" -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    *) echo "usage: bench/run_sqs_boto3_bench.sh [--rounds 2] [--threads 8] [--seconds 8]" >&2; exit 2 ;;
  esac
done
scripts/build.sh tensorfleet >/dev/null
source bench/start_server.sh
start_server "$PWD/build/src/tensorfleet" "$(mktemp -d)"
build/src/tensorfleet queue create bench >/dev/null
key=$(build/src/tensorfleet --json s3 key create bench)
export SQS_KEY_ID SQS_SECRET TOKEN="$TENSORFLEET_TOKEN"
SQS_KEY_ID=$(echo "$key" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
SQS_SECRET=$(echo "$key" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')
for _ in $(seq "$rounds"); do
  for path in sqs native; do
    /usr/bin/python3 bench/sqs_boto3_bench.py "$path" "$url" --threads "$threads" --seconds "$seconds"
    build/src/tensorfleet queue purge bench >/dev/null
  done
done
