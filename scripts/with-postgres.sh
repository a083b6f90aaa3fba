#!/usr/bin/env bash
# Runs a command beside a throw-away PostgreSQL server.
#
#   scripts/with-postgres.sh COMMAND [ARGS...]
#
# Creates a fresh cluster in a temporary directory, listening on 127.0.0.1 on a free port (and on a
# unix socket inside that directory), with a database "tensorfleet" owned by a role "tensorfleet"
# that logs in without a password from 127.0.0.1. Then runs COMMAND with, in its environment:
#
#   TENSORFLEET_TEST_POSTGRES_URL  postgresql://tensorfleet@127.0.0.1:PORT/tensorfleet
#   TENSORFLEET_TEST_PGBIN         the PostgreSQL bin directory
#   TENSORFLEET_TEST_PGDATA        the cluster's data directory
#   TENSORFLEET_TEST_PGCTL         a pg_ctl command line for this cluster; append a verb, e.g.
#                                  "$TENSORFLEET_TEST_PGCTL restart -m fast" (it waits until done)
#
# Afterwards (even when COMMAND fails or the script is interrupted) the server is stopped and the
# directory removed. Exits with COMMAND's status. Never touches the system's own clusters: nothing
# outside the temporary directory is written. Runs as root (the server then runs as the "postgres"
# user) or as any other user (the server runs as that user).
#
# TENSORFLEET_PGBIN may name the bin directory; otherwise the newest /usr/lib/postgresql/*/bin.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

pg_bin="${TENSORFLEET_PGBIN:-}"
if [ -z "$pg_bin" ]; then
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
    [ -x "$dir/initdb" ] && pg_bin="$dir"
  done
fi
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
  echo "with-postgres: no PostgreSQL server found (install the 'postgresql' package)" >&2
  exit 2
fi

# The server refuses to run as root: as root, run it as the postgres user.
as_owner=()
owner="$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
  owner=postgres
  as_owner=(runuser -u postgres --)
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/tensorfleet-pg.XXXXXX")"
chmod 700 "$tmp"
chown "$owner" "$tmp"
data="$tmp/data"
log="$tmp/server.log"
started=0

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ "$started" -eq 1 ]; then
    "${as_owner[@]}" "$pg_bin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Prints the server's log and fails.
fail() {
  echo "with-postgres: $1" >&2
  [ -f "$log" ] && sed 's/^/  server: /' "$log" >&2
  exit 2
}

port="$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')"

"${as_owner[@]}" "$pg_bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 \
  --locale=C >"$tmp/initdb.log" 2>&1 || { cat "$tmp/initdb.log" >&2; fail "initdb failed"; }

# In the configuration file rather than on the command line, so that a restart keeps them.
cat >>"$data/postgresql.conf" <<EOF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$tmp'
max_connections = 200
EOF

"${as_owner[@]}" "$pg_bin/pg_ctl" -D "$data" -l "$log" -w -t 60 start >/dev/null \
  || fail "the server did not start"
started=1

"${as_owner[@]}" "$pg_bin/psql" -X -q -h "$tmp" -p "$port" -U postgres -d postgres \
  -v ON_ERROR_STOP=1 \
  -c "CREATE ROLE tensorfleet LOGIN" \
  -c "CREATE DATABASE tensorfleet OWNER tensorfleet" >/dev/null \
  || fail "could not create the tensorfleet role and database"

export TENSORFLEET_TEST_POSTGRES_URL="postgresql://tensorfleet@127.0.0.1:$port/tensorfleet"
export TENSORFLEET_TEST_PGBIN="$pg_bin"
export TENSORFLEET_TEST_PGDATA="$data"
TENSORFLEET_TEST_PGCTL="$pg_bin/pg_ctl -D $data -l $log -w -t 60"
[ "${#as_owner[@]}" -gt 0 ] && TENSORFLEET_TEST_PGCTL="${as_owner[*]} $TENSORFLEET_TEST_PGCTL"
export TENSORFLEET_TEST_PGCTL

set +e
"$@"
status=$?
set -e
exit "$status"
