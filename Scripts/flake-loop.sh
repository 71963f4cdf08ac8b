#!/usr/bin/env bash
# Runs test suites again and again, optionally while other builds load the machine, and
# fails on the first run that is not green: the flake budget is zero.
#
#   Scripts/flake-loop.sh                          the PostgreSQL and network suites, 50 runs each, under load
#   Scripts/flake-loop.sh --runs 100 --load 0 'KilnStorageTests.PostgresCacheTests'
#   Scripts/flake-loop.sh --runs 20 'KilnNetworkTests.WireFaultTests' 'KilnIntegrationTests.FaultProxyTests'
#
# Each FILTER is a `swift test --filter` expression, run on its own N times in a row (the
# default filters are below). --load K starts K other builds of Kiln (debug, from scratch,
# over and over, in .build-load-1…K) for the whole loop, as a busy CI machine would have;
# 2 by default. Builds the tests once (all traits, in .build or KILN_TEST_SCRATCH) and starts
# a throwaway PostgreSQL (Scripts/lib/postgres.sh) unless KILN_POSTGRES_URL is set.
#
# Prints one line per run ("PostgresCacheTests 17/50 ok 6s") and a summary; a failing
# run's output is kept in the printed log file. Exits 1 when any run failed or hung (each
# run may take KILN_FLAKE_TIMEOUT seconds, 600 by default, before it counts as hung).
set -uo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh

runs=50
load=2
filters=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --load) load=$2; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) filters+=("$1"); shift ;;
  esac
done
if [[ ${#filters[@]} -eq 0 ]]; then
  filters=(
    'KilnStorageTests.Postgres'
    'KilnNetworkTests'
    'KilnIntegrationTests'
    'KilnRepositoryNetworkTests'
  )
fi

scratch=${KILN_TEST_SCRATCH:-.build}
swift_flags=(--scratch-path "$scratch" --enable-all-traits)
run_timeout=${KILN_FLAKE_TIMEOUT:-600}
kiln_ensure_system_libraries

echo "Building Kiln and its tests (all traits, $scratch)…"
if ! swift build --build-tests "${swift_flags[@]}" >/tmp/kiln-flake-build.log 2>&1; then
  grep -E "error:" /tmp/kiln-flake-build.log | head -30
  echo "build failed"
  exit 1
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/kiln-flake.XXXXXX")
load_pids=()
source Scripts/lib/postgres.sh
stop_load() {
  local pid
  for pid in "${load_pids[@]}"; do
    kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null
  done
  load_pids=()
}
trap 'stop_load; kiln_postgres_stop' EXIT
# Interrupted or killed: exit, so that the EXIT trap stops the load builds and PostgreSQL.
trap 'exit 130' INT
trap 'exit 143' TERM
kiln_postgres_start || exit 1

# K background builds, each rebuilding Kiln from scratch in a loop until the script ends.
for ((i = 1; i <= load; i++)); do
  setsid bash -c "while :; do rm -rf .build-load-$i; swift build --scratch-path .build-load-$i >/dev/null 2>&1; done" &
  load_pids+=($!)
done
((load > 0)) && echo "Load: $load builds running in .build-load-1…$load"

failed=0
for filter in "${filters[@]}"; do
  name=${filter##*.}
  ok=0
  for ((run = 1; run <= runs; run++)); do
    log="$logs/${name//[^A-Za-z0-9_]/_}-$run.log"
    started=$(date +%s)
    timeout --kill-after=30 "$run_timeout" \
      swift test --skip-build "${swift_flags[@]}" --filter "$filter" >"$log" 2>&1
    status=$?
    elapsed=$(($(date +%s) - started))
    if [[ $status -eq 0 ]] && grep -qE "Test run with [1-9][0-9]* tests? .*passed" "$log"; then
      ok=$((ok + 1))
      echo "$name $run/$runs ok ${elapsed}s"
      rm -f "$log"
    else
      failed=$((failed + 1))
      [[ $status -eq 124 || $status -eq 137 ]] && what="HUNG (killed after ${run_timeout}s)" || what="FAILED (status $status)"
      echo "$name $run/$runs $what ${elapsed}s — log: $log"
      grep -E "✘|error:|Fatal error|timed out|Time limit" "$log" | grep -v "^✘ Suite\|Test run with" | head -15 | sed 's/^/    /'
    fi
  done
  echo "== $filter: $ok/$runs green"
done

stop_load
if [[ $failed -eq 0 ]]; then
  echo "All ${#filters[@]} filter(s) green $runs times in a row (load: $load builds)"
  rm -rf "$logs"
else
  echo "$failed run(s) failed; logs in $logs"
  exit 1
fi
