#!/usr/bin/env bash
# Dataset streaming (docs/benchmarks.md, "Dataset streaming"): the reader's samples/s and MB/s
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
set -euo pipefail
build=${1:-build}
samples=${2:-40000}
kib=${3:-8}
workers=${4:-4}
dir=$(mktemp -d "${5:-/var/tmp}/tf-dataset-bench.XXXXXX")
tf_bin="$build/src/tensorfleet"
python=/usr/bin/python3
export PYTHONPATH="$build/python"
export TENSORFLEET_HOME="$dir/data"
mkdir -p "$dir/data"
"$tf_bin" up --port 0 2>"$dir/server.log" &
pid=$!
trap 'kill -TERM $pid; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -s "$dir/data/url" ] && break; sleep 0.1; done
export TENSORFLEET_SERVER_URL=$(cat "$dir/data/url")
export TENSORFLEET_TOKEN=$(cat "$dir/data/admin-token")

cold() { sync; if [ "$(id -u)" -eq 0 ]; then echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; fi; }
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

echo "== $samples samples of $kib KiB, $workers workers, data in $dir ($(df --output=source "$dir" | tail -1))"
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

# Warm the shard cache once (downloads), then measure reading from it.
"$tf_bin" dataset read bench --workers "$workers" --cache-dir "$dir/cache" 2>&1 | sed 's/^/download+read: /'
bytes=$(du -cb "$dir"/cache/*.tfs | tail -1 | cut -f1)
cold
raw=$(seconds cat "$dir"/cache/*.tfs)
echo "raw read (cat of the $(ls "$dir"/cache/*.tfs | wc -l) cached shard files): $(echo "scale=1; $bytes / 1000000 / $raw" | bc) MB/s"
cold
"$tf_bin" dataset read bench --workers 1 --cache-dir "$dir/cache" 2>&1 | sed 's/^/one reader, 1 worker: /'
cold
"$tf_bin" dataset read bench --workers "$workers" --cache-dir "$dir/cache" 2>&1 | sed "s/^/one reader, $workers workers: /"
cold
start=$(date +%s.%N)
ranks=()
for r in 0 1 2 3; do
  "$tf_bin" dataset read bench --rank $r --world-size 4 --workers "$workers" --cache-dir "$dir/cache" 2>"$dir/rank$r.log" &
  ranks+=($!)
done
wait "${ranks[@]}"
end=$(date +%s.%N)
for r in 0 1 2 3; do sed "s/^/4 ranks, rank $r: /" "$dir/rank$r.log"; done
echo "4 ranks together: $(echo "scale=0; $samples / ($end - $start)" | bc) samples/s, $(echo "scale=1; $samples * $kib * 1024 / 1000000 / ($end - $start)" | bc) MB/s"
cold
"$python" "$(dirname "$0")/dataset_loader_bench.py" files "$dir/loose" "$workers"
cold
"$python" "$(dirname "$0")/dataset_loader_bench.py" tensorfleet bench "$workers" "$dir/cache"
cold
"$python" "$(dirname "$0")/dataset_loader_bench.py" tensorfleet-batched bench "$workers" "$dir/cache"
# What docs/datasets.md recommends: no worker processes, the reader's own threads reading ahead.
cold
"$python" "$(dirname "$0")/dataset_loader_bench.py" tensorfleet bench 0 "$dir/cache"
cold
"$python" "$(dirname "$0")/dataset_loader_bench.py" tensorfleet-batched bench 0 "$dir/cache"
