#!/usr/bin/env bash
# The checks that need no test run:
#   1. clang-format: every C++ file under src/, tests/, bench/, fuzz/, python/ and tools/ as
#      .clang-format says (scripts/format.sh rewrites them);
#   2. clang-tidy (.clang-tidy's checks, findings as errors) on the C++ files changed since
#      TENSORFLEET_TIDY_BASE (default: the commit before HEAD), plus uncommitted changes; it
#      reads build/compile_commands.json, so it runs after scripts/build.sh has configured (the
#      fuzzers, built apart in build-fuzz/ with flags of their own, are left out).
# Usage: scripts/lint.sh [format|tidy]   (both by default)
#   TENSORFLEET_TIDY_BASE=origin/main scripts/lint.sh tidy   # everything a branch changes
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-all}
status=0

cxx_files() { git ls-files -- 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'bench/*.h' \
  'fuzz/*.cc' 'fuzz/*.h' 'python/*.cc' 'python/*.h' 'tools/*.cc' 'tools/*.h'; }

if [ "$what" = all ] || [ "$what" = format ]; then
  echo "== lint: clang-format"
  unformatted=()
  while IFS= read -r f; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
  done < <(cxx_files)
  if [ "${#unformatted[@]}" -gt 0 ]; then
    echo "lint: ${#unformatted[@]} file(s) not formatted (scripts/format.sh fixes them):"
    printf '  %s\n' "${unformatted[@]}"
    clang-format --dry-run -Werror "${unformatted[0]}" 2>&1 | head -20 || true
    status=1
  else
    echo "lint: every C++ file is formatted"
  fi
fi

if [ "$what" = all ] || [ "$what" = tidy ]; then
  echo "== lint: clang-tidy"
  base=${TENSORFLEET_TIDY_BASE:-HEAD~1}
  if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
    base=$(git hash-object -t tree /dev/null)  # a first commit: every file is new
  fi
  if [ ! -f build/compile_commands.json ]; then
    echo "lint: build/compile_commands.json is missing: run scripts/build.sh first" >&2
    exit 2
  fi
  mapfile -t changed < <({ git diff --name-only --diff-filter=d "$base" -- ; git ls-files -o --exclude-standard; } |
    grep -E '^(src|tests|bench|python|tools)/.*\.cc$' | sort -u)
  if [ "${#changed[@]}" -eq 0 ]; then
    echo "lint: no C++ source changed since $base"
  else
    echo "lint: clang-tidy on ${#changed[@]} file(s) changed since $base"
    # The build's flags are g++'s: clang ignores the warning options it does not know. With
    # unity builds the compile database names the unity files, so clang-tidy takes each file's
    # flags from a neighbour's: libpq's headers, which only the store's PostgreSQL files use,
    # are added here.
    extra=()
    pg_include=$(pg_config --includedir 2>/dev/null || true)
    [ -n "$pg_include" ] && extra+=("--extra-arg=-isystem$pg_include")
    for f in "${changed[@]}"; do
      if ! clang-tidy -p build --quiet --warnings-as-errors='*' \
          --extra-arg=-Wno-unknown-warning-option --extra-arg=-DBOOST_ASIO_HAS_CO_AWAIT=1 \
          "${extra[@]}" "$f" 2>/dev/null; then
        echo "lint: clang-tidy: findings in $f"
        status=1
      fi
    done
  fi
fi

exit $status
