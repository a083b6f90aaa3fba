#!/usr/bin/env bash
# Builds the tests with sanitizers, each kind in a build folder of its own, and runs them:
#
#   asan   AddressSanitizer and UndefinedBehaviorSanitizer, with g++ (the compiler of the
#          shipped binary, whose coroutine frames are the ones to check): every unit and
#          contract test, in build-asan/
#   tsan   ThreadSanitizer, with clang++ (which also checks the thread-safety annotations,
#          -Wthread-safety): the concurrency suites (base: async; http: server and client; the
#          store contract; api; jobs, in process with workers), in build-tsan/
#
# Usage: scripts/sanitize.sh asan|tsan [ctest args...]
# Run it beside PostgreSQL (scripts/with-postgres.sh scripts/sanitize.sh asan) for the contract
# tests on both back ends; without it they run on SQLite and say why PostgreSQL was skipped.
# A finding fails the test that made it; the report is in ctest's output.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh

kind=${1:-}
shift || true
case "$kind" in
  asan)
    dir=build-asan
    compiler=g++
    sanitize=address,undefined
    targets=(unit_tests contract_tests)
    select=(-L 'unit|contract')
    # -O0: g++'s UndefinedBehaviorSanitizer at -O1 tripled the compile of the heaviest files
    # (src/http/server.cc: 125 s against 42 s at -O0, 17 s unsanitized); the cold build of these
    # tests took 25 minutes on 2 cores, 15 at -O0. The tests run slower, so they run in parallel:
    # the unit tests need no lock, and the contract tests share PostgreSQL's.
    optimize=-O0
    parallel=(-j "$(nproc)")
    # Leaks are reported too: a test that leaks fails.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
    ;;
  tsan)
    dir=build-tsan
    compiler=clang++
    sanitize=thread
    targets=(base_unit_tests http_unit_tests store_contract_tests api_unit_tests jobs_unit_tests
             jobs_e2e_tests)
    select=(-R '^(base|http|store|api|jobs)\.' -L 'unit|contract|e2e')
    # -O1: ThreadSanitizer is slow at -O0, and these suites wait on each other's threads.
    optimize=-O1
    parallel=()
    export TSAN_OPTIONS="${TSAN_OPTIONS:-second_deadlock_stack=1}"
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [ctest args...]" >&2
    exit 2
    ;;
esac

werror=${TENSORFLEET_WERROR:-}
if [ ! -f "$dir/build.ninja" ] ||
   ! grep -q "^CMAKE_CXX_FLAGS_RELWITHDEBINFO:STRING=$optimize " "$dir/CMakeCache.txt" ||
   { [ -n "$werror" ] && ! grep -qx "TF_WERROR:BOOL=$werror" "$dir/CMakeCache.txt"; }; then
  # Line tables and assertions on: readable reports, and a quicker build than -O2.
  # No benchmarks, no Python module, no jemalloc (the sanitizers bring their own allocator).
  CXX=$compiler cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$optimize -g1" -DTF_SANITIZE="$sanitize" \
    -DTF_WERROR="${werror:-OFF}" -DTF_BUILD_BENCH=OFF -DTF_BUILD_PYTHON=OFF \
    -DTENSORFLEET_JEMALLOC=OFF >/dev/null
fi
echo "== sanitize $kind: building ${targets[*]} in $dir"
ninja -C "$dir" -j "${TENSORFLEET_BUILD_JOBS:-$(nproc)}" "${targets[@]}"
echo "== sanitize $kind: running"
ctest --test-dir "$dir" "${select[@]}" "${parallel[@]}" --output-on-failure --timeout 900 "$@"
