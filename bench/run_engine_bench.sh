#!/usr/bin/env bash
# The inference engine beside llama.cpp on the same weights, with the machine's memory bandwidth
# and the decode roofline, in one run (docs/benchmarks/engine.md).
#
#   bench/run_engine_bench.sh [SIZE...]        # default: 125m 1b
#
# For each model size: writes (or reuses) a random-weight Llama checkpoint as safetensors and as
# GGUF F16 (bench/engine/make_random_llama.py), quantises the GGUF to Q8_0 with llama-quantize,
# then for F16 and Q8_0 runs llama-bench (prefill and single-stream decode),
# llama-batched-bench (total decode at 4, 16 and 64 sequences) and `tensorfleet engine bench`
# (all of them) on the same files with the same thread count. membw measures the read
# bandwidth first. bench/engine/engine_bench_report.py prints the table.
#
# Environment:
#   LLAMA_CPP  llama.cpp source tree with build/bin/{llama-bench,llama-batched-bench,llama-quantize}
#              (default ../llama.cpp, beside this repository)
#   MODELS     where the generated models are kept (default ../bench-models; a few GB)
#   TF_BUILD   this repository's build directory with tensorfleet and membw (default build)
#   THREADS    threads for both engines (default: nproc)
#   OUT        directory for the raw results (default $TF_BUILD/engine-bench-<UTC time>)
set -euo pipefail
cd "$(dirname "$0")/.."

llama=${LLAMA_CPP:-$(cd .. && pwd)/llama.cpp}
models=${MODELS:-$(cd .. && pwd)/bench-models}
tf_build=${TF_BUILD:-build}
threads=${THREADS:-$(nproc)}
out=${OUT:-$tf_build/engine-bench-$(date -u +%Y%m%dT%H%M%SZ)}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(125m 1b)
python=/usr/bin/python3  # Debian's, with numpy
export PYTHONPATH="$llama/gguf-py${PYTHONPATH:+:$PYTHONPATH}"

tf="$tf_build/src/tensorfleet"
for bin in "$tf" "$tf_build/bench/membw" "$llama/build/bin/llama-bench" \
  "$llama/build/bin/llama-batched-bench" "$llama/build/bin/llama-quantize"; do
  [ -x "$bin" ] || { echo "missing $bin (build it first; see the header of $0)" >&2; exit 1; }
done
mkdir -p "$out" "$models"

# Token counts per size, chosen so that the whole run takes under 12 minutes on 2 cores:
#   pp: prefill prompt; tg: single-stream decode tokens; npp/ntg: each stream's prompt and
#   decode tokens at 4, 16 and 64 streams; reps: runs per measurement (both engines alike).
settings() {
  case $1 in
    1b) pp=512 tg=64 npp=1 ntg=16 reps=2 ;;
    *) pp=512 tg=128 npp=1 ntg=32 reps=3 ;;
  esac
}

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

{
  echo "{\"date\": \"$(date -u +%FT%TZ)\", \"threads\": $threads,"
  echo " \"cpu\": \"$(lscpu | sed -n 's/^Model name: *//p')\", \"cpus\": $(nproc),"
  echo " \"llama_cpp_commit\": \"$(git -C "$llama" rev-parse HEAD)\","
  echo " \"tensorfleet_commit\": \"$(git rev-parse --short HEAD)\","
  echo " \"load_before\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"sizes\": \"${sizes[*]}\"}"
} >"$out/run.json"

log "models in $models"
for size in "${sizes[@]}"; do
  "$python" bench/engine/make_random_llama.py --size "$size" --out "$models" >&2
  q8="$models/llama-$size-q8_0.gguf"
  if [ ! -s "$q8" ]; then
    "$llama/build/bin/llama-quantize" "$models/llama-$size-f16.gguf" "$q8.tmp" Q8_0 \
      >"$out/quantize-$size.log" 2>&1
    mv "$q8.tmp" "$q8"
  fi
done

log "memory bandwidth, $threads threads"
"$tf_build/bench/membw" --threads "$threads" --mib 2048 --passes 8 --json >"$out/membw.json"
cat "$out/membw.json" >&2

for size in "${sizes[@]}"; do
  settings "$size"
  for type in f16 q8_0; do
    gguf="$models/llama-$size-$type.gguf"
    tag="$size-$type"
    "$python" bench/engine/engine_bench_report.py --weights "$gguf" >"$out/$tag.weights.json"

    log "$tag: llama-bench pp$pp tg$tg, $reps runs"
    "$llama/build/bin/llama-bench" -m "$gguf" -t "$threads" -p "$pp" -n "$tg" -r "$reps" \
      -o json >"$out/$tag.llama-bench.json" 2>"$out/$tag.llama-bench.log"

    log "$tag: llama-batched-bench npp $npp ntg $ntg at 4,16,64 sequences"
    "$llama/build/bin/llama-batched-bench" -m "$gguf" -t "$threads" -tb "$threads" \
      -c $((64 * (npp + ntg) + 64)) -b 2048 -ub 512 -npp "$npp" -ntg "$ntg" -npl 4,16,64 \
      --output-format jsonl >"$out/$tag.batched.jsonl" 2>"$out/$tag.batched.log"

    # The engine reads the GGUF where it can; otherwise the F16 safetensors checkpoint of the
    # same weights stands in for F16 (and Q8_0 is not measured).
    args=(engine bench --threads "$threads" --prompt "$pp" --gen "$tg" --context "$npp"
      --stream-gen "$ntg" --streams 1,4,16,64 --repeat "$reps" --json)
    log "$tag: tensorfleet engine bench on $gguf"
    if ! "$tf" "${args[@]}" --model "$gguf" >"$out/$tag.tensorfleet.json" 2>"$out/$tag.tensorfleet.log"; then
      log "$tag: $(tail -1 "$out/$tag.tensorfleet.log")"
      mv "$out/$tag.tensorfleet.log" "$out/$tag.tensorfleet-gguf.log"
      rm -f "$out/$tag.tensorfleet.json"
      if [ "$type" = f16 ]; then
        log "$tag: tensorfleet engine bench on $models/llama-$size (safetensors F16) instead"
        "$tf" "${args[@]}" --model "$models/llama-$size" >"$out/$tag.tensorfleet.json" \
          2>"$out/$tag.tensorfleet.log"
      fi
    fi
  done
done
echo "{\"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}" >"$out/run-end.json"

log "raw results in $out"
"$python" bench/engine/engine_bench_report.py --results "$out"
