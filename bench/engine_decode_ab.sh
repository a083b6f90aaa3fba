#!/usr/bin/env bash
# Single-stream decode of one model by several engines taking turns in the same run, with the
# memory read bandwidth measured in every round: this VM's bandwidth moves by a third from one
# minute to the next, so engines measured minutes apart (as in run_engine_bench.sh) cannot be
# compared closely; here each round runs every side back to back (docs/benchmarks/engine.md).
#
#   bench/engine_decode_ab.sh MODEL SIDE [SIDE...]
#
# MODEL: a GGUF file (or a checkpoint directory, for tensorfleet sides only; then no roofline).
# SIDE: `llama` (llama.cpp's llama-bench) or NAME=PATH, a tensorfleet binary (e.g. the build of
# main against a change: old=/tmp/old/tensorfleet new=build/src/tensorfleet); a bare PATH is
# named `tf`. The first side is the one the others are divided by.
#
# Each round: membw (one thread per engine thread, 1 GiB, best of 4 passes), every side once, the
# order turning by one side each round (with two sides: A B, B A, A B, ...), and membw again; the
# round's bandwidth is the mean of the two (membw's best pass moves by half within a minute).
# Both engines decode TG tokens single-stream after a warm-up, REPS times in a row, and report
# the mean of tokens/s over those runs:
#   llama-bench -m MODEL -t THREADS -p 0 -n TG -r REPS -o json
#     (one warm-up token; each run clears the cache and decodes TG tokens from position 0, random
#     token ids fed in, logits computed for every token but not sampled)
#   tensorfleet engine bench --model MODEL --threads THREADS --prompt 0 --gen TG --context 1
#     --streams 1 --repeat REPS --json   (QUANTIZE=q8_0 adds --quantize q8_0)
#     (a 4-token warm-up; each run decodes TG tokens after a 1-token prompt and its first token,
#     each next token the greedy choice over the logits)
# bench/engine/decode_ab_report.py prints every round (membw, tokens/s, share of the roofline,
# ratio to the first side) and the medians over the rounds; no round is left out.
#
# Environment: ROUNDS (default 6), TG (default 128; 64 for a model over 1 GB), REPS (default 3;
# 2 for a model over 1 GB), THREADS (default nproc), LLAMA_CPP (default ../llama.cpp), TF_BUILD
# (for membw; default build), QUANTIZE, OUT (default $TF_BUILD/decode-ab-<UTC time>).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,30p' "$0" >&2; exit 2; }
model=$1
shift
llama=${LLAMA_CPP:-$(cd .. && pwd)/llama.cpp}
tf_build=${TF_BUILD:-build}
threads=${THREADS:-$(nproc)}
big=0
[ -f "$model" ] && [ "$(stat -c %s "$model")" -gt 1000000000 ] && big=1
tg=${TG:-$([ $big = 1 ] && echo 64 || echo 128)}
reps=${REPS:-$([ $big = 1 ] && echo 2 || echo 3)}
rounds=${ROUNDS:-6}
out=${OUT:-$tf_build/decode-ab-$(date -u +%Y%m%dT%H%M%SZ)}
python=/usr/bin/python3
export PYTHONPATH="$llama/gguf-py${PYTHONPATH:+:$PYTHONPATH}"

names=()
paths=()
for side in "$@"; do
  case $side in
    llama) names+=(llama.cpp); paths+=("$llama/build/bin/llama-bench") ;;
    *=*) names+=("${side%%=*}"); paths+=("${side#*=}") ;;
    *) names+=(tf); paths+=("$side") ;;
  esac
done
for p in "${paths[@]}" "$tf_build/bench/membw"; do
  [ -x "$p" ] || { echo "missing $p (build it first)" >&2; exit 1; }
done
[ "$(printf '%s\n' "${names[@]}" | sort | uniq -d)" = "" ] ||
  { echo "sides need distinct names: ${names[*]}" >&2; exit 2; }
mkdir -p "$out"
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

{
  echo "{\"date\": \"$(date -u +%FT%TZ)\", \"model\": \"$model\", \"threads\": $threads,"
  echo " \"tg\": $tg, \"reps\": $reps, \"rounds\": $rounds, \"quantize\": \"${QUANTIZE:-}\","
  echo " \"tensorfleet_commit\": \"$(git rev-parse --short HEAD)\","
  echo " \"load_before\": \"$(cut -d' ' -f1-3 /proc/loadavg)\","
  printf ' "sides": ['
  for i in "${!names[@]}"; do
    printf '%s{"name": "%s", "path": "%s"}' "$([ "$i" = 0 ] || echo ', ')" "${names[$i]}" \
      "${paths[$i]}"
  done
  echo ']}'
} >"$out/run.json"
case $model in
  *.gguf) "$python" bench/engine/engine_bench_report.py --weights "$model" >"$out/weights.json" ;;
esac

run_side() {  # run_side INDEX ROUND_DIR
  local name=${names[$1]} bin=${paths[$1]} dir=$2
  if [ "$name" = llama.cpp ]; then
    "$bin" -m "$model" -t "$threads" -p 0 -n "$tg" -r "$reps" -o json \
      >"$dir/$name.json" 2>"$dir/$name.log"
  else
    local q=()
    [ -n "${QUANTIZE:-}" ] && q=(--quantize "$QUANTIZE")
    "$bin" engine bench --model "$model" --threads "$threads" --prompt 0 --gen "$tg" \
      --context 1 --streams 1 --repeat "$reps" "${q[@]}" --json >"$dir/$name.json" \
      2>"$dir/$name.log"
  fi
}

n=${#names[@]}
for r in $(seq "$rounds"); do
  dir=$(printf '%s/round-%02d' "$out" "$r")
  mkdir -p "$dir"
  membw() { "$tf_build/bench/membw" --threads "$threads" --mib 1024 --passes 4 --json; }
  membw >"$dir/membw.json"
  order=()
  for k in $(seq 0 $((n - 1))); do order+=($(((k + r - 1) % n))); done
  echo "${order[*]}" >"$dir/order"
  for i in "${order[@]}"; do run_side "$i" "$dir"; done
  membw >"$dir/membw-after.json"
  log "round $r: $("$python" bench/engine/decode_ab_report.py --round "$dir" --results "$out")"
done
echo "{\"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}" >"$out/run-end.json"
log "raw results in $out"
"$python" bench/engine/decode_ab_report.py --results "$out"
