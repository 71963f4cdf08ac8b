# Shared helpers for Kiln's scripts. Source it; do not run it.

# Every test target, by its module's name (KilnCore for KilnCoreTests), in the order the
# scripts run them: Scripts/test.sh runs each in a `swift test` process of its own, and so do
# the sanitizer scripts (below). A test target of Package.swift missing here fails
# `kiln_check_test_targets`, which each of them calls.
kiln_test_targets='KilnCore KilnTesting KilnQuery KilnStorage KilnNetwork KilnRepository KilnRepositoryNetwork'
kiln_test_targets+=' KilnRepositoryTesting KilnDispatch KilnIntegration'

# What the sanitizer scripts run, one `swift test` process each, in this order: every test
# target, with KilnNetworkTests' wall-clock fault suites (real URLSession and AsyncHTTPClient
# exchanges under 1–2 s transport timeouts) in a process of their own. Beside the rest of
# their target under Thread Sanitizer (its 4,000-request stress suite among it), a URLSession
# exchange was starved past its 1 s idle timeout before its first 100 KB. Each entry is a
# `--filter` regex, anchored at the start of a test's ID.
kiln_sanitizer_runs=''
for kiln_target in $kiln_test_targets; do
  if [[ $kiln_target == KilnNetwork ]]; then
    kiln_sanitizer_runs+=' KilnNetworkTests\.(?!WireFaultTests|TransportFailureTests)'
    kiln_sanitizer_runs+=' KilnNetworkTests\.(WireFaultTests|TransportFailureTests)'
  else
    kiln_sanitizer_runs+=" ${kiln_target}Tests\\."
  fi
done
unset kiln_target

# Fails (status 1, naming them) when Package.swift declares a test target that
# `kiln_test_targets` does not list, so that no script silently skips a new one.
kiln_check_test_targets() {
  local declared missing=() name
  declared=$(perl -0ne 'print "$1\n" while /tests\(\s*for:\s*"(\w+)"/g; print "$1\n" while /\.testTarget\(\s*name:\s*"(\w+)Tests"/g' Package.swift)
  for name in $declared; do
    [[ " $kiln_test_targets " == *" $name "* ]] || missing+=("${name}Tests")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "Scripts/lib/common.sh: kiln_test_targets lacks ${missing[*]} (declared in Package.swift)" >&2
    return 1
  fi
}

# Runs a command as root: directly when we are root, through sudo otherwise.
kiln_as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# Makes sure the C libraries the package links are present (a fresh Debian or Ubuntu
# machine may lack the SQLite headers KilnStorage's system-library target needs).
kiln_ensure_system_libraries() {
  if [[ "$(uname -s)" != "Linux" ]]; then return 0; fi
  local missing=()
  [[ -f /usr/include/sqlite3.h ]] || missing+=(libsqlite3-dev)
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "Installing ${missing[*]}…"
    kiln_as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive kiln_as_root apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# Builds the tests with a sanitizer and runs them, with the throwaway PostgreSQL server
# (Scripts/lib/postgres.sh) when it can start: what Scripts/asan.sh and Scripts/tsan.sh do.
# Prints the failures, the summary and the sanitizer's findings; any report fails the run
# (printed in full) even when every test passed.
#
#   kiln_run_sanitized --flags "--sanitize=thread --scratch-path .build-tsan" \
#     [--build-flags "-Xswiftc -warnings-as-errors"] --options "TSAN_OPTIONS=halt_on_error=1" \
#     --timeout 2400 --show '^(✘|✔ Test run|SUMMARY)' --report "WARNING: ThreadSanitizer" \
#     --context "-A40" --found "Thread Sanitizer found a race" -- [swift test arguments]
#
# --flags go to both `swift build` and `swift test`; --build-flags to the build only;
# --options is the sanitizer's environment assignment; --timeout bounds the test run in
# seconds; --show selects the output lines printed while it runs (an extended regex);
# --report marks a finding, printed with `grep` --context lines around it, and --found says
# what was found. Exits with the test run's status (a failing test fails it; `timeout`
# exits 124), or 1 on a finding.
kiln_run_sanitized() {
  local flags=() build_flags=() options="" timeout=2400 show="" report="" context=() found="" suites=()
  while [[ $# -gt 0 ]]; do
    case $1 in
      --flags) read -ra flags <<<"$2"; shift 2 ;;
      --build-flags) read -ra build_flags <<<"$2"; shift 2 ;;
      --options) options=$2; shift 2 ;;
      --timeout) timeout=$2; shift 2 ;;
      --show) show=$2; shift 2 ;;
      --report) report=$2; shift 2 ;;
      --context) read -ra context <<<"$2"; shift 2 ;;
      --found) found=$2; shift 2 ;;
      --suites) read -ra suites <<<"$2"; shift 2 ;;
      --) shift; break ;;
      *) echo "kiln_run_sanitized: unknown option $1" >&2; return 2 ;;
    esac
  done
  if [[ ${#suites[@]} -gt 0 && $# -eq 0 ]]; then kiln_check_test_targets || return 1; fi
  swift build --build-tests "${flags[@]}" ${build_flags[@]+"${build_flags[@]}"}
  kiln_sanitizer_log=$(mktemp)
  source Scripts/lib/postgres.sh
  trap 'rm -f "$kiln_sanitizer_log"; kiln_postgres_stop' EXIT
  kiln_postgres_start || true
  # Not `… | grep || true`: with pipefail, a failing run makes the pipeline fail, `true`
  # runs, and PIPESTATUS would then hold its status (0) instead of the tests'.
  set +e
  local status=0
  if [[ ${#suites[@]} -gt 0 && $# -eq 0 ]]; then
    # One process per entry (a test target, or part of one), each with the whole time
    # limit: in one process, every suite at once under a sanitizer starved the PostgreSQL
    # suites' statements past their 10 s operation timeout (see ARCHITECTURE.md).
    local suite suite_status
    for suite in "${suites[@]}"; do
      echo "-- $suite"
      env "$options" timeout --kill-after=30 "$timeout" swift test --skip-build "${flags[@]}" \
        --filter "^$suite" 2>&1 | tee -a "$kiln_sanitizer_log" | grep -E "$show"
      suite_status=${PIPESTATUS[0]}
      [[ $suite_status -ne 0 ]] && status=$suite_status
      grep -q "$report" "$kiln_sanitizer_log" && break
    done
  else
    env "$options" timeout --kill-after=30 "$timeout" swift test --skip-build "${flags[@]}" "$@" 2>&1 |
      tee "$kiln_sanitizer_log" | grep -E "$show"
    status=${PIPESTATUS[0]}
  fi
  set -e
  if grep -q "$report" "$kiln_sanitizer_log"; then
    grep ${context[@]+"${context[@]}"} -m1 "$report" "$kiln_sanitizer_log"
    echo "$found"
    exit 1
  fi
  exit "$status"
}
