#!/usr/bin/env bash
# The edit-compile-test loop: builds what the unit tests need and runs them (seconds, in
# parallel). Extra arguments go to ctest, e.g. scripts/check.sh -R '^engine\.'
# The whole suite is scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh unit_tests
ctest --test-dir build -L unit -j "$(nproc)" --output-on-failure "$@"
