#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (in build-fuzz/) and runs each for a bounded time.
# Usage: scripts/fuzz.sh [seconds per target, default 30]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
if [ ! -f build-fuzz/build.ninja ]; then
  CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTF_BUILD_FUZZ=ON -DTF_BUILD_TESTS=OFF -DTF_BUILD_BENCH=OFF >/dev/null
fi
ninja -C build-fuzz request_fuzz engine_fuzz gguf_fuzz cur_fuzz job_spec_fuzz s3_fuzz shard_fuzz
for target in request_fuzz engine_fuzz gguf_fuzz cur_fuzz job_spec_fuzz s3_fuzz shard_fuzz; do
  corpus_seed="fuzz/corpus/${target%_fuzz}"
  work=$(mktemp -d)
  cp "$corpus_seed"/* "$work"/ 2>/dev/null || true
  echo "fuzz: running $target for ${seconds}s"
  log="$work.log"
  status=0
  mkdir -p build-fuzz/artifacts  # a crashing input is kept here, outside the source tree
  max_len=4096
  # A GGUF file with one whole layer of weights takes about 5 KB.
  if [ "$target" = gguf_fuzz ]; then max_len=8192; fi
  build-fuzz/fuzz/$target -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
    -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1 "$work" >"$log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)|Done [0-9]+ runs' "$log" || true
  if [ "$status" -ne 0 ]; then tail -40 "$log"; fi
  rm -f "$log"
  rm -rf "$work"
  if [ "$status" -ne 0 ]; then echo "fuzz: $target FAILED"; exit 1; fi
  echo "fuzz: $target passed"
done
