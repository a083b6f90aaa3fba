# Sourced by the bench scripts: `start_server BINARY DIR` starts `BINARY up` on a free port with
# its data in DIR/data and waits until it has written its URL; when the script exits, the server
# is stopped and DIR removed. It exports TENSORFLEET_HOME, TENSORFLEET_SERVER_URL and
# TENSORFLEET_TOKEN (what the CLI and tensorfleet_data find the server by), and sets `url`,
# `auth` (an Authorization header for curl) and `server_pid`.
start_server() {
  local bin=$1
  bench_dir=$2
  export TENSORFLEET_HOME="$bench_dir/data"
  mkdir -p "$TENSORFLEET_HOME"
  "$bin" up --port 0 2>"$bench_dir/server.log" &
  server_pid=$!
  trap 'kill -TERM $server_pid; wait $server_pid 2>/dev/null; rm -rf "$bench_dir"' EXIT
  for _ in $(seq 100); do [ -s "$TENSORFLEET_HOME/url" ] && break; sleep 0.1; done
  url=$(cat "$TENSORFLEET_HOME/url")
  export TENSORFLEET_SERVER_URL=$url
  export TENSORFLEET_TOKEN
  TENSORFLEET_TOKEN=$(cat "$TENSORFLEET_HOME/admin-token")
  auth="Authorization: Bearer $TENSORFLEET_TOKEN"
}
