#!/usr/bin/env bash
# Runs the test suite under Thread Sanitizer.
#
#   Scripts/tsan.sh                      every test
#   Scripts/tsan.sh --filter KilnQuery   arguments go to `swift test`
#
# Builds in .build-tsan with the Logging, Metrics, Tracing and ServiceLifecycle traits, so
# their stages, reporter and services run under TSan too (AsyncHTTPClient, PostgreSQL and
# OpenAPI stay off: they would add AsyncHTTPClient and PostgresNIO, sanitized, to the longest
# step of CI), and with -DKILN_TSAN, which makes Kiln's locks (KilnMutex) visible to TSan:
# the standard library's Mutex is futex-based on Linux, and TSan would otherwise report
# every critical section as a race. Without arguments each test target runs in a
# process of its own, as under Scripts/asan.sh: every suite at once in one process under
# TSan starved the wire-fault tests' URLSession exchanges past their 1–2 s timeouts. Any
# TSan report fails the run, except the known false positives listed, each with its reason,
# in Scripts/lib/tsan-suppressions.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

# halt_on_error stops at the first report with a non-zero status, so a race can never
# pass silently inside an otherwise green run.
kiln_run_sanitized --flags "--sanitize=thread --scratch-path .build-tsan --traits Logging,Metrics,Tracing,ServiceLifecycle -Xswiftc -DKILN_TSAN" \
  --options "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/Scripts/lib/tsan-suppressions.txt ${TSAN_OPTIONS:-}" \
  --timeout "${KILN_TSAN_TIMEOUT:-2400}" \
  --show "^(✘|✔ Test run|━ Test run|ThreadSanitizer|WARNING: ThreadSanitizer|SUMMARY)" \
  --report "WARNING: ThreadSanitizer" --context "-A40" --found "Thread Sanitizer found a race" \
  --suites "$kiln_sanitizer_runs" -- "$@"
