#!/usr/bin/env bash
# Runs every Kiln test suite: the command the README gives and `.ci/run` calls.
#
#   Scripts/test.sh                 build once (all traits on), then each package's suite,
#                                   then the gateway example's checks (KilnGatewayExample)
#   Scripts/test.sh KilnQuery ...   only the named suites (still builds first)
#
# Prints one line per suite ("KilnCore: 42 passed") and a closing line
# ("N passed, M failed"); exits non-zero when any test fails or a suite cannot run.
# Installs or starts what the suites need, so it passes on a fresh machine: the SQLite headers,
# the PostgreSQL server and wrk from Debian's packages when missing (apt-get, as root or through
# sudo). The gateway example builds its own package in release inside its suite's time limit
# (about 5 minutes on 2 cores the first time).
#
# Environment:
#   KILN_TEST_SCRATCH   build folder (default: .build)
#   KILN_TEST_TIMEOUT   seconds one suite may run before it counts as failed (default 1200)
#   KILN_TEST_VERBOSE=1 print every suite's full output, not only failing ones
set -uo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh

scratch=${KILN_TEST_SCRATCH:-.build}
suite_timeout=${KILN_TEST_TIMEOUT:-1200}
read -ra all_suites <<<"$kiln_test_targets KilnGatewayExample"
suites=("${@:-${all_suites[@]}}")
if [[ $# -eq 0 ]] && ! kiln_check_test_targets; then
  echo "0 passed, 1 failed"
  exit 1
fi
swift_flags=(--scratch-path "$scratch" --enable-all-traits)

kiln_ensure_system_libraries

echo "Building Kiln and its tests (all traits)…"
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
if ! swift build --build-tests "${swift_flags[@]}" >"$build_log" 2>&1; then
  grep -E "error:|warning: .*unhandled|fatal" "$build_log" | head -50
  tail -20 "$build_log"
  echo "build failed"
  echo "0 passed, 1 failed"
  exit 1
fi

reports=$(mktemp -d)
# A throwaway PostgreSQL for the PostgreSQL suites (KILN_POSTGRES_URL); stopped on exit.
source Scripts/lib/postgres.sh
trap 'rm -rf "$reports" "$build_log"; kiln_postgres_stop' EXIT
kiln_postgres_start || true
total_passed=0
total_failed=0

# Reads passed/failed counts from Swift Testing's xUnit report.
count_report() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 0 missing"); sys.exit()
cases = list(root.iter("testcase"))
failed = sum(1 for c in cases if c.find("failure") is not None or c.find("error") is not None)
skipped = sum(1 for c in cases if c.find("skipped") is not None)
print(len(cases) - failed - skipped, failed, "ok")
PY
}

# The gateway example (its own package, Examples/KilnGateway): built in release in its own
# .build, then run.sh --check starts PostgreSQL's tables, an origin, two gateway instances and
# wrk, and checks the targets; each "check …: ok" line counts as a passed test.
run_gateway_example() {
  timeout --kill-after=30 "$suite_timeout" Examples/KilnGateway/run.sh --check --warmup 2 --duration 5 >"$log" 2>&1
  status=$?
  passed=$(grep -c "^check .*: ok" "$log")
  failed=$(grep -c "^check .*: FAILED" "$log")
}

for suite in "${suites[@]}"; do
  module="${suite}Tests"
  log="$reports/$suite.log"
  report="$reports/$suite.xml"
  started=$(date +%s)
  if [[ $suite == KilnGatewayExample ]]; then
    run_gateway_example
  else
    timeout --kill-after=30 "$suite_timeout" \
      swift test --skip-build "${swift_flags[@]}" --filter "^${module}\." --xunit-output "$report" >"$log" 2>&1
    status=$?
    read -r passed failed state < <(count_report "${report%.xml}-swift-testing.xml")
  fi
  elapsed=$(($(date +%s) - started))

  if [[ $status -ne 0 && $failed -eq 0 ]]; then
    # The run failed without a failing test: a crash, a hang past the time limit, or no
    # report at all. Count the suite as one failure so it can never pass silently.
    failed=1
    if [[ $status -eq 124 || $status -eq 137 ]]; then
      note=" (timed out after ${suite_timeout}s)"
    else
      note=" (the test process exited with status $status)"
    fi
  elif [[ $passed -eq 0 && $failed -eq 0 ]]; then
    note=" (no tests yet)"
  else
    note=""
  fi

  if [[ $failed -gt 0 ]]; then
    echo "$suite: $passed passed, $failed failed$note [${elapsed}s]"
    grep -E "✘|error:|Fatal error|Assertion failed|signal|Exited with|FAILED|did not start" "$log" | grep -v "^✘ Suite\|Test run with" | head -40 | sed 's/^/    /'
  else
    echo "$suite: $passed passed$note [${elapsed}s]"
  fi
  if [[ $suite == KilnGatewayExample ]]; then
    sed -n '/^Kiln gateway example/,/^$/p' "$log" | sed 's/^/    /'
  fi
  [[ "${KILN_TEST_VERBOSE:-0}" == 1 ]] && sed 's/^/    /' "$log"
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
done

echo "$total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
