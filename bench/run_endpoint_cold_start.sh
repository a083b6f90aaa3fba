#!/usr/bin/env bash
# Cold start from zero, and the warm pool's answer to it (docs/benchmarks/endpoints.md).
#
#   bench/run_endpoint_cold_start.sh [SIZE...]      (default: 125m 1b)
#
# For each model size (a random-weight Llama checkpoint, bench/engine/make_random_llama.py):
#   load      `tensorfleet engine serve` started by hand on the checkpoint, from its start to
#             its /health answering 200: the model's load, the floor of any cold start;
#   cold      an endpoint with no replica (replicas.min 0), from the first request sent through
#             the gateway to its first token: the controller starts a replica for the queued
#             request, the scheduler places its job, the worker starts it, the model loads, the
#             readiness check passes, the gateway routes the request;
#   warm      the same with `warm_pool: 1`: a replica loaded ahead, promoted on the request.
# Each is measured REPS times (default 3), a fresh endpoint each time; the medians are printed
# with cold - load, the platform's own part (target: at most 200 ms).
#
# A replica declares as many CPUs as the engine has threads: the worker holds a rank to its
# declared CPUs (a CPU quota), and the load by hand runs on all of them; with fewer the cold
# start would measure the quota, not the platform.
#
# Environment: REPS, THREADS (the engine's; default nproc), and bench/endpoints/platform.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-3}
threads=${THREADS:-$(nproc)}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(125m 1b)

. bench/endpoints/platform.sh
start_platform "${sizes[@]}"

# Seconds from starting `engine serve` on $1 to its /health answering 200.
load_time() {
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  local start end
  start=$(date +%s.%N)
  "$tf" engine serve --model "$1" --port "$port" --threads "$threads" 2>/dev/null &
  local pid=$!
  until curl -sf -o /dev/null "http://127.0.0.1:$port/health"; do sleep 0.005; done
  end=$(date +%s.%N)
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$end - $start" | bc -l
}

# Seconds to the first token of a request at a new endpoint on $1 (warm pool $2), then down.
first_token() {
  local name="cold-$3"
  cat >"$work/$name.yaml" <<SPEC
name: $name
model: $1
engine:
  builtin: {threads: $threads}
resources: {cpus: $threads}
replicas: {min: 0, max: 1}
warm_pool: $2
SPEC
  "$tf" endpoint up "$work/$name.yaml" >/dev/null
  [ "$2" = 0 ] || wait_for "$name" warm
  python3 bench/endpoints/first_token.py "$url" "$token" "$name" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["first_token_s"])'
  "$tf" endpoint down "$name" >/dev/null
  wait_for "$name" gone
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); engine threads $threads; $reps runs each"
printf "\n%-6s %10s %10s %10s %12s\n" model "load ms" "cold ms" "warm ms" "cold-load ms"
run=0
for size in "${sizes[@]}"; do
  dir="$models/llama-$size"
  loads=() colds=() warms=()
  for _ in $(seq "$reps"); do
    loads+=("$(load_time "$dir")")
    run=$((run + 1))
    colds+=("$(first_token "$dir" 0 "$run")")
    run=$((run + 1))
    warms+=("$(first_token "$dir" 1 "$run")")
  done
  load=$(printf "%s\n" "${loads[@]}" | median)
  cold=$(printf "%s\n" "${colds[@]}" | median)
  warm=$(printf "%s\n" "${warms[@]}" | median)
  printf "%-6s %10s %10s %10s %12s\n" "$size" "$(echo "$load" | ms)" "$(echo "$cold" | ms)" \
    "$(echo "$warm" | ms)" "$(echo "$cold - $load" | bc -l | ms)"
  echo "  runs: load ${loads[*]}; cold ${colds[*]}; warm ${warms[*]}" >&2
done
