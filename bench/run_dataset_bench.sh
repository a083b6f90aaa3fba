#!/usr/bin/env bash
# Dataset streaming (docs/benchmarks/datasets.md): the reader's samples/s and MB/s
# for one reader and for 4 ranks, beside the raw read bandwidth of the same shard files (cat, in
# the same run), and the Python binding in a PyTorch DataLoader beside a DataLoader over the
# same samples as loose files, with the same number of workers (and tensorfleet_data in
# batches, and in the main process without workers).
#
#   bench/run_dataset_bench.sh [BUILD_DIR] [SAMPLES] [SAMPLE_KIB] [WORKERS] [DIR]
#
# Defaults: build, 40000 samples of 8 KiB, 4 workers, /var/tmp. Every step reads what the one
# before left in the page cache unless run as root (the cache is then dropped before each step,
# so reads come from the disk).
#
# The disk's speed moves from minute to minute, so the reader steps run in ROUNDS rounds
# (default 2), each with its own raw read: `cat` of the shard files, and 4 cats at once over a
# quarter of them each; each reader is given as a share of the round's cat (one reader) or of
# the better of the two (4 ranks). LOADER=0 leaves out the DataLoader steps (and packs the samples
# from the lines of one text file instead of loose files: quicker to set up). ALSO="BINARY [FLAGS]"
# runs every reader step a second time in each round with another build of tensorfleet and/or
# other `dataset read` flags (e.g. ALSO="/var/tmp/old/tensorfleet", ALSO="build/src/tensorfleet
# --prefetch-threads 1"), labelled "also", to compare two readers on the same disk minutes.
# FLAGS="..." are `dataset read` flags for the first reader (the build's), so that an A/B of two
# flag settings can run in both orders (FLAGS="--read-slots 4" ALSO="build/src/tensorfleet").
# The DataLoader steps run LOADER_ROUNDS times (default 1), each round all of them in turn; ROUNDS=0
# runs only them.
set -euo pipefail
build=${1:-build}
samples=${2:-40000}
kib=${3:-8}
workers=${4:-4}
rounds=${ROUNDS:-2}
loader=${LOADER:-1}
also=${ALSO:-}
first_flags=${FLAGS:-}
dir=$(mktemp -d "${5:-/var/tmp}/tf-dataset-bench.XXXXXX")
tf_bin="$build/src/tensorfleet"
python=/usr/bin/python3
export PYTHONPATH="$build/python"
. "$(dirname "$0")/start_server.sh"
start_server "$tf_bin" "$dir"

cold() { sync; if [ "$(id -u)" -eq 0 ]; then echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; fi; }
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

echo "== $samples samples of $kib KiB, $workers workers, data in $dir ($(df --output=source "$dir" | tail -1))"
if [ "$loader" = 1 ]; then
  "$python" - "$dir/loose" "$samples" "$kib" <<'PY'
