#!/usr/bin/env bash
# The gateway's overhead beside nginx as a reverse proxy (docs/benchmarks/endpoints.md).
#
# One trivial upstream (nginx answering an OpenAI-shaped chat completion from memory) runs as the
# replica of a tensorfleet endpoint, started by a real `tensorfleet up` like any command engine.
# The same requests then go three ways, one after the other in this one run:
#   direct   to the upstream itself (the floor),
#   nginx    through nginx as a reverse proxy to it (keep-alive upstream connections),
#   gateway  through tensorfleet's /openai/v1/chat/completions (token checked, endpoint looked up,
#            replica chosen, request relayed).
# For each: the most requests per second (wrk, 2 threads, 32 connections, closed loop), and the
# latency percentiles at a fixed 1,000 requests/s (http_latency_bench, open loop, 16
# connections). Added latency = a proxy's percentile minus direct's. Last, the server's own
# ceiling: the most requests/s it answers at all (GET /healthz), which no route of it can pass.
#
#   bench/run_gateway_bench.sh [SECONDS]     (default 10 per measurement)
# Needs nginx and wrk (Debian's nginx-light and wrk: installed here if missing) and a built tree.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
for tool in nginx wrk; do
  command -v "$tool" >/dev/null || {
    echo "installing nginx-light and wrk (Debian)"
    sudo_cmd=$([ "$(id -u)" = 0 ] || echo sudo)
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
      nginx-light wrk >/dev/null
  }
done
scripts/build.sh tensorfleet http_latency_bench >/dev/null
tf_bin="$PWD/build/src/tensorfleet"
probe="$PWD/build/bench/http_latency_bench"
bench_dir="$PWD/bench/gateway"

work=$(mktemp -d /tmp/tensorfleet-gateway-bench.XXXXXX)
server_pid=""
proxy_pid=""
cleanup() {
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null && wait "$proxy_pid" 2>/dev/null
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
export TENSORFLEET_HOME="$work/tf"
"$tf_bin" up --port 0 --grace 5s 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/tf/url" ] && break; sleep 0.1; done
url=$(cat "$work/tf/url")
token=$(cat "$work/tf/admin-token")

cat >"$work/bench.yaml" <<SPEC
name: bench
model: /unused
engine:
  command: sed -e "s|@DIR@|\$PWD|g" -e "s|@LISTEN@|\$TENSORFLEET_MASTER_ADDR:\$TENSORFLEET_MASTER_PORT|" $bench_dir/upstream.conf.in >nginx.conf && exec nginx -c "\$PWD/nginx.conf"
  readiness: {path: /health, timeout: 1m}
resources: {cpus: 1}
replicas: {min: 1, max: 1}
SPEC
"$tf_bin" endpoint up "$work/bench.yaml" >/dev/null
upstream=""
for _ in $(seq 300); do
  upstream=$("$tf_bin" --json endpoint describe bench | python3 -c '
import json, sys
r = [x for x in json.load(sys.stdin)["replicas"] if x["state"] == "ready"]
print(r[0]["address"] if r else "")')
  [ -n "$upstream" ] && break
  sleep 0.2
done
[ -n "$upstream" ] || { echo "the upstream replica did not become ready"; cat "$work/server.log"; exit 1; }

proxy_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/proxy"
sed -e "s|@DIR@|$work/proxy|g" -e "s|@LISTEN@|127.0.0.1:$proxy_port|" -e "s|@UPSTREAM@|$upstream|" \
  "$bench_dir/proxy.conf.in" >"$work/proxy/nginx.conf"
nginx -c "$work/proxy/nginx.conf" 2>"$work/proxy.log" &
proxy_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$proxy_port/health" && break; sleep 0.1; done

body='{"model":"bench","messages":[{"role":"user","content":"hi"}],"max_tokens":1}'
declare -A target=(
  [direct]="http://$upstream/v1/chat/completions"
  [nginx]="http://127.0.0.1:$proxy_port/v1/chat/completions"
  [gateway]="$url/openai/v1/chat/completions")
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "upstream: nginx $(nginx -v 2>&1 | cut -d/ -f2) at $upstream, the endpoint's replica; ${seconds}s per measurement"
results="$work/results.jsonl"
for name in direct nginx gateway; do
  auth=""
  [ "$name" = gateway ] && auth="$token"
  # Warm the connections, then the closed-loop maximum.
  BENCH_TOKEN="$auth" wrk -t2 -c32 -d2s -s "$bench_dir/post.lua" "${target[$name]}" >/dev/null
  rps=$(BENCH_TOKEN="$auth" wrk -t2 -c32 -d"${seconds}s" -s "$bench_dir/post.lua" "${target[$name]}" |
    awk '/Requests\/sec/ {print $2}')
  header=()
  [ -n "$auth" ] && header=(--header "Authorization: Bearer $auth")
  latency=$("$probe" --url "${target[$name]}" --body "$body" "${header[@]}" --rate 1000 \
    --seconds "$seconds" --connections 16)
  echo "{\"name\": \"$name\", \"max_rps\": $rps, \"at_1000\": $latency}" >>"$results"
done
# The server's own ceiling: the most requests/s it answers at all (GET /healthz: no token, no
# upstream), on the same machine with the same load generator.
wrk -t2 -c32 -d2s "$url/healthz" >/dev/null
floor=$(wrk -t2 -c32 -d"${seconds}s" "$url/healthz" | awk '/Requests\/sec/ {print $2}')
python3 - "$results" "$floor" <<'PY'
import json, sys
rows = {r["name"]: r for r in map(json.loads, open(sys.argv[1]))}
d = rows["direct"]["at_1000"]
print()
print("%-8s %12s %9s %9s %9s %11s %11s %7s" % ("path", "max req/s", "p50 ms", "p99 ms", "p99.9 ms",
                                           "+p50 ms", "+p99 ms", "errors"))
for name in ("direct", "nginx", "gateway"):
    r = rows[name]
    a = r["at_1000"]
    print("%-8s %12.0f %9.3f %9.3f %9.3f %11s %11s %7d" % (
        name, r["max_rps"], a["p50_ms"], a["p99_ms"], a["p999_ms"],
        "-" if name == "direct" else "%.3f" % (a["p50_ms"] - d["p50_ms"]),
        "-" if name == "direct" else "%.3f" % (a["p99_ms"] - d["p99_ms"]),
        a["errors"] + a["non_2xx"]))
g, n = rows["gateway"], rows["nginx"]
print()
print("gateway / nginx, max requests/s: %.2f" % (g["max_rps"] / n["max_rps"]))
floor = float(sys.argv[2])
print("the server alone (GET /healthz): %.0f requests/s; the gateway passes %.2f of that" % (
    floor, g["max_rps"] / floor))
print("gateway p99 added at 1,000 requests/s: %.3f ms (target <= 1 ms); nginx's: %.3f ms" % (
    g["at_1000"]["p99_ms"] - d["p99_ms"], n["at_1000"]["p99_ms"] - d["p99_ms"]))
PY
