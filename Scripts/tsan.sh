#!/usr/bin/env bash
# Runs the test suite under Thread Sanitizer.
#
#   Scripts/tsan.sh                      every test
#   Scripts/tsan.sh --filter KilnQuery   arguments go to `swift test`
#
# Builds in .build-tsan with -DKILN_TSAN, which makes Kiln's locks (KilnMutex) visible to
# TSan: the standard library's Mutex is futex-based on Linux, and TSan would otherwise
# report every critical section as a race. Any TSan report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

flags=(--sanitize=thread --scratch-path .build-tsan -Xswiftc -DKILN_TSAN)
swift build --build-tests "${flags[@]}"
log=$(mktemp)
source Scripts/lib/postgres.sh
trap 'rm -f "$log"; kiln_postgres_stop' EXIT
kiln_postgres_start || true
# halt_on_error stops at the first report with a non-zero status, so a race can never
# pass silently inside an otherwise green run.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  timeout --kill-after=30 "${KILN_TSAN_TIMEOUT:-2400}" \
  swift test --skip-build "${flags[@]}" "$@" 2>&1 | tee "$log" | grep -E "^(✘|✔ Test run|ThreadSanitizer|WARNING: ThreadSanitizer|SUMMARY)" || true
status=${PIPESTATUS[0]}
if grep -q "WARNING: ThreadSanitizer" "$log"; then
  grep -A40 -m1 "WARNING: ThreadSanitizer" "$log"
  echo "Thread Sanitizer found a race"
  exit 1
fi
exit "$status"
