#!/usr/bin/env bash
# Kiln's gateway example, started and measured: an origin service, two gateway instances
# sharing one PostgreSQL-backed HTTP cache, driven by wrk; then the same with the cache off.
#
#   ./run.sh                      build (release), start everything, measure, print the table
#   ./run.sh --check              also fail (exit 1) when a target is missed
#
# Options (defaults in brackets):
#   --duration S      seconds wrk drives each setup, measured [10]
#   --warmup S        seconds wrk drives it first, from a cold cache, reported apart [2]
#   --connections N   wrk connections per gateway instance [32]
#   --keys K          distinct items asked for, uniformly at random [200]
#   --work-ms MS      the origin's time per response, a database query's worth [20]
#   --max-age S       the origin's Cache-Control max-age [60]
#   --configuration C swift build configuration, release or debug [release]
#
# Environment: KILN_GATEWAY_SCRATCH, a build folder (default .build here).
#
# Everything runs on 127.0.0.1: PostgreSQL (a throwaway cluster, Scripts/lib/postgres.sh),
# the origin, the gateways and wrk (installed from Debian's packages when missing). Every
# process it starts is stopped when it exits, whatever happened.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
root=$(cd ../.. && pwd)
source "$root/Scripts/lib/common.sh"
source "$root/Scripts/lib/postgres.sh"

duration=10
warmup=2
connections=32
keys=200
work_ms=20
max_age=60
configuration=release
check=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --keys) keys=$2; shift 2 ;;
    --work-ms) work_ms=$2; shift 2 ;;
    --max-age) max_age=$2; shift 2 ;;
    --configuration) configuration=$2; shift 2 ;;
    --check) check=1; shift ;;
    --help | -h) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--check] [--duration S] [--connections N] [--keys K] [--work-ms MS] [--max-age S] [--configuration C]" >&2; exit 2 ;;
  esac
done
if ((warmup + duration >= max_age)); then
  echo "--warmup + --duration ($((warmup + duration)) s) must be shorter than --max-age ($max_age s):" \
    "the run measures one freshness lifetime" >&2
  exit 2
fi

if ! command -v wrk >/dev/null; then
  echo "Installing wrk…"
  kiln_as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive kiln_as_root apt-get install -y -qq wrk >/dev/null
fi
kiln_ensure_system_libraries

scratch=(--scratch-path "${KILN_GATEWAY_SCRATCH:-$here/.build}")
echo "Building the gateway example ($configuration)…"
build_log=$(mktemp)
if ! swift build -c "$configuration" --product KilnGateway "${scratch[@]}" >"$build_log" 2>&1; then
  grep -E "error:" "$build_log" | head -30
  tail -20 "$build_log"
  rm -f "$build_log"
  exit 1
fi
rm -f "$build_log"
binary="$(swift build -c "$configuration" "${scratch[@]}" --show-bin-path)/KilnGateway"

work=$(mktemp -d)
declare -A pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  kiln_postgres_stop
  rm -rf "$work"
}
trap cleanup EXIT

kiln_postgres_start >/dev/null || { echo "could not start PostgreSQL" >&2; exit 1; }

# start NAME ARGS…: runs the binary in the background on a port of its choosing (--port 0)
# and waits (30 s at most) for its "listening on 127.0.0.1:PORT" line; sets ports[NAME].
declare -A ports=()
start() {
  local name=$1
  shift
  "$binary" "$@" --port 0 >"$work/$name.log" 2>&1 &
  pids[$name]=$!
  local waited=0
  until grep -q "listening on" "$work/$name.log"; do
    if ! kill -0 "${pids[$name]}" 2>/dev/null || ((waited >= 300)); then
      echo "$name did not start:" >&2
      sed 's/^/    /' "$work/$name.log" >&2
      exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  ports[$name]=$(grep -o "listening on 127.0.0.1:[0-9]*" "$work/$name.log" | head -1 | sed 's/.*://')
}

