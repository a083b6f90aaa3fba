#!/usr/bin/env bash
# Configures and builds tensorfleet into build/ (Release with debug info, Ninja).
# Usage: scripts/build.sh [ninja targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TENSORFLEET_BUILD_JOBS:-$(nproc)}
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C build -j "$jobs" "$@"
