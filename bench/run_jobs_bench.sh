#!/usr/bin/env bash
# Managed jobs end to end on this machine: submit-to-start latency of trivial jobs on a real
# server and worker (one after another, then a batch), the bare cost of starting a process, and
# recovery after kill -9 of a worker for two heartbeat timeouts and two checkpoint sync
# intervals. About 3 minutes.
#
#   bench/run_jobs_bench.sh [BINARY] [-- options of bench/jobs_bench.py]
#
# BINARY defaults to build/src/tensorfleet. The servers use SQLite in a temporary directory,
# removed afterwards unless KEEP=1 (then it is printed, with every server and worker log).
# Results: a table on stdout, and JSON lines appended to $JSON (default: jobs_bench.jsonl in the
# build directory that holds BINARY).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tf_bin=build/src/tensorfleet
if [ "$#" -gt 0 ] && [ "$1" != "--" ]; then tf_bin=$1; shift; fi
[ "${1:-}" = "--" ] && shift
[ -x "$tf_bin" ] || { echo "run_jobs_bench: no tensorfleet binary at $tf_bin" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/tf-jobs-bench.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  trap 'echo "kept $dir"' EXIT
else
  trap 'rm -rf "$dir"' EXIT
fi
json=${JSON:-$(dirname "$(dirname "$tf_bin")")/jobs_bench.jsonl}

echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))," \
     "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
echo "commit:  $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
# The 1-minute load average every 10 s: the machine may be shared, and the numbers say so.
( while sleep 10; do cut -d' ' -f1 /proc/loadavg; done ) >"$dir/load" &
sampler=$!
python3 "$here/jobs_bench.py" --binary "$tf_bin" --dir "$dir" --json "$json" "$@"
kill "$sampler"
echo "load during: $(sort -n "$dir/load" | sed -n '1p;$p' | paste -sd- -) (1-minute average," \
     "sampled every 10 s); took $(( $(date +%s) - start )) s; JSON lines in $json"