# alive NAME…: fails the run, with the process's output, when one of them has died.
alive() {
  local name
  for name in "$@"; do
    if ! kill -0 "${pids[$name]}" 2>/dev/null; then
      echo "$name died:" >&2
      sed 's/^/    /' "$work/$name.log" >&2
      exit 1
    fi
  done
}

# The origin's count of requests received since the last reset.
origin_requests() {
  curl -fsS "$origin/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin)["requests"])'
}

# stop_gracefully NAME PORT LABEL: SIGTERM while a slow request (1 s at the origin) is in
# flight; the request must be answered and the process must exit with status 0 within 15 s.
# Prints "LABEL ok", or LABEL and what went wrong.
stop_gracefully() {
  local name=$1 port=$2 label=$3
  local before
  before=$(origin_requests)
  curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/items/shutdown-probe-$name?work_ms=1000" \
    >"$work/$name.probe" 2>/dev/null &
  local probe=$!
  # SIGTERM once the probe is at the origin, in flight through the gateway.
  local polled=0
  while (($(origin_requests) == before)) && ((polled < 100)); do
    sleep 0.05
    polled=$((polled + 1))
  done
  kill -TERM "${pids[$name]}"
  local waited=0
  while kill -0 "${pids[$name]}" 2>/dev/null && ((waited < 150)); do
    sleep 0.1
    waited=$((waited + 1))
  done
  if kill -0 "${pids[$name]}" 2>/dev/null; then
    echo "$label still running 15 s after SIGTERM"
    return
  fi
  local status=0
  wait "${pids[$name]}" || status=$?
  unset "pids[$name]"
  wait "$probe" || true
  if [[ $status -ne 0 ]]; then
    echo "$label exited with status $status"
  elif [[ "$(cat "$work/$name.probe")" != 200 ]]; then
    echo "$label: the request in flight got $(cat "$work/$name.probe") instead of 200"
  elif ! grep -q "stopped" "$work/$name.log"; then
    echo "$label exited without saying it stopped"
  else
    echo "$label ok"
  fi
}

cat >"$work/keys.lua" <<'LUA'
-- Each request asks for one of KILN_KEYS items, uniformly at random.
local keys = tonumber(os.getenv("KILN_KEYS"))
math.randomseed(tonumber(os.getenv("KILN_SEED")))
request = function()
  return wrk.format("GET", "/items/" .. math.random(keys))
end
done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d %d %d %d\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99),
    errors.connect + errors.read + errors.write + errors.timeout, errors.status,
    latency:percentile(90), latency:percentile(99.9), latency.max))
end
LUA

start origin origin --work-ms "$work_ms" --max-age "$max_age"
origin="http://127.0.0.1:${ports[origin]}"

# drive LABEL SECONDS PORT PORT: wrk against both instances at once, for SECONDS; writes
# LABEL-wrk-1.log and LABEL-wrk-2.log.
drive() {
  local label=$1 seconds=$2 seed=1 port
  shift 2
  for port in "$@"; do
    KILN_KEYS=$keys KILN_SEED=$((seed + RANDOM)) wrk -t1 -c"$connections" -d"${seconds}s" --timeout 10s \
      -s "$work/keys.lua" "http://127.0.0.1:$port" >"$work/$label-wrk-$seed.log" 2>&1 &
    pids["wrk-$label-$seed"]=$!
    seed=$((seed + 1))
  done
  for seed in 1 2; do
    wait "${pids["wrk-$label-$seed"]}"
    unset "pids[wrk-$label-$seed]"
  done
}

