#!/usr/bin/env bash
# The batched DataLoader of two builds of the Python binding side by side (A/B, e.g. main's
# build/python against a change's), with the loose-files DataLoader in every round
# (docs/benchmarks/datasets.md).
#
#   bench/dataset_loader_ab.sh PYTHONPATH_A PYTHONPATH_B [ROUNDS] [SAMPLES] [SAMPLE_KIB] [WORKERS]
#
# Defaults: 6 rounds, 100000 samples of 8 KiB, 4 workers. One server (TENSORFLEET, default
# build/src/tensorfleet) holds the samples as a dataset packed from lines of text; the same
# number of samples of the same size are written as loose files. Each round runs A and B (the
# order alternating round by round) and then the loose files, each with
# bench/dataset_loader_bench.py; run as root, the page cache is dropped before each step.
set -euo pipefail
path_a=$1
path_b=$2
rounds=${3:-6}
samples=${4:-100000}
kib=${5:-8}
workers=${6:-4}
here=$(cd "$(dirname "$0")" && pwd)
tf_bin=${TENSORFLEET:-$here/../build/src/tensorfleet}
python=/usr/bin/python3
dir=$(mktemp -d /var/tmp/tf-loader-ab.XXXXXX)
. "$(dirname "$0")/start_server.sh"
start_server "$tf_bin" "$dir"

"$python" "$(dirname "$0")/text_samples.py" "$dir/samples.txt" "$samples" "$kib" --loose "$dir/loose"
"$tf_bin" dataset create bench --from "$dir/samples.txt" --format text --shard-size 64MiB
rm "$dir/samples.txt"
# Downloaded into the cache once; every step below reads it from there.
"$tf_bin" dataset read bench --cache-dir "$dir/cache" 2>&1 | sed "s/^/download+read: /"

cold() { sync; if [ "$(id -u)" -eq 0 ]; then echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; fi; }
loader() {
  cold
  "$python" "$here/dataset_loader_bench.py" "$@" 2>&1 | grep -v -i -e warn -e '^ *warnings\.'
}
for round in $(seq "$rounds"); do
  order="A B"
  [ $((round % 2)) -eq 0 ] && order="B A"
  for which in $order; do
    path=$path_a
    [ "$which" = B ] && path=$path_b
    echo "round $round $which: $(PYTHONPATH=$path loader tensorfleet-batched bench "$workers" "$dir/cache")"
  done
  echo "round $round loose: $(loader files "$dir/loose" "$workers")"
done
