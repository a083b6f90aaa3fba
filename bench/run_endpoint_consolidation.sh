#!/usr/bin/env bash
# Consolidation: N endpoints packed on one node, against each alone (docs/benchmarks/endpoints.md).
#
#   bench/run_endpoint_consolidation.sh [N] [SIZE]     (default: 2 endpoints of 125m)
#
# N endpoints serve the random-weight bench model, one replica each (the built-in engine on one
# thread, 1 CPU declared), all placed on the one worker. Each in turn gets CLIENTS clients
# (default 4) sending streamed completions back to back for STEP_SECONDS (default 8) while the
# others are idle: its tokens/s alone. Then all N get their clients at once: the tokens/s of
# each, and the total, against the sum of the alone figures.
#
# Environment: CLIENTS, STEP_SECONDS, and bench/endpoints/platform.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2}
size=${2:-125m}
clients=${CLIENTS:-4}
seconds=${STEP_SECONDS:-8}

. bench/endpoints/platform.sh
start_platform "$size"

for i in $(seq "$n"); do
  cat >"$work/pack-$i.yaml" <<SPEC
name: pack-$i
model: $models/llama-$size
engine:
  builtin: {threads: 1, max_batch: 8}
resources: {cpus: 1}
replicas: {min: 1, max: 1}
SPEC
  "$tf" endpoint up "$work/pack-$i.yaml" >/dev/null
done
nodes=""
for i in $(seq "$n"); do
  wait_for "pack-$i" ready
  nodes+=$("$tf" --json endpoint describe "pack-$i" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["replicas"][0]["node_id"])')$'\n'
done
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); $n endpoints of llama-$size on $(printf "%s" "$nodes" | sort -u | grep -c .) node(s); $clients clients each for ${seconds}s"

tokens_per_second() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["tokens"] / float(sys.argv[2]), r["failed"])' \
    "$1" "$seconds"
}

printf "\n%-10s %16s %18s\n" endpoint "alone tokens/s" "together tokens/s"
alone_sum=0
declare -A alone
for i in $(seq "$n"); do
  python3 bench/endpoints/load_step.py "$url" "$token" "pack-$i" "$clients" "$seconds" >"$work/alone-$i"
  read -r tps _ < <(tokens_per_second "$work/alone-$i")
  alone[$i]=$tps
  alone_sum=$(echo "$alone_sum + $tps" | bc -l)
done
pids=()
for i in $(seq "$n"); do
  python3 bench/endpoints/load_step.py "$url" "$token" "pack-$i" "$clients" "$seconds" \
    >"$work/together-$i" &
  pids+=($!)
done
wait "${pids[@]}"
together_sum=0
failed=0
for i in $(seq "$n"); do
  read -r tps f < <(tokens_per_second "$work/together-$i")
  together_sum=$(echo "$together_sum + $tps" | bc -l)
  failed=$((failed + f))
  printf "%-10s %16.1f %18.1f\n" "pack-$i" "${alone[$i]}" "$tps"
done
printf "%-10s %16.1f %18.1f\n" total "$alone_sum" "$together_sum"
echo
echo "together / sum of alone: $(echo "$together_sum / $alone_sum" | bc -l | cut -c1-4); failed requests: $failed"