# measure MODE: two gateway instances with --cache MODE, both driven by wrk at once; writes
# MODE.result (rps p50 p99 errors origin_requests origin_keys max_per_key hit_ratio) and
# MODE.shutdown.
measure() {
  local mode=$1
  local table="kiln_gateway_$mode$$" name
  for name in a b; do
    start "$mode-$name" gateway --origin "$origin" --cache "$mode" \
      --postgres "$KILN_POSTGRES_URL" --table "$table" --instance "$name"
  done
  local a=${ports[$mode-a]} b=${ports[$mode-b]}
  curl -fsS -X POST "$origin/stats/reset" >/dev/null
  # From a cold cache: the first seconds, reported apart; then the measured run.
  drive "$mode-cold" "$warmup" "$a" "$b"
  drive "$mode" "$duration" "$a" "$b"
  alive origin "$mode-a" "$mode-b"
  curl -fsS "$origin/stats" >"$work/$mode.origin"
  curl -fsS "http://127.0.0.1:$a/metrics" >"$work/$mode-a.metrics"
  curl -fsS "http://127.0.0.1:$b/metrics" >"$work/$mode-b.metrics"
  stop_gracefully "$mode-a" "$a" a >"$work/$mode.shutdown"
  stop_gracefully "$mode-b" "$b" b >>"$work/$mode.shutdown"
}

echo "Measuring: 2 gateway instances × $connections connections, ${warmup}s from a cold cache then ${duration}s, $keys keys," \
  "origin ${work_ms} ms per response, max-age ${max_age}s"
measure shared
measure off

python3 - "$work" "$duration" "$keys" "$check" <<'PY'
import json, re, sys

work, duration, keys, check = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"

def wrk(mode):
    total = {"requests": 0, "seconds": 0.0, "p50": 0.0, "p99": 0.0, "errors": 0, "non2xx": 0}
    for seed in (1, 2):
        text = open(f"{work}/{mode}-wrk-{seed}.log").read()
        line = next((l for l in text.splitlines() if l.startswith("RESULT ")), None)
        if line is None:
            sys.exit(f"wrk printed no result for {mode}:\n{text}")
        requests, duration_us, p50, p99, errors, non2xx, p90, p999, worst = map(int, line.split()[1:])
        print(f"  {mode} instance {seed}: {requests / (duration_us / 1e6):,.0f} rps, p50 {p50 / 1000:.2f} ms, "
              f"p90 {p90 / 1000:.2f}, p99 {p99 / 1000:.2f}, p99.9 {p999 / 1000:.2f}, max {worst / 1000:.2f}")
        total["requests"] += requests
        total["seconds"] = max(total["seconds"], duration_us / 1e6)
        # Two instances measured apart: the slower instance's percentile.
        total["p50"] = max(total["p50"], p50 / 1000)
        total["p99"] = max(total["p99"], p99 / 1000)
        total["errors"] += errors
        total["non2xx"] += non2xx
    total["rps"] = total["requests"] / total["seconds"]
    return total

def metrics(mode):
    values = {}
    for name in ("a", "b"):
        for line in open(f"{work}/{mode}-{name}.metrics"):
            match = re.match(r'(\w+)\{kiln_source="(\w+)"(?:,(.*))?\} (\d+)$', line.strip())
            if match:
                metric, source, labels, value = match.groups()
                key = (metric, source, labels or "")
                values[key] = values.get(key, 0) + int(value)
    return values

results = {}
for mode in ("shared", "off"):
    result = wrk(mode)
    result["origin"] = json.load(open(f"{work}/{mode}.origin"))
    result["metrics"] = metrics(mode)
    result["cold"] = wrk(f"{mode}-cold")
    result["shutdown"] = dict(line.strip().split(" ", 1) for line in open(f"{work}/{mode}.shutdown"))
    results[mode] = result

shared, off = results["shared"], results["off"]
lookups = {labels: value for (metric, source, labels), value in shared["metrics"].items()
           if metric == "kiln_http_cache_lookups_total"}
hits = lookups.get('result="hit"', 0)
hit_ratio = hits / max(1, sum(lookups.values()))
collapsed = sum(value for (metric, _, labels), value in shared["metrics"].items()
                if metric == "kiln_http_cache_collapsed_total")
