# Sourced by the endpoint benchmarks (bench/run_endpoint_*.sh): builds tensorfleet, writes the
# random-weight bench models, starts a server and a worker in a temporary directory (stopped on
# exit), and gives helpers to wait on endpoints and to summarize timings.
#
#   start_platform SIZE...     sets tf, url, token, work, models; writes the models of SIZEs
#   wait_for NAME STATE        a replica of endpoint NAME in STATE ("gone": the endpoint deleted)
#   median < numbers; ms < seconds
#
# Environment: MODELS (default ../bench-models), WORKER_CPUS (the CPUs the worker offers,
# default 4: replicas declare 1 each, and a warm pool needs room beside the serving ones).

tf="$PWD/build/src/tensorfleet"
models=${MODELS:-$(cd .. && pwd)/bench-models}
work=""
server_pid=""
worker_pid=""

stop_platform() {
  [ -n "$worker_pid" ] && kill -TERM "$worker_pid" 2>/dev/null && wait "$worker_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  [ -n "$work" ] && rm -rf "$work"
}

start_platform() {
  scripts/build.sh tensorfleet >/dev/null
  mkdir -p "$models"
  for size in "$@"; do
    /usr/bin/python3 bench/engine/make_random_llama.py --size "$size" --out "$models" --hf-only
  done
  work=$(mktemp -d /tmp/tensorfleet-endpoint-bench.XXXXXX)
  trap stop_platform EXIT
  export TENSORFLEET_HOME="$work/tf"
  "$tf" up --port 0 --grace 5s 2>"$work/server.log" &
  server_pid=$!
  for _ in $(seq 100); do [ -s "$work/tf/url" ] && break; sleep 0.1; done
  url=$(cat "$work/tf/url")
  token=$(cat "$work/tf/admin-token")
  "$tf" worker --cpus "${WORKER_CPUS:-4}" --gpus 0 --worker-dir "$work/worker" 2>"$work/worker.log" &
  worker_pid=$!
}

wait_for() {
  for _ in $(seq 1200); do
    if [ "$2" = gone ]; then
      "$tf" endpoint describe "$1" >/dev/null 2>&1 || return 0
    elif "$tf" --json endpoint describe "$1" | grep -q "\"state\": \"$2\""; then
      return 0
    fi
    sleep 0.1
  done
  echo "endpoint $1: no replica $2 within 2 minutes" >&2
  return 1
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ms() { awk '{printf "%.0f", $1 * 1000}'; }
