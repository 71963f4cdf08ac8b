#!/usr/bin/env bash
# Builds Kiln's libFuzzer targets (the Fuzz/ package, with -sanitize=fuzzer,address) and
# runs one or all of them, each for the given seconds, one after the other.
#
#   Scripts/fuzz.sh                    every target, 60 s each
#   Scripts/fuzz.sh JournalDecode 300  one target for five minutes
#   Scripts/fuzz.sh all 5              every target, 5 s each (what CI runs)
#   Scripts/fuzz.sh --list             the target names
#
# Each run starts from a copy of Fuzz/Corpus/<target>/ in a temporary folder (the committed
# corpus never grows by itself), with -max_len and a per-input -timeout so that a loop is a
# finding. The build folder Fuzz/.build is reused. A finding (crash, trap, sanitizer report,
# timeout) is kept in Fuzz/.build/findings/<target>/ and its path printed; the script then
# exits 1. See Fuzz/README.md to turn one into a test.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

root=$(pwd)
# Swift's crash backtracer reads the stack in ways AddressSanitizer reports; libFuzzer prints
# the stack itself.
export SWIFT_BACKTRACE=enable=no
mapfile -t all_targets < <(ls Fuzz/Corpus)
if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${all_targets[@]}"
  exit 0
fi
target=${1:-all}
seconds=${2:-60}
per_input_timeout=${KILN_FUZZ_TIMEOUT:-10}
if [[ "$target" == all ]]; then
  targets=("${all_targets[@]}")
elif [[ -d "Fuzz/Corpus/$target" ]]; then
  targets=("$target")
else
  echo "unknown fuzz target '$target'; one of: ${all_targets[*]}" >&2
  exit 2
fi

# The largest input each target reads; the parsers of whole files get more room.
max_len() {
  case $1 in
    JournalDecode | DiskEntryFile | StoreCodec | StoredResponse) echo 4096 ;;
    *) echo 1024 ;;
  esac
}

build_log=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$work" "$build_log"' EXIT
build_started=$(date +%s)
if ! (cd Fuzz && swift build --scratch-path .build -Xswiftc -sanitize=fuzzer,address) >"$build_log" 2>&1; then
  grep -v "Cannot export local symbol" "$build_log" | tail -40
  echo "the fuzzers do not build"
  exit 1
fi
echo "built the fuzzers in $(($(date +%s) - build_started))s"
bin=$(cd Fuzz && swift build --scratch-path .build --show-bin-path)

failed=()
for name in "${targets[@]}"; do
  corpus="$work/$name"
  findings="$root/Fuzz/.build/findings/$name"
  mkdir -p "$corpus" "$findings"
  cp "Fuzz/Corpus/$name"/* "$corpus/"
  log="$findings/last-run.log"
  started=$(date +%s)
  status=0
  "$bin/$name" "$corpus" -max_total_time="$seconds" -max_len="$(max_len "$name")" -timeout="$per_input_timeout" \
    -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1 || status=$?
  elapsed=$(($(date +%s) - started))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [[ $status -eq 0 ]]; then
    echo "$name: ${runs:-?} runs in ${elapsed}s: no finding"
  else
    reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    grep -E "invariant violated|ERROR: (libFuzzer|AddressSanitizer)|Fatal error|SUMMARY" "$log" | head -5 || true
    echo "$name: ${runs:-?} runs in ${elapsed}s: FINDING (exit $status), reproducer: ${reproducer:-none written}, log: $log"
    failed+=("$name")
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "findings in: ${failed[*]}"
  exit 1
fi
