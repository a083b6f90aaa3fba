#!/usr/bin/env bash
# Configures and builds tensorfleet into build/ (RelWithDebInfo: -O2 with line tables, Ninja).
# Usage: scripts/build.sh [ninja targets...]     e.g. scripts/build.sh tensorfleet
# CI builds with warnings as errors (TENSORFLEET_WERROR=ON, as scripts/test.sh sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh
jobs=${TENSORFLEET_BUILD_JOBS:-$(nproc)}
werror=${TENSORFLEET_WERROR:-}
if [ ! -f build/build.ninja ] ||
   { [ -n "$werror" ] && ! grep -qx "TF_WERROR:BOOL=$werror" build/CMakeCache.txt; }; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${werror:+-DTF_WERROR=$werror} >/dev/null
fi
ninja -C build -j "$jobs" "$@"
