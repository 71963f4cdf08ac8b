#!/usr/bin/env bash
# Proves that Kiln's library products need no package beyond the Swift toolchain, and that
# they follow the layers of ARCHITECTURE.md: builds throwaway packages that depend on Kiln by
# path, one using KilnCore alone, one KilnRepository alone, one KilnRepositoryTesting alone and
# one every product, and fails if SwiftPM resolved or fetched any other package, or if a
# consumer built a Kiln module its products must not need (KilnRepository, and the
# KilnRepositoryTesting over it, build neither KilnNetwork nor KilnQuery: the network loader is
# KilnRepositoryNetwork's).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

root=$(pwd)
identity=$(basename "$root" | tr '[:upper:]' '[:lower:]')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check NAME "PRODUCTS" "IMPORTS" ["MODULES IT MUST NOT BUILD"]
check() {
  local name=$1 products=$2 imports=$3 forbidden=${4:-}
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
  # Whether SwiftPM compiled a module: its .swiftmodule, or an object file in its folder (it
  # makes a <module>.build folder for every module of the package, compiled or not).
  compiled() {
    [[ -n $(find "$dir/.build" -not -path "*/checkouts/*" \( -name "$1.swiftmodule" -o -path "*/$1.build/*.o" \) \
      -print -quit) ]]
  }
  local module built=()
  for module in $imports; do
    if ! compiled "$module"; then
      echo "$name: cannot tell which modules were built: $module, which it imports, looks unbuilt"
      return 1
    fi
  done
  for module in $forbidden; do
    if compiled "$module"; then built+=("$module"); fi
  done
  if [[ ${#built[@]} -gt 0 ]]; then
    echo "$name: built ${built[*]}, which $products must not depend on"
    return 1
  fi
  echo "$name: builds, fetched nothing${forbidden:+, built none of $forbidden}"
}

every="KilnCore KilnQuery KilnStorage KilnNetwork KilnRepository KilnRepositoryNetwork KilnRepositoryTesting"
every+=" KilnSwiftUI KilnDispatch KilnTesting"

check KilnCoreOnly "KilnCore" "KilnCore"
check KilnRepositoryOnly "KilnRepository" "KilnRepository" "KilnNetwork KilnQuery"
check KilnRepositoryTestingOnly "KilnRepositoryTesting" "KilnRepositoryTesting" "KilnNetwork KilnQuery"
check EveryProduct "$every" "$every"
