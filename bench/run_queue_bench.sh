#!/usr/bin/env bash
# The queue benchmark with its peers, one case after the other on this machine, and one table at
# the end. The cases:
#   tensorfleet on SQLite: direct (QueueStore API), then through the HTTP API, then the SQS API
#     (its JSON protocol, each request signed as the AWS SDKs sign them),
#   tensorfleet on PostgreSQL (a throw-away server, scripts/with-postgres.sh): direct, then HTTP,
#   a plain FOR UPDATE SKIP LOCKED queue table on PostgreSQL,
#   Redis Streams (a private redis-server, appendonly yes) with appendfsync always, then everysec.
# Each PostgreSQL and Redis case gets a fresh server. Before each case the script optionally
# waits (--cooldown) and then measures the disk: write 4 KiB + fdatasync, which every durable
# commit costs at least, and which on shared or virtual machines moves with what else runs.
#
# Usage: bench/run_queue_bench.sh [--seconds 8] [--latency-seconds 5] [--threads 8]
#                                 [--body-bytes 256] [--cooldown 0] [--tries 1] [--dir DIR]
#                                 [--out FILE]
#   --cooldown: seconds to stay idle before each case (lets a throttled disk recover).
#   --tries: run a case up to this many times until the disk's median fdatasync stayed under
#            1 ms both before and after it (the same rule for every system, so that all are
#            compared on the same disk); the last try counts if none did.
#   --dir: where the SQLite file, the PostgreSQL cluster, the Redis files and the disk probe go
#          (default: $TMPDIR or /tmp). Choose the disk to measure.
#   --out: the JSON lines written (default build-bench/queue-bench.jsonl); the summary is
#          printed from it by bench/queue_bench_report.py.
# Builds into build-bench/ (Release). Needs scripts/install-deps.sh's packages (hiredis for Redis).
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$self")/.."

# Internal: `--case LABEL COMMAND...` waits, probes the disk, runs COMMAND with @PGURL@ replaced
# by the throw-away server's URL (so cases run inside scripts/with-postgres.sh too), probes again.
# Everything goes to the JSON lines file $QUEUE_BENCH_CASE_OUT.
if [ "${1:-}" = "--case" ]; then
  label="$2"
  shift 2
  probe() {
    "$QUEUE_BENCH_BIN/queue_bench" --fsync-probe "$QUEUE_BENCH_WORK" --probe-label "$1" \
      --latency-seconds 0.5 --warmup 0.1 --json "$QUEUE_BENCH_CASE_OUT" | tail -n +2
  }
  sleep "$QUEUE_BENCH_COOLDOWN"
  probe "before $label"
  args=()
  for a in "$@"; do args+=("${a//@PGURL@/${TENSORFLEET_TEST_POSTGRES_URL:-}}"); done
  "${args[@]}" --json "$QUEUE_BENCH_CASE_OUT"
  probe "after $label"
  exit 0
fi

seconds=8
latency_seconds=5
threads=8
body_bytes=256
cooldown=0
tries=1
work_parent="${TMPDIR:-/tmp}"
out="build-bench/queue-bench.jsonl"
while [ "$#" -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --latency-seconds) latency_seconds="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --body-bytes) body_bytes="$2"; shift 2 ;;
    --cooldown) cooldown="$2"; shift 2 ;;
    --tries) tries="$2"; shift 2 ;;
    --dir) work_parent="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

# --- Build ---------------------------------------------------------------------------------------
jobs=${TENSORFLEET_BUILD_JOBS:-$(nproc)}
if [ ! -f build-bench/build.ninja ]; then
  cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
targets=(queue_bench skip_locked_bench)
have_redis=0
if ninja -C build-bench -t targets all 2>/dev/null | grep -q '^redis_streams_bench:' \
    && command -v redis-server >/dev/null; then
  targets+=(redis_streams_bench)
  have_redis=1
else
  echo "run_queue_bench: no hiredis or redis-server (scripts/install-deps.sh): Redis is skipped" >&2
fi
ninja -C build-bench -j "$jobs" "${targets[@]}"
bin="$PWD/build-bench/bench"

