#!/usr/bin/env bash
# The engine beside llama.cpp on the same K-quant GGUF files (docs/benchmarks/engine-kquants.md):
# prefill and single-stream decode tokens/s, taking turns round after round, with the machine's
# read bandwidth (membw) measured in every round for the decode roofline.
#
#   bench/run_kquant_bench.sh [SIZE ...]        (default: 125m 1b)
#
# The files are the engine benchmark's random-weight Llamas quantised to Q4_K_M by llama.cpp
# itself (bench/engine/make_kquant_model.py), written once to $MODELS (default
# build/kquant-models). llama.cpp runs in-process through its C API
# (bench/engine/llama_cpp_speed.py) from the prebuilt libraries of npm's
# @node-llama-cpp/linux-x64 package, fetched into build/ if $BINS is not given. With
# IK_LLAMA_BENCH=path/to/llama-bench (ik_llama.cpp built from its source), ik_llama.cpp takes
# its turn too. ROUNDS (default 3), THREADS (default nproc), PROMPT (default 128), GEN (default
# 64), MIX (default q4_k_m).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(125m 1b)
rounds=${ROUNDS:-3}
threads=${THREADS:-$(nproc)}
prompt=${PROMPT:-128}
gen=${GEN:-64}
mix=${MIX:-q4_k_m}
models=${MODELS:-$PWD/build/kquant-models}
if [ -z "${BINS:-}" ]; then
  BINS=$PWD/build/node-llama-cpp/package/bins/linux-x64
  if [ ! -e "$BINS/libllama.v0.5.0.so" ]; then
    echo "fetching llama.cpp's prebuilt libraries (npm: @node-llama-cpp/linux-x64@3.22.1)"
    mkdir -p build/node-llama-cpp
    (cd build/node-llama-cpp && npm pack --silent @node-llama-cpp/linux-x64@3.22.1 >/dev/null &&
      tar xzf node-llama-cpp-linux-x64-3.22.1.tgz)
  fi
fi
scripts/build.sh tensorfleet membw >/dev/null
tf=$PWD/build/src/tensorfleet
out=$(mktemp -d /tmp/tensorfleet-kquant-bench.XXXXXX)
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "threads $threads, prompt $prompt, decode $gen tokens, $rounds rounds; results in $out"
for size in "${sizes[@]}"; do
  /usr/bin/python3 bench/engine/make_kquant_model.py --size "$size" --out "$models" \
    --bins "$BINS" --mix "$mix" 2>/dev/null | tail -1
  model=$models/llama-$size-$mix.gguf
  for round in $(seq "$rounds"); do
    dir=$out/$size/$round
    mkdir -p "$dir"
    build/bench/membw --threads "$threads" --mib 1024 --passes 4 --json >"$dir/membw.json"
    sides=(tensorfleet llama.cpp)
    [ -n "${IK_LLAMA_BENCH:-}" ] && sides+=(ik_llama.cpp)
    # The order turns by one side each round.
    for _ in $(seq $(((round - 1) % ${#sides[@]}))); do sides=("${sides[@]:1}" "${sides[0]}"); done
    for side in "${sides[@]}"; do
      if [ "$side" = tensorfleet ]; then
        "$tf" --json engine bench --model "$model" --threads "$threads" --prompt "$prompt" \
          --gen "$gen" --streams 1 >"$dir/tensorfleet.json"
      elif [ "$side" = llama.cpp ]; then
        /usr/bin/python3 bench/engine/llama_cpp_speed.py "$model" --bins "$BINS" \
          --threads "$threads" --prompt "$prompt" --gen "$gen" --repeat 1 \
          2>/dev/null >"$dir/llama.cpp.json"
      else
        "$IK_LLAMA_BENCH" -m "$model" -t "$threads" -p "$prompt" -n "$gen" -r 1 -o json \
          2>/dev/null >"$dir/ik_llama.cpp.json"
      fi
    done
  done
done
/usr/bin/python3 bench/engine/kquant_bench_report.py "$out" "$models" "$mix"
