#!/usr/bin/env bash
# Soaks the demo's stack under load and faults: the kiln-soak executable (Examples/KilnSoak)
# runs thousands of concurrent operations against a loopback server for the given minutes
# while the server fails, drops and trickles, a writer child is SIGKILLed and restarted, and
# the file system under the HTTP cache fills up. Not part of CI.
#
#   Scripts/soak.sh             1 minute
#   Scripts/soak.sh 10          10 minutes
#   Scripts/soak.sh 10 --concurrency 512   (other arguments go to kiln-soak)
#   Scripts/soak.sh 10 --transport asynchttpclient --rss-tolerance 16
#
# The handlers send through URLSessionTransport, or with `--transport asynchttpclient` through
# AsyncHTTPClientTransport: the script then builds with `--traits AsyncHTTPClient` (a build
# with another trait set than the last one in .build-soak recompiles most of the package).
#
# Builds in debug (assertions on) into .build-soak. As root, mounts an 8 MiB tmpfs for the
# disk-full fault (a real ENOSPC) and unmounts it afterwards; otherwise that fault is off.
# Prints figures every 30 s and at the end, and exits 1 on a hang, a corrupt read, a lost
# acknowledged write, a crash, or memory or descriptor growth after warm-up.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

minutes=1
if (($#)) && [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
  minutes=$1
  shift
fi

build_args=(--build-path .build-soak)
traits=""
previous=""
for argument in "$@"; do
  if [[ $previous == --transport && $argument == asynchttpclient ]]; then
    build_args+=(--traits AsyncHTTPClient)
    traits=", trait AsyncHTTPClient"
  fi
  previous=$argument
done

echo "Building kiln-soak (debug, .build-soak${traits})…"
swift build "${build_args[@]}" --product kiln-soak
binary=$(swift build "${build_args[@]}" --show-bin-path)/kiln-soak

full_args=()
full_dir=$(mktemp -d "${TMPDIR:-/tmp}/kiln-soak-full.XXXXXX")
mounted=0
cleanup() {
  if ((mounted)); then umount "$full_dir" || true; fi
  rmdir "$full_dir" 2>/dev/null || true
}
trap cleanup EXIT
if [[ $(id -u) == 0 ]] && mount -t tmpfs -o size=8m tmpfs "$full_dir" 2>/dev/null; then
  mounted=1
  full_args=(--full-dir "$full_dir")
else
  echo "Not root or no tmpfs: the disk-full fault is off."
fi

status=0
"$binary" --minutes "$minutes" "${full_args[@]}" "$@" || status=$?
if ((status > 128)); then
  echo "VERDICT: FAIL — kiln-soak crashed (signal $((status - 128)))"
fi
exit "$status"
