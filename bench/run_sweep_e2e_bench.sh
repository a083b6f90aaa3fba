#!/usr/bin/env bash
# A sweep of the example's PyTorch training job end to end (docs/benchmarks/sweeps.md, "End to
# end"): 32 trials, two at a time, on a server and one worker of this machine.
#
#   bench/run_sweep_e2e_bench.sh [TRIALS] [STEPS] [STEP_MS]     (default: 32 90 100)
#
# The same sweep (bayesian over the learning rate and the warmup; a tiny model whose steps are
# padded to STEP_MS each with the example's slow_step_ms, standing for a real model's step) runs
# twice: with asha from step STEPS/9 (eta 3) and without early stopping. For each: the wall
# time from `sweep start` to its end, the steps the trials trained, the metered spend (the
# worker declares $3.60 an hour), the best loss, and how many trials completed or paused.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-32}
steps=${2:-90}
step_ms=${3:-100}
rung=$((steps / 9))
scripts/build.sh tensorfleet >/dev/null
tf="$PWD/build/src/tensorfleet"
dir=$(mktemp -d)
export TENSORFLEET_HOME="$dir/data"
server_pid="" worker_pid=""
cleanup() {
  [ -n "$worker_pid" ] && kill -TERM "$worker_pid" 2>/dev/null && wait "$worker_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
"$tf" server --port 0 2>"$dir/server.log" &
server_pid=$!
for _ in $(seq 100); do [ -s "$TENSORFLEET_HOME/url" ] && break; sleep 0.1; done
# Two trials of two ranks at once: four CPUs offered (on a two-core machine they share them).
"$tf" worker --gpus 0 --cpus 4 --price 3.6 --worker-dir "$dir/w1" 2>"$dir/worker.log" &
worker_pid=$!
for _ in $(seq 100); do grep -q 'is serving' "$dir/worker.log" && break; sleep 0.1; done

sed -e "s|^code: .*|code: \"$PWD/examples/llama-train\"|" examples/llama-train/job.yaml >"$dir/job.yaml"
write_sweep() {  # NAME EARLY_STOPPING_LINE
  cat >"$dir/$1.yaml" <<SPEC
name: $1
job: job.yaml
parameters:
  lr: {type: loguniform, low: 3e-4, high: 3e-1}
  warmup_steps: {type: int, low: 0, high: $((steps / 2))}
  steps: {type: fixed, value: $steps}
  hidden_size: {type: fixed, value: 32}
  intermediate_size: {type: fixed, value: 64}
  num_layers: {type: fixed, value: 2}
  num_heads: {type: fixed, value: 4}
  num_kv_heads: {type: fixed, value: 2}
  seq_len: {type: fixed, value: 32}
  batch_size: {type: fixed, value: 8}
  bpe_merges: {type: fixed, value: 64}
  log_every: {type: fixed, value: 1}
  slow_step_ms: {type: fixed, value: $step_ms}
  checkpoint_every: {type: fixed, value: $rung}
objective: {metric: loss, goal: minimize, value: last}
strategy: bayesian
seed: 11
max_trials: $trials
max_parallel: 2
$2
SPEC
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "sweep: $trials trials of the example (2 DDP ranks, $steps steps of >= $step_ms ms each), 2 at a time"
for mode in asha none; do
  name="e2e-$mode"
  if [ "$mode" = asha ]; then
    write_sweep "$name" "early_stopping: {type: asha, resource: step, min_resource: $rung, max_resource: $steps, reduction_factor: 3}"
  else
    write_sweep "$name" ""
  fi
  started=$(date +%s.%N)
  "$tf" sweep start "$dir/$name.yaml" >/dev/null 2>&1
  until "$tf" --json sweep describe "$name" |
    python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["state"] != "running" else 1)'; do
    sleep 0.5
  done
  ended=$(date +%s.%N)
  "$tf" --json sweep describe "$name" | python3 -c '
import json, sys
s = json.load(sys.stdin)
mode, wall, steps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
trained = sum(t["last_step"] or 0 for t in s["trials"])
counts = s["trial_counts"]
print("%-5s %-8s wall %6.1f s  steps trained %5d of %5d  spend $%.4f  best loss %.4f  "
      "complete %d paused %d failed %d" % (
    mode, s["state"], wall, trained, steps * len(s["trials"]), s["spent_usd"],
    s["best"]["value"] if "best" in s else float("nan"), counts.get("complete", 0),
    counts.get("paused", 0), counts.get("failed", 0)))
' "$mode" "$(python3 -c "print($ended - $started)")" "$steps"
done
