#!/usr/bin/env bash
# Warm reads of a freshly downloaded dataset (docs/benchmarks/datasets.md, 2026-12-05): the shards
# as the fetcher writes them (whole 4 MiB blocks, so the page cache holds them in 2 MiB folios),
# then the same files rewritten 64 KiB at a time (as a download written chunk by chunk would be),
# each read twice by `dataset read` with the page cache warm, beside a warm `cat` of the shards.
#
#   bench/dataset_warm_ab.sh [BUILD_DIR] [SAMPLES] [SAMPLE_KIB] [ROUNDS] [DIR]
#
# Defaults: build, 100000 samples of 8 KiB (781 MiB), 3 rounds, /var/tmp. Each round starts from
# an empty cache, so that its first read downloads every shard. Run as root, the page cache is
# dropped once before the first round.
set -euo pipefail
build=${1:-build}
samples=${2:-100000}
kib=${3:-8}
rounds=${4:-3}
dir=$(mktemp -d "${5:-/var/tmp}/tf-warm-bench.XXXXXX")
tf_bin="$build/src/tensorfleet"
. "$(dirname "$0")/start_server.sh"
start_server "$tf_bin" "$dir"

python3 "$(dirname "$0")/text_samples.py" "$dir/samples.txt" "$samples" "$kib"
"$tf_bin" dataset create bench --from "$dir/samples.txt" --format text --shard-size 64MiB
rm "$dir/samples.txt"
if [ "$(id -u)" -eq 0 ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi

# The stats line of `dataset read`, from its time on, labelled.
read_line() { sed "s/.*MiB in/$1: in/; s/, from.*//"; }
warm_cat() {
  local start end bytes
  bytes=$(du -cb "$dir"/cache/*.tfs | tail -1 | cut -f1)
  start=$(date +%s.%N)
  cat "$dir"/cache/*.tfs >/dev/null
  end=$(date +%s.%N)
  echo "  warm cat: $(echo "scale=0; $bytes / 1000000 / ($end - $start)" | bc) MB/s"
}
for round in $(seq "$rounds"); do
  echo "round $round:"
  rm -rf "$dir/cache"
  "$tf_bin" dataset read bench --cache-dir "$dir/cache" 2>&1 | read_line "  download and read"
  warm_cat
  for _ in 1 2; do
    "$tf_bin" dataset read bench --cache-dir "$dir/cache" 2>&1 | read_line "  warm, as downloaded"
  done
  for f in "$dir"/cache/*.tfs; do
    dd if="$f" of="$f.rewritten" bs=64k status=none
    mv "$f.rewritten" "$f"
  done
  warm_cat
  for _ in 1 2; do
    "$tf_bin" dataset read bench --cache-dir "$dir/cache" 2>&1 | read_line "  warm, rewritten 64 KiB at a time"
  done
done
