#!/usr/bin/env bash
# Proves that Kiln's library products need no package beyond the Swift toolchain: builds a
# throwaway package that depends on Kiln by path and uses KilnCore alone, then one that uses
# every product, and fails if SwiftPM resolved or fetched any other package.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

root=$(pwd)
identity=$(basename "$root" | tr '[:upper:]' '[:lower:]')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() {
  local name=$1 products=$2 imports=$3
  local dir="$work/$name"
  mkdir -p "$dir/Sources/App"
  local deps=""
  for product in $products; do deps+=".product(name: \"$product\", package: \"$identity\"), "; done
  cat >"$dir/Package.swift" <<MANIFEST
// swift-tools-version: 6.2
import PackageDescription
let package = Package(
  name: "$name",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [.package(path: "$root")],
  targets: [.executableTarget(name: "App", dependencies: [$deps])]
)
MANIFEST
  {
    for module in $imports; do echo "import $module"; done
    echo 'print("ok")'
  } >"$dir/Sources/App/main.swift"
  if ! (cd "$dir" && swift build >"$dir/build.log" 2>&1); then
    tail -20 "$dir/build.log"
    echo "$name: the consumer does not build"
    return 1
  fi
  local fetched
  fetched=$(ls "$dir/.build/checkouts" 2>/dev/null || true)
  if [[ -n "$fetched" || -s "$dir/Package.resolved" && $(grep -c '"identity"' "$dir/Package.resolved") -gt 0 ]]; then
    echo "$name: resolved external packages: ${fetched:-see Package.resolved}"
    return 1
  fi
  echo "$name: builds, fetched nothing"
}

check KilnCoreOnly "KilnCore" "KilnCore"
check EveryProduct "KilnCore KilnQuery KilnStorage KilnNetwork KilnRepository KilnSwiftUI KilnDispatch KilnTesting" \
  "KilnCore KilnQuery KilnStorage KilnNetwork KilnRepository KilnSwiftUI KilnDispatch KilnTesting"
