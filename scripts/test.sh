#!/usr/bin/env bash
# Every test: installs what is needed, builds, starts a throw-away PostgreSQL server, and runs
#   1. the C++ test suite (ctest: unit, store contract on SQLite and PostgreSQL, API, reliability),
#   2. the command-line end-to-end test against a real `tensorfleet up`,
#   3. the fuzzers (request parsing; engine files and tokenizer) for a bounded time each.
# Exits non-zero if anything fails. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh

echo "== ctest (SQLite and PostgreSQL)"
scripts/with-postgres.sh ctest --test-dir build --output-on-failure --timeout 600

echo "== fuzzing"
scripts/fuzz.sh "${TENSORFLEET_FUZZ_SECONDS:-60}"