store = {labels: value for (metric, source, labels), value in shared["metrics"].items()
         if metric == "kiln_postgres_cache_lookups_total"}

def row(label, a, b, ratio=""):
    print(f"  {label:<34}{a:>16}{b:>16}{ratio:>10}")

print()
print("Kiln gateway example — 2 instances behind one origin, on loopback")
print("  (throughput and latency after the cold start, the latency the worse instance's as wrk measures it")
print("   in a closed loop; origin and cache counts over the whole run)")
row("", "cache shared", "cache off", "ratio")
row("requests per second", f"{shared['rps']:,.0f}", f"{off['rps']:,.0f}", f"{shared['rps'] / off['rps']:.1f}×")
row("latency p50 (ms)", f"{shared['p50']:.2f}", f"{off['p50']:.2f}")
row("latency p99 (ms)", f"{shared['p99']:.2f}", f"{off['p99']:.2f}", f"{shared['p99'] / off['p99']:.2f}×")
row("cold start: requests per second", f"{shared['cold']['rps']:,.0f}", f"{off['cold']['rps']:,.0f}")
row("cold start: latency p50 / p99 (ms)", f"{shared['cold']['p50']:.2f} / {shared['cold']['p99']:.2f}",
    f"{off['cold']['p50']:.2f} / {off['cold']['p99']:.2f}")
row("requests served", f"{shared['requests']:,}", f"{off['requests']:,}")
row("HTTP-cache hit ratio", f"{hit_ratio:.2%}", "—")
row("origin requests", f"{shared['origin']['requests']:,}", f"{off['origin']['requests']:,}")
row("keys the origin saw", f"{shared['origin']['keys']}", f"{off['origin']['keys']}")
row("origin requests per key (mean)",
    f"{shared['origin']['requests'] / max(1, shared['origin']['keys']):.2f}",
    f"{off['origin']['requests'] / max(1, off['origin']['keys']):.1f}")
row("origin requests per key (max)", f"{shared['origin']['max_per_key']}", f"{off['origin']['max_per_key']}")
row("errors (socket / non-2xx)", f"{shared['errors']} / {shared['non2xx']}", f"{off['errors']} / {off['non2xx']}")
print(f"  misses collapsed across instances: {collapsed}; shared store lookups: "
      + ", ".join(f"{labels.split('=')[1].strip(chr(34))} {value:,}" for labels, value in sorted(store.items())))
print()

errors = sum(r["cold"]["errors"] for r in results.values()) + shared["errors"] + off["errors"]
non2xx = sum(r["cold"]["non2xx"] for r in results.values()) + shared["non2xx"] + off["non2xx"]
checks = [
    ("cached rps ≥ 5× uncached", shared["rps"] >= 5 * off["rps"],
     f"{shared['rps']:,.0f} vs {off['rps']:,.0f}"),
    ("cached p99 lower than uncached", shared["p99"] < off["p99"], f"{shared['p99']:.2f} ms vs {off['p99']:.2f} ms"),
    ("one origin request per key across both instances",
     shared["origin"]["max_per_key"] == 1 and shared["origin"]["keys"] == keys,
     f"{shared['origin']['requests']} requests for {shared['origin']['keys']} keys, at most "
     f"{shared['origin']['max_per_key']} for one"),
    ("every request answered 2xx, cold start included", errors == 0 and non2xx == 0,
     f"{errors} socket errors, {non2xx} non-2xx"),
]
for mode in ("shared", "off"):
    for name, outcome in results[mode]["shutdown"].items():
        checks.append((f"gateway {name} (cache {mode}) stops gracefully on SIGTERM", outcome == "ok", outcome))
failed = 0
for name, passed, detail in checks:
    print(f"check {name}: {'ok' if passed else 'FAILED'} ({detail})")
    failed += not passed
print(f"{len(checks) - failed} checks passed, {failed} failed")
if check and failed:
    sys.exit(1)
PY
