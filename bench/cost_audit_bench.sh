#!/usr/bin/env bash
# The bill-audit benchmark: generates synthetic AWS bills (legacy CUR CSV) at two sizes, then on
# one core (taskset -c 0) runs `tensorfleet cost audit` on each and, beside it, pandas reading
# the same file and computing the same per-instance-type effective rates
# (bench/cost_audit_pandas.py). Measures rows/s and peak RSS (/usr/bin/time -v), checks that both
# computed the same rates, and prints a table. Targets (DESIGN.md): >= 1M rows/s on one core,
# >= 10x pandas, memory flat in file size.
#
# Usage: bench/cost_audit_bench.sh [small_rows large_rows]   (default 2500000 5000000)
#   TENSORFLEET_BIN  the binary (default build/src/tensorfleet, built if missing)
#   BENCH_DIR        where the bills go (default a temporary folder, removed at the end;
#                    the large bill is ~2.3 GB)
#   BENCH_GZIP=1     also audit a gzip copy of the large bill, twice: with the inflater the
#                    binary chose (ISA-L's igzip when the build found libisal, else zlib) and
#                    with zlib's, forced by TF_GZIP=zlib in the environment
# Run it on a quiet machine: it reports the load average before it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
small=${1:-2500000}
large=${2:-5000000}
bin=${TENSORFLEET_BIN:-build/src/tensorfleet}

# pandas is only the benchmark's peer, so it is installed here, not by install-deps.sh.
if ! /usr/bin/python3 -c 'import pandas' 2>/dev/null; then
  echo "bench: installing python3-pandas"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    python3-pandas >/dev/null
fi
[ -x /usr/bin/time ] || { echo "bench: needs /usr/bin/time (package 'time')"; exit 1; }
[ -x "$bin" ] || scripts/build.sh tensorfleet

work=${BENCH_DIR:-$(mktemp -d /tmp/tensorfleet-cost-bench.XXXXXX)}
mkdir -p "$work"
[ -z "${BENCH_DIR:-}" ] && trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tensorfleet: $bin; pandas $(/usr/bin/python3 -c 'import pandas; print(pandas.__version__)')"

# Runs a command on core 0 under /usr/bin/time -v; sets secs and rss_mb.
measure() {
  local log="$work/time.log"
  /usr/bin/time -v taskset -c 0 "$@" >"$work/out.txt" 2>"$log" || {
    local rc=$?
    # tensorfleet cost audit exits 1 when it has findings; anything else is a failure.
    if [ "$rc" -ne 1 ]; then cat "$log"; exit 1; fi
  }
  local wall
  wall=$(grep 'Elapsed (wall clock)' "$log" | awk '{print $NF}')
  secs=$(echo "$wall" | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  rss_mb=$(grep 'Maximum resident set size' "$log" | awk '{printf "%.0f", $NF / 1024}')
}

results=()
for rows in "$small" "$large"; do
  bill="$work/bill-$rows.csv"
  [ -s "$bill" ] || "$bin" cost generate-bill --rows "$rows" --out "$bill" >/dev/null
  size_mb=$(du -m "$bill" | cut -f1)
  cat "$bill" >/dev/null  # both read from the page cache, not the disk

  measure "$bin" cost audit "$bill" --json
  tf_secs=$secs tf_rss=$rss_mb
  cp "$work/out.txt" "$work/tf-$rows.json"

  measure /usr/bin/python3 bench/cost_audit_pandas.py "$bill" "$work/pandas-$rows.csv"
  pd_secs=$secs pd_rss=$rss_mb

  # Same rates from both, to the cent.
  /usr/bin/python3 - "$work/tf-$rows.json" "$work/pandas-$rows.csv" <<'PY'
import csv, json, sys
tf = {(r["instance_type"], r["region"]): r for r in json.load(open(sys.argv[1]))["effective_rates"]}
pd = {(r["instance_type"], r["region"]): r for r in csv.DictReader(open(sys.argv[2]))}
assert tf.keys() == pd.keys(), (sorted(tf.keys() ^ pd.keys()))
for k in tf:
    assert abs(tf[k]["usd"] - float(pd[k]["usd"])) < 0.01, (k, tf[k]["usd"], pd[k]["usd"])
    assert abs(tf[k]["hours"] - float(pd[k]["hours"])) < 1e-6, k
print(f"  {len(tf)} instance types: same effective rates from both")
PY
  results+=("$rows $size_mb $tf_secs $tf_rss $pd_secs $pd_rss")
done

if [ "${BENCH_GZIP:-0}" = 1 ]; then
  gz="$work/bill-$large.csv.gz"
  [ -s "$gz" ] || gzip -1 -c "$work/bill-$large.csv" >"$gz"
  gz_mb=$(du -m "$gz" | cut -f1)
  chosen=zlib
  if ldd "$bin" | grep libisal >/dev/null; then chosen=igzip; fi
  inflaters=("$chosen")
  [ "$chosen" = zlib ] || inflaters+=(zlib)
  gz_lines=()
  for inflater in "${inflaters[@]}"; do
    if [ "$inflater" = zlib ]; then
      measure env TF_GZIP=zlib "$bin" cost audit "$gz" --json
    else
      measure "$bin" cost audit "$gz" --json
    fi
    cp "$work/out.txt" "$work/tf-gz-$inflater.json"
    gz_lines+=("$(awk -v i="$inflater" -v r="$large" -v s="$secs" -v m="$rss_mb" -v mb="$gz_mb" \
      'BEGIN { printf "| %s | %d | %d | %.2f | %.2fM | %d |", i, r, mb, s, r/s/1e6, m }')")
    [ "$inflater" = zlib ] && zlib_secs=$secs || chosen_secs=$secs
  done
  if [ "$chosen" != zlib ]; then
    cmp -s "$work/tf-gz-$chosen.json" "$work/tf-gz-zlib.json" ||
      { echo "bench: the two inflaters' audits differ"; exit 1; }
    echo "  gzip: the same audit from $chosen and zlib"
  fi
fi

echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n| rows | CSV MB | tensorfleet s | rows/s | peak RSS MB | pandas s | pandas rows/s | pandas peak RSS MB | speed-up |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for r in "${results[@]}"; do
  read -r rows size tf_s tf_m pd_s pd_m <<<"$r"
  awk -v rows="$rows" -v size="$size" -v ts="$tf_s" -v tm="$tf_m" -v ps="$pd_s" -v pm="$pd_m" \
    'BEGIN { printf "| %d | %d | %.2f | %.2fM | %d | %.1f | %.0fk | %d | %.1fx |\n",
             rows, size, ts, rows/ts/1e6, tm, ps, rows/ps/1e3, pm, ps/ts }'
done
if [ "${BENCH_GZIP:-0}" = 1 ]; then
  printf '\n| gzip inflater | rows | gzip MB | tensorfleet s | rows/s | peak RSS MB |\n'
  printf '|---|---:|---:|---:|---:|---:|\n'
  printf '%s\n' "${gz_lines[@]}"
  if [ "$chosen" != zlib ]; then
    awk -v z="$zlib_secs" -v c="$chosen_secs" -v i="$chosen" \
      'BEGIN { printf "%s is %.2fx zlib on this file\n", i, z/c }'
  fi
fi
exit 0
