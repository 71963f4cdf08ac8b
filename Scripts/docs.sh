#!/usr/bin/env bash
# Builds the DocC documentation of every Kiln module with a catalog, with every trait on,
# and fails on any documentation warning (a broken symbol link, a missing parameter).
#
#   Scripts/docs.sh                 check every catalog
#   KILN_DOCS_OUTPUT=dir Scripts/docs.sh   also keep the .doccarchive folders in dir
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh
kiln_ensure_system_libraries

# The same build folder as Scripts/test.sh (all traits), so CI reuses its build.
scratch=${KILN_DOCS_SCRATCH:-.build}
mkdir -p "$scratch"
# dump-symbol-graph also tries SwiftPM's synthesized test-runner modules and reports an
# error for them; the library modules' graphs are all we need, and their absence is
# checked per module below.
swift package --scratch-path "$scratch" --enable-all-traits dump-symbol-graph \
  --skip-synthesized-members --emit-extension-block-symbols >"$scratch/dump-symbol-graph.log" 2>&1 || true
graphs=$(find "$scratch" -type d -name symbolgraph -not -path "*/checkouts/*" | head -1)
if [[ -z "$graphs" ]]; then
  tail -30 "$scratch/dump-symbol-graph.log"
  echo "no symbol graphs were produced"
  exit 1
fi
output=${KILN_DOCS_OUTPUT:-$(mktemp -d)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

failed=0
while IFS= read -r catalog; do
  module=$(basename "$catalog" .docc)
  mkdir -p "$work/$module"
  if [[ ! -f "$graphs/$module.symbols.json" ]]; then
    echo "$module: no symbol graph (did it build?)"
    failed=1
    continue
  fi
  cp "$graphs/$module".symbols.json "$work/$module/"
  cp "$graphs/$module"@*.symbols.json "$work/$module/" 2>/dev/null || true
  if docc convert "$catalog" \
    --additional-symbol-graph-dir "$work/$module" \
    --output-path "$output/$module.doccarchive" \
    --fallback-display-name "$module" \
    --fallback-bundle-identifier "org.kiln.$module" \
    --warnings-as-errors >"$work/$module.log" 2>&1; then
    echo "$module: documentation builds"
  else
    echo "$module: documentation has problems"
    sed 's/^/    /' "$work/$module.log" | head -60
    failed=1
  fi
done < <(find Packages -type d -name "*.docc" -path "*/Sources/*" | sort)
exit $failed
