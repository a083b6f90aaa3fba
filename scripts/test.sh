#!/usr/bin/env bash
# Every test: installs what is needed, checks the formatting, builds with warnings as errors,
# starts a throw-away PostgreSQL server, and runs
#   1. the C++ test suite (ctest: unit, store contract on SQLite and PostgreSQL, end to end,
#      reliability, each benchmark at a tiny size),
#   2. clang-tidy on the C++ files the last commit changed,
#   3. the unit and contract tests again under AddressSanitizer and UndefinedBehaviorSanitizer,
#      and the concurrency suites under ThreadSanitizer (scripts/sanitize.sh),
#   4. the fuzzers (request parsing; engine files and tokenizer; ...) for a bounded time each.
# Exits non-zero if anything fails. CI runs exactly this (.ci/run). Each step prints how long it
# took, and the whole run its total.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
step() {
  echo "== $1 (at $(((SECONDS - started) / 60))m$(((SECONDS - started) % 60))s)"
}

step "install"
scripts/install-deps.sh
step "format"
scripts/lint.sh format
step "build"
TENSORFLEET_WERROR=ON scripts/build.sh
step "ctest (SQLite and PostgreSQL)"
scripts/with-postgres.sh ctest --test-dir build --output-on-failure --timeout 600
step "clang-tidy"
scripts/lint.sh tidy
step "sanitizers: address and undefined behaviour"
TENSORFLEET_WERROR=ON scripts/with-postgres.sh scripts/sanitize.sh asan
step "sanitizers: threads"
TENSORFLEET_WERROR=ON scripts/with-postgres.sh scripts/sanitize.sh tsan
step "fuzzing"
scripts/fuzz.sh "${TENSORFLEET_FUZZ_SECONDS:-30}"
step "done"
