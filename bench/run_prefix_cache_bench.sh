#!/usr/bin/env bash
# The engine's prefix cache on and off (docs/benchmarks/engine.md, "Prefix caching").
#
#   bench/run_prefix_cache_bench.sh [SIZE...]      (default: 125m 1b)
#
# For each random-weight bench model (bench/engine/make_random_llama.py), `tensorfleet engine
# serve` is started twice, with the prefix cache (the default) and with --no-prefix-cache, and
# asked by bench/engine/prefix_cache_client.py:
#   ttft    a 1,500-token prefix + a 50-token question, then the same prefix + another question:
#           each one's time to its first token (the second is where the cache pays);
#   chats   16 chats at once sharing a 500-token system prompt, a 50-token question each, 32
#           tokens generated each: generated tokens per second over the whole (125m only: on
#           two cores the 1b's uncached prefills alone take a minute).
# Environment: THREADS (default nproc), MODELS (default ../bench-models).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${THREADS:-$(nproc)}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(125m 1b)
models=${MODELS:-$(cd .. && pwd)/bench-models}
scripts/build.sh tensorfleet >/dev/null
tf="$PWD/build/src/tensorfleet"
client=bench/engine/prefix_cache_client.py
mkdir -p "$models"
server_pid=""
trap '[ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null' EXIT

start_server() {  # MODEL_DIR [FLAGS...]; sets url, server_pid
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$tf" engine serve --model "$1" --port "$port" --threads "$threads" --kv-cache-mb 1024 \
    "${@:2}" 2>/dev/null &
  server_pid=$!
  url="http://127.0.0.1:$port"
  until curl -sf -o /dev/null "$url/health"; do sleep 0.05; done
}
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); engine threads $threads"
for size in "${sizes[@]}"; do
  /usr/bin/python3 bench/engine/make_random_llama.py --size "$size" --out "$models" --hf-only >&2
  for mode in on off; do
    flags=()
    [ "$mode" = off ] && flags=(--no-prefix-cache)
    start_server "$models/llama-$size" "${flags[@]}"
    echo "$size cache $mode ttft  $(python3 "$client" "$url" ttft 1500 50)"
    if [ "$size" != 1b ]; then
      echo "$size cache $mode chats $(python3 "$client" "$url" chats 16 500 50 32)"
    fi
    stop_server
  done
done
