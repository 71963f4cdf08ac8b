#!/usr/bin/env bash
# Formats every Swift source in place with the toolchain's `swift format` and the
# committed .swift-format; `--lint` checks instead (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.swift')
if [[ ${#files[@]} -eq 0 ]]; then exit 0; fi

if [[ "${1:-}" == "--lint" ]]; then
  swift format lint --strict --parallel "${files[@]}"
else
  swift format format --in-place --parallel "${files[@]}"
fi