# --- Where things go -----------------------------------------------------------------------------
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
: >"$out"
work="$(mktemp -d "$work_parent/tensorfleet-queue-bench.XXXXXX")"
chmod 755 "$work"  # PostgreSQL's cluster goes inside, and may run as another user
redis_pid=""
cleanup() {
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
export QUEUE_BENCH_BIN="$bin" QUEUE_BENCH_WORK="$work" QUEUE_BENCH_COOLDOWN="$cooldown"
export QUEUE_BENCH_CASE_OUT="$work/case.jsonl"
common=(--threads "$threads" --seconds "$seconds" --latency-seconds "$latency_seconds"
        --warmup 1 --body-bytes "$body_bytes")

# Whether every disk probe in the case's results found fdatasync under 1 ms.
disk_was_fast() {
  python3 -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if all(r["p50_us"] < 1000 for r in rows if r["system"].startswith("disk")) else 1)' "$1"
}
# Runs one case (`--case` above), inside scripts/with-postgres.sh when $1 is "postgres", up to
# --tries times, and keeps the results of the try that counts.
run_case() {
  local where="$1"
  shift
  for try in $(seq "$tries"); do
    : >"$QUEUE_BENCH_CASE_OUT"
    rm -f "$work"/bench.db*
    if [ "$where" = postgres ]; then
      TMPDIR="$work" scripts/with-postgres.sh "$self" --case "$@"
    else
      "$self" --case "$@"
    fi
    if [ "$try" -eq "$tries" ] || disk_was_fast "$QUEUE_BENCH_CASE_OUT"; then break; fi
    echo "   (the disk was throttled around this case: running it again)"
  done
  cat "$QUEUE_BENCH_CASE_OUT" >>"$out"
}

cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs ($cpu)"
echo "== tensorfleet $(git describe --always --dirty 2>/dev/null || echo '(not a git checkout)')"
echo "== work directory $work on $(df --output=source "$work" | tail -1);" \
  "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== $threads threads, batches of 10, ${body_bytes}-byte bodies; ${seconds}s per throughput" \
  "case, ${latency_seconds}s per latency case; ${cooldown}s idle before each case, up to $tries tries"

# Throughput and latency run as separate cases, each on a fresh store or server.
tput=(--latency-seconds 0)
lat=(--seconds 0)
echo; echo "== tensorfleet on SQLite ($work/bench.db)"
for path in direct http sqs; do
  run_case local "sqlite $path throughput" "$bin/queue_bench" --store "$work/bench.db" \
    --only "$path" "${common[@]}" "${tput[@]}"
  run_case local "sqlite $path latency" "$bin/queue_bench" --store "$work/bench.db" \
    --only "$path" "${common[@]}" "${lat[@]}"
done

echo; echo "== tensorfleet on PostgreSQL, and a plain SKIP LOCKED table (server defaults)"
TMPDIR="$work" scripts/with-postgres.sh bash -c \
  '"$TENSORFLEET_TEST_PGBIN/psql" -X -At "$TENSORFLEET_TEST_POSTGRES_URL" -c "$0"' \
  "SELECT 'postgresql ' || string_agg(name || '=' || setting, ', ' ORDER BY name) FROM pg_settings
   WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'wal_sync_method',
                  'commit_delay', 'shared_buffers')"
for path in direct http sqs; do
  run_case postgres "postgresql $path throughput" "$bin/queue_bench" --store @PGURL@ \
    --only "$path" "${common[@]}" "${tput[@]}"
  run_case postgres "postgresql $path latency" "$bin/queue_bench" --store @PGURL@ \
    --only "$path" "${common[@]}" "${lat[@]}"
done
run_case postgres "skip locked throughput" "$bin/skip_locked_bench" --url @PGURL@ "${common[@]}" \
  "${tput[@]}"
run_case postgres "skip locked latency" "$bin/skip_locked_bench" --url @PGURL@ "${common[@]}" \
  "${lat[@]}"

# A private redis-server on a free loopback port, with the append-only file on; one case.
run_redis() {
  local fsync="$1" kind="$2"
  shift 2
  local dir="$work/redis-$fsync"
  mkdir -p "$dir"
  local port
  port="$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')"
  redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save '' --appendonly yes \
    --appendfsync "$fsync" --protected-mode no --logfile "$dir/redis.log" &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  run_case local "redis $fsync $kind" "$bin/redis_streams_bench" --port "$port" \
    --label "appendfsync $fsync" "${common[@]}" "$@"
  kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true; redis_pid=""
  rm -rf "$dir"
}
if [ "$have_redis" -eq 1 ]; then
  echo; echo "== Redis Streams ($(redis-server --version | cut -d' ' -f3 | cut -d= -f2))"
  for fsync in always everysec; do
    run_redis "$fsync" throughput "${tput[@]}"
    run_redis "$fsync" latency "${lat[@]}"
  done
fi

echo; echo "== Summary ($out; load average now $(cut -d' ' -f1-3 /proc/loadavg))"
python3 bench/queue_bench_report.py "$out"
