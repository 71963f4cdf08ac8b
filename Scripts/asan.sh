#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer (all traits on).
#
#   Scripts/asan.sh                        every test, one process per test target (as test.sh)
#   Scripts/asan.sh --filter KilnStorage   arguments go to `swift test`
#   Scripts/asan.sh --warnings-as-errors   also fails the build on any warning
#
# Builds in .build-asan. Any ASan report (a use after free, an overflow, a double free) fails
# the run; the report is printed. Leak detection is off: Swift's runtime keeps metadata
# caches and GCD keeps its threads for the life of the process, which LeakSanitizer would
# report as leaks in every test.
#
# Environment:
#   KILN_ASAN_TIMEOUT   seconds each test target (or a filtered run) may take (default 2400)
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

build_flags=""
if [[ ${1:-} == --warnings-as-errors ]]; then
  build_flags="-Xswiftc -warnings-as-errors"
  shift
fi
kiln_run_sanitized --flags "--sanitize=address --scratch-path .build-asan --enable-all-traits" \
  --build-flags "$build_flags" --options "ASAN_OPTIONS=detect_leaks=0 halt_on_error=1 ${ASAN_OPTIONS:-}" \
  --timeout "${KILN_ASAN_TIMEOUT:-2400}" --show "^(✘|✔ Test run|━ Test run|==[0-9]+==ERROR|SUMMARY: AddressSanitizer)" \
  --report "ERROR: AddressSanitizer" --context "-B2 -A60" --found "AddressSanitizer found a memory error" \
  --suites "$kiln_sanitizer_runs" \
  -- "$@"
