#!/usr/bin/env bash
# Reaction to a load step, with and without a warm pool (docs/benchmarks/endpoints.md).
#
#   bench/run_endpoint_reaction.sh [SIZE]       (default: 125m)
#
# An endpoint serves the random-weight bench model with one replica (replicas 1 to 2, a target
# of 2 ongoing requests per replica, the built-in engine taking 4 requests at once). At t0,
# CLIENTS clients (default 8) start sending streamed completions back to back through the
# gateway (bench/endpoints/load_step.py) for STEP_SECONDS (default 8). Measured: from t0 until the
# second replica is in rotation (ready: the gateway routes to it), polling `endpoint describe`
# every 50 ms; and the requests that failed during the step (there should be none). Once without
# a warm pool (a replica is started cold for the step) and once with `warm_pool: 1` (the warm
# replica is promoted), REPS times each (default 3), a fresh endpoint each time.
#
# Environment: REPS, CLIENTS, STEP_SECONDS, and bench/endpoints/platform.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-125m}
reps=${REPS:-3}
clients=${CLIENTS:-8}
seconds=${STEP_SECONDS:-8}

. bench/endpoints/platform.sh
start_platform "$size"

# Seconds from a load step to the second replica in rotation, at a new endpoint with warm pool
# $1 (run number $2); prints "SECONDS FAILED".
react() {
  local name="react-$2"
  cat >"$work/$name.yaml" <<SPEC
name: $name
model: $models/llama-$size
engine:
  builtin: {threads: 1, max_batch: 4}
resources: {cpus: 1}
replicas: {min: 1, max: 2}
autoscaling: {target_ongoing_requests: 2}
warm_pool: $1
SPEC
  "$tf" endpoint up "$work/$name.yaml" >/dev/null
  wait_for "$name" ready
  [ "$1" = 0 ] || wait_for "$name" warm
  local start now ready=""
  start=$(date +%s.%N)
  python3 bench/endpoints/load_step.py "$url" "$token" "$name" "$clients" "$seconds" \
    >"$work/$name.load" &
  local load_pid=$!
  while [ -z "$ready" ]; do
    if "$tf" --json endpoint describe "$name" |
      python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["replica_counts"].get("ready", 0) < 2)'; then
      now=$(date +%s.%N)
      ready=$(echo "$now - $start" | bc -l)
    elif [ "$(echo "$(date +%s.%N) - $start > 120" | bc -l)" = 1 ]; then
      ready=nan
    else
      sleep 0.05
    fi
  done
  wait "$load_pid"
  local failed
  failed=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["failed"])' "$work/$name.load")
  "$tf" endpoint down "$name" >/dev/null
  wait_for "$name" gone
  echo "$ready $failed"
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); llama-$size; $clients clients for ${seconds}s; $reps runs each"
printf "\n%-10s %14s %16s\n" "warm pool" "reaction ms" "failed requests"
run=0
for warm in 0 1; do
  times=() failed=0
  for _ in $(seq "$reps"); do
    run=$((run + 1))
    read -r t f < <(react "$warm" "$run")
    times+=("$t")
    failed=$((failed + f))
  done
  printf "%-10s %14s %16s\n" "$warm" "$(printf "%s\n" "${times[@]}" | median | ms)" "$failed"
  echo "  runs: ${times[*]}" >&2
done
