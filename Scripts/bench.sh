#!/usr/bin/env bash
# Runs Kiln's benchmarks and prints, for each case, Kiln beside its baseline measured in the
# same process, interleaved (rounds of one Kiln iteration and one baseline iteration, back to
# back), the median of the per-round ratios, and the target from
# Benchmarks/Benchmarks/<Target>/targets.tsv.
#
#   Scripts/bench.sh                    every benchmark target
#   Scripts/bench.sh --filter 'MemoryCache.*'  only cases whose whole name matches
#   Scripts/bench.sh --target CoreBenchmarks
#   Scripts/bench.sh --json FILE        also write the table as JSON (see Benchmarks/README.md)
#   Scripts/bench.sh --smoke            run every benchmark once (seconds), check no target:
#                                       what CI runs so that no benchmark rots. A release build
#                                       (the benchmark tool's Swift-runtime interposer, which
#                                       Swift 6.3 on Linux needs, exists only in release builds)
#                                       but unoptimised (-Onone), in Benchmarks/.build-smoke: it
#                                       compiles in about half the time, and a smoke run's
#                                       figures mean nothing anyway
#
# Other arguments are passed to `swift package benchmark`. Exits 1 when a target is missed
# (never with --smoke) or when a benchmark fails to build or run.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

report_options=()
passed=()
package_options=()
while (($#)); do
  case $1 in
    --smoke)
      export KILN_BENCH_SMOKE=1
      report_options+=(--smoke)
      package_options=(--scratch-path .build-smoke -Xswiftc -Onone)
      ;;
    --json)
      report_options+=(--json "$(realpath -m "$2")")
      shift
      ;;
    --target | --filter | --skip | --skip-target)
      # Only some benchmarks run: targets of the others have no measurement.
      report_options+=(--partial)
      passed+=("$1")
      ;;
    *) passed+=("$1") ;;
  esac
  shift
done

out=$(mktemp -d)
# Where each comparison writes its rounds (KilnBenchmarkSupport), read by bench_report.py.
export KILN_BENCH_ROUNDS="$out/rounds"
mkdir "$KILN_BENCH_ROUNDS"
# A throwaway PostgreSQL for PostgresBenchmarks (KILN_POSTGRES_URL); stopped on exit.
source Scripts/lib/postgres.sh
trap 'rm -rf "$out"; kiln_postgres_stop' EXIT
kiln_postgres_start || echo "PostgresBenchmarks will be skipped"

(
  cd Benchmarks
  swift package ${package_options[@]+"${package_options[@]}"} --allow-writing-to-directory "$out" benchmark \
    --no-progress ${passed[@]+"${passed[@]}"}
) >"$out/run.log" 2>&1 || {
  tail -40 "$out/run.log"
  echo "benchmark run failed"
  exit 1
}

[[ -n ${KILN_BENCH_SMOKE:-} ]] && echo "Smoke run: one round each, the figures are not measurements."
echo "Kiln benchmarks ($(uname -m), $(nproc 2>/dev/null || sysctl -n hw.ncpu) cores; medians of interleaved rounds)"
echo
cat Benchmarks/Benchmarks/*/targets.tsv >"$out/targets.tsv"
python3 Scripts/lib/bench_report.py ${report_options[@]+"${report_options[@]}"} "$KILN_BENCH_ROUNDS" "$out/targets.tsv"
