#!/usr/bin/env bash
# Formats every C++ file of the project in place, as .clang-format says (what scripts/lint.sh
# checks). Usage: scripts/format.sh [files...]   (every tracked C++ file by default)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -gt 0 ]; then
  clang-format -i "$@"
else
  git ls-files -z -- 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'bench/*.h' \
    'fuzz/*.cc' 'fuzz/*.h' 'python/*.cc' 'python/*.h' 'tools/*.cc' 'tools/*.h' |
    xargs -0 clang-format -i
fi