import os, sys
root, n, kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
block = os.urandom(kib * 1024)
for i in range(n):
    d = os.path.join(root, "%03d" % (i // 1000))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "%06d.bin" % i), "wb") as f:
        f.write(block[i % 97:] + block[:i % 97])
PY
  "$tf_bin" dataset create bench --from "$dir/loose" --shard-size 64MiB
else
  # Without the DataLoader steps nothing reads loose files: the samples are the lines of one text
  # file (random letters, SAMPLE_KIB each without the newline), which is much quicker to write and
  # to pack for hundreds of thousands of samples. The shards hold samples of the same size.
  "$python" "$(dirname "$0")/text_samples.py" "$dir/samples.txt" "$samples" "$kib"
  "$tf_bin" dataset create bench --from "$dir/samples.txt" --format text --shard-size 64MiB
  rm "$dir/samples.txt"
fi

# Warm the shard cache once (downloads), then measure reading from it.
"$tf_bin" dataset read bench --workers "$workers" --cache-dir "$dir/cache" 2>&1 | sed 's/^/download+read: /'
bytes=$(du -cb "$dir"/cache/*.tfs | tail -1 | cut -f1)
shards=("$dir"/cache/*.tfs)
count=${#shards[@]}
# 4 cats at once, each over a quarter of the shard files (contiguous, in name order).
groups=()
for g in 0 1 2 3; do
  from=$((count * g / 4)); to=$((count * (g + 1) / 4))
  groups+=("${shards[*]:$from:$((to - from))}")
done
mbs() { echo "scale=0; $1 / 1000000 / $2" | bc; }
pct() { echo "scale=0; 100 * $1 / $2" | bc; }
# The MB/s a `dataset read` printed on its stats line.
read_mbs() { sed -n 's/.* \([0-9.]*\) MB\/s, from.*/\1/p' "$1" | cut -d. -f1; }
# Ranks run as processes at once: their bytes over the span from the first one's start to the
# last one's end, each as its own clock gives it (after start-up and the index download, as for
# one reader), and over the wall clock around the processes (with start-up).
ranks() {
  local w=$1 pids=() start end r
  shift
  cold
  start=$(date +%s.%N)
  for r in 0 1 2 3; do
    "$@" dataset read bench --rank $r --world-size 4 --workers "$w" --cache-dir "$dir/cache" \
      2>"$dir/rank$r.log" &
    pids+=($!)
  done
  wait "${pids[@]}"
  end=$(date +%s.%N)
  local span
  span=$(cat "$dir"/rank?.log | sed -n 's/.* from \([0-9.]*\) to \([0-9.]*\) (Unix time)/\1 \2/p' |
    awk 'NR==1{lo=$1; hi=$2} {if ($1<lo) lo=$1; if ($2>hi) hi=$2} END{print hi-lo}')
  ranks_mbs=$(mbs "$samples * $kib * 1024" "$span")
  ranks_sps=$(echo "scale=0; $samples / $span" | bc)
  ranks_wall_mbs=$(mbs "$samples * $kib * 1024" "($end - $start)")
}
# The reader steps of one round with one reader command (the tensorfleet binary and any flags
# put after `dataset read ...`), each line starting with $label.
readers() {
  local label=$1 bin=$2 flags=("${@:3}")
  run() { "$bin" "$@" "${flags[@]}"; }
  cold
  run dataset read bench --workers 1 --cache-dir "$dir/cache" 2>"$dir/one.log"
  echo "$label one reader, 1 worker: $(cat "$dir/one.log")"
  echo "$label one reader, 1 worker: $(pct "$(read_mbs "$dir/one.log")" "$cat1")% of cat"
  cold
  run dataset read bench --workers "$workers" --cache-dir "$dir/cache" 2>"$dir/one.log"
  echo "$label one reader, $workers workers: $(cat "$dir/one.log")"
  echo "$label one reader, $workers workers: $(pct "$(read_mbs "$dir/one.log")" "$cat1")% of cat"
  for w in 1 "$workers"; do
    ranks "$w" run
    for r in 0 1 2 3; do sed "s/^/$label 4 ranks, $w workers, rank $r: /" "$dir/rank$r.log"; done
    echo "$label 4 ranks at once, $w workers each: $ranks_mbs MB/s" \
      "($ranks_sps samples/s)," \
      "$(pct "$ranks_mbs" "$best")% of the better cat; wall clock with start-up: $ranks_wall_mbs MB/s"
  done
}
for round in $(seq "$rounds"); do
  cold
  raw=$(seconds cat "${shards[@]}")
  cat1=$(mbs "$bytes" "$raw")
  cold
  pids=()
  start=$(date +%s.%N)
  for g in "${groups[@]}"; do [ -n "$g" ] && { cat $g >/dev/null & pids+=($!); }; done
  wait "${pids[@]}"
  end=$(date +%s.%N)
  cat4=$(mbs "$bytes" "($end - $start)")
  best=$((cat1 > cat4 ? cat1 : cat4))
  echo "round $round: cat of the $count shard files: $cat1 MB/s; 4 cats at once: $cat4 MB/s"
  # shellcheck disable=SC2086  # FLAGS are flags, split on purpose
  readers "round $round:" "$tf_bin" $first_flags
  # shellcheck disable=SC2086  # ALSO is a binary and its flags, split on purpose
  [ -z "$also" ] || readers "round $round (also):" $also
done
[ "$loader" = 1 ] || exit 0
loader_bench() { cold; "$python" "$(dirname "$0")/dataset_loader_bench.py" "$@"; }
for round in $(seq "${LOADER_ROUNDS:-1}"); do
  echo "DataLoader round $round:"
  loader_bench files "$dir/loose" "$workers"
  loader_bench tensorfleet bench "$workers" "$dir/cache"
  loader_bench tensorfleet-batched bench "$workers" "$dir/cache"
  # No worker processes: the reader's own threads read ahead.
  loader_bench tensorfleet bench 0 "$dir/cache"
  loader_bench tensorfleet-batched bench 0 "$dir/cache"
done
