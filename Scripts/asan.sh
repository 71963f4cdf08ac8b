#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer (traits off).
#
#   Scripts/asan.sh                        every test, one process per test target (as test.sh)
#   Scripts/asan.sh --filter KilnStorage   arguments go to `swift test`
#   Scripts/asan.sh --warnings-as-errors   also fails the build on any warning (what CI runs)
#   Scripts/asan.sh --all-traits           with every trait on (the PostgreSQL, AsyncHTTPClient
#                                          and OpenAPI code and their suites)
#
# Traits are off by default: every line of Kiln that handles raw memory (Storage's files, SQLite
# and checksums, the HTTP cache's codec, the locks) builds without one, and building swift-nio,
# AsyncHTTPClient and PostgresNIO under ASan too doubles the run. Builds in .build-asan
# (.build-asan-traits with --all-traits). Any ASan report (a use after free, an overflow, a
# double free) fails the run; the report is printed. Leak detection is off: Swift's runtime
# keeps metadata caches and GCD keeps its threads for the life of the process, which
# LeakSanitizer would report as leaks in every test.
#
# Environment:
#   KILN_ASAN_TIMEOUT   seconds each test target (or a filtered run) may take (default 2400)
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

build_flags=""
flags="--sanitize=address --scratch-path .build-asan"
while [[ $# -gt 0 ]]; do
  case $1 in
    --warnings-as-errors) build_flags="-Xswiftc -warnings-as-errors"; shift ;;
    --all-traits) flags="--sanitize=address --scratch-path .build-asan-traits --enable-all-traits"; shift ;;
    *) break ;;
  esac
done
kiln_run_sanitized --flags "$flags" \
  --build-flags "$build_flags" --options "ASAN_OPTIONS=detect_leaks=0 halt_on_error=1 ${ASAN_OPTIONS:-}" \
  --timeout "${KILN_ASAN_TIMEOUT:-2400}" --show "^(✘|✔ Test run|━ Test run|==[0-9]+==ERROR|SUMMARY: AddressSanitizer)" \
  --report "ERROR: AddressSanitizer" --context "-B2 -A60" --found "AddressSanitizer found a memory error" \
  --suites "$kiln_sanitizer_runs" \
  -- "$@"
