#!/usr/bin/env bash
# Checks that no library product breaks its public API without saying so: runs
# `swift package diagnose-api-breaking-changes` (swift-api-digester) for every library
# product against a baseline commit.
#
#   Scripts/api-check.sh              each package's products against the last commit that
#                                     changed Packages/<package>/VERSION
#   Scripts/api-check.sh <treeish>    every product against <treeish> (a tag, origin/main, …)
#
# The rule. A package's products may break their API against the baseline only if
#   1. Packages/<package>/VERSION (in the work tree) differs from VERSION at the baseline, and
#   2. the section of Packages/<package>/CHANGELOG.md for that current version
#      ("## <version>", up to the next "## ") has a "### Breaking" heading.
# Any other breaking change fails the run, naming the product and each change.
#
# Without an argument the baseline is the commit that last changed VERSION, so VERSION at
# the baseline is the committed VERSION and condition 1 holds only while a bump is not yet
# committed. A break made in the bump commit itself is checked while it is being prepared
# (VERSION changed in the work tree, baseline the previous bump) and is in the baseline
# once committed. Once a bump commit lands, its version is released: any break after it,
# even one meant for that same version, fails until another bump with its own "### Breaking"
# section (CI on the commit that breaks fails; a later bump commit makes it pass again).
# Additions never need a bump. With <treeish> (a release tag, the target branch of a pull
# request), VERSION at <treeish> is the one that must differ.
#
# swift-api-digester compares declarations, so it also reports changes that no caller's
# source can notice (a closure parameter made optional is a "type change" though every call
# still compiles). Such a finding can be listed in Packages/<package>/api-breakage-allowlist.txt,
# one message per line exactly as printed ("API breakage: …"; lines starting with # are
# comments), which the tool then ignores (--breakage-allowlist-path); empty the file at the
# package's next bump. A real break needs the bump, not the allowlist.
#
# Products: every library product, mapped to its package by its targets' paths
# (Packages/<package>/Sources/<module>, see Package.swift). KilnTesting is a product that
# consumers' tests import, versioned with KilnCore in Packages/Core (its CHANGELOG covers
# both), so it is checked like the others. KilnSwiftUI is skipped where SwiftUI does not
# exist (Linux): there it is an empty module with no API to compare. A product that did
# not exist at the baseline is new: nothing to compare. Traits stay off on both sides, so
# API behind the AsyncHTTPClient and PostgreSQL traits is not checked.
#
# Speed: SwiftPM would clone and build each baseline from scratch (every target, swift-nio
# included) in a folder it deletes first. Instead this script checks each baseline out in
# one reused clone (.build-api/baseline-src), builds only the modules it needs there
# (.build-api/baseline, incremental from one baseline to the next), dumps their API with
# swift-api-digester as SwiftPM does, and hands the dumps to the tool with --baseline-dir
# (.build-api/baselines/<toolchain>/<commit>/<module>.json, kept: a commit's API never
# changes), so the tool only builds the work tree (.build-api/current) and compares.
# Products that share a baseline commit are compared in one invocation. Build logs go to
# .build-api/logs.
#
# Needs the full history: a shallow clone is unshallowed first (git fetch), or the run fails.
# Exits 0 when every product passes, 1 on a disallowed break or a failure, 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/common.sh

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  usage
  exit 0
fi
if [[ $# -gt 1 || ${1:-} == -* ]]; then
  usage >&2
  exit 2
fi
treeish=${1:-}

kiln_ensure_system_libraries

root=$(pwd)
scratch=$root/.build-api
current=$scratch/current
src=$scratch/baseline-src
baseline_build=$scratch/baseline
logs=$scratch/logs
toolchain=$(swift --version 2>/dev/null | head -1 | sed -n 's/.*(\(.*\)).*/\1/p' | tr -c 'A-Za-z0-9.\n' '-')
baselines=$scratch/baselines/${toolchain:-unknown}
mkdir -p "$logs" "$baselines"

if [[ $(git rev-parse --is-shallow-repository) == true ]]; then
  echo "api-check: a shallow clone has no VERSION history; fetching it (git fetch --unshallow)"
  if ! git fetch --quiet --unshallow; then
    echo "api-check: git fetch --unshallow failed: clone the repository with its history"
    exit 1
  fi
fi

digester=$(command -v swift-api-digester || true)
if [[ -z "$digester" ]]; then
  if [[ $(uname -s) == Darwin ]]; then
    digester=$(xcrun --find swift-api-digester)
  else
    digester=$(dirname "$(readlink -f "$(command -v swift)")")/swift-api-digester
  fi
fi

# Products with no API on this platform.
skipped_products=()
[[ $(uname -s) == Darwin ]] || skipped_products+=(KilnSwiftUI)

# Library products of the work tree: "product<TAB>package<TAB>module…" per line.
# (`resolve` first: it writes Package.resolved, which the baseline clone reuses.)
swift package --scratch-path "$current" resolve >"$logs/resolve.log" 2>&1 || {
  tail -20 "$logs/resolve.log"
  echo "api-check: swift package resolve failed"
  exit 1
}
swift package --scratch-path "$current" dump-package >"$scratch/current-package.json"
products_of() {
  python3 - "$1" <<'PY'
import json, sys
manifest = json.load(open(sys.argv[1]))
paths = {t["name"]: t.get("path") or "" for t in manifest["targets"]}
for product in manifest["products"]:
    if "library" not in product["type"]:
        continue
    packages = set()
    for target in product["targets"]:
        parts = paths.get(target, "").split("/")
        if len(parts) < 3 or parts[0] != "Packages":
            sys.exit(f"api-check: {product['name']}'s target {target} is not in Packages/<package>/")
        packages.add(parts[1])
    if len(packages) != 1:
        sys.exit(f"api-check: {product['name']} has targets in several packages: {sorted(packages)}")
    print(product["name"], packages.pop(), " ".join(product["targets"]), sep="\t")
PY
}
declare -A package_of=() modules_of=()
products=()
while IFS=$'\t' read -r product package modules; do
  products+=("$product")
  package_of[$product]=$package
  modules_of[$product]=$modules
done < <(products_of "$scratch/current-package.json")

# The baseline of each package.
if [[ -n "$treeish" ]]; then
  fixed_base=$(git rev-parse --verify --quiet "$treeish^{commit}") || {
    echo "api-check: $treeish is not a commit"
    exit 2
  }
fi
declare -A base_of=()
for product in "${products[@]}"; do
  package=${package_of[$product]}
  if [[ -n "$treeish" ]]; then
    base_of[$package]=$fixed_base
  else
    base_of[$package]=$(git log -1 --format=%H -- "Packages/$package/VERSION")
  fi
done

short() { git rev-parse --short "$1"; }
version_at() { git show "$1:Packages/$2/VERSION" 2>/dev/null | tr -d '[:space:]' || true; }
current_version() { tr -d '[:space:]' <"Packages/$1/VERSION" 2>/dev/null || true; }

# Whether CHANGELOG.md's section for <version> has a "### Breaking" heading.
changelog_says_breaking() {
  local package=$1 version=$2
  awk -v version="$version" '
    /^## / { inside = ($2 == version || $2 == "[" version "]"); next }
    inside && /^###[[:space:]]+Breaking/ { found = 1 }
    END { exit !found }
  ' "Packages/$package/CHANGELOG.md" 2>/dev/null
}

# Makes sure .build-api/baselines/<toolchain>/<commit>/<module>.json exists for each module
# that exists at <commit>; prints the modules that do not exist there.
dump_baselines() {
  local base=$1
  shift
  local dir=$baselines/$base missing=() module
  for module in "$@"; do
    [[ -f "$dir/$module.json" || -f "$dir/$module.absent" ]] || missing+=("$module")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    if [[ ! -d "$src/.git" ]]; then
      rm -rf "$src"
      # Shares this repository's objects, so every commit of it can be checked out here.
      git clone --quiet --shared --no-checkout "$root" "$src" || return 1
    fi
    git -C "$src" checkout --quiet --force --detach "$base" || return 1
    if [[ -f Package.resolved ]]; then cp Package.resolved "$src/Package.resolved" || return 1; fi
    local log=$logs/baseline-$(short "$base").log
    : >"$log"
    local targets
    targets=$(swift package --package-path "$src" --scratch-path "$baseline_build" dump-package 2>>"$log" |
      python3 -c 'import json, sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["targets"] if t["type"] == "regular"))') || {
      tail -20 "$log" >&2
      echo "api-check: cannot read Package.swift at $(short "$base")" >&2
      return 1
    }
    mkdir -p "$dir" || return 1
    local present=()
    for module in "${missing[@]}"; do
      if [[ " $targets " == *" $module "* ]]; then present+=("$module"); else touch "$dir/$module.absent"; fi
    done
    for module in ${present[@]+"${present[@]}"}; do
      if ! swift build --package-path "$src" --scratch-path "$baseline_build" --target "$module" >>"$log" 2>&1; then
        grep -E "error:" "$log" | head -20 >&2
        tail -10 "$log" >&2
        echo "api-check: $module does not build at $(short "$base") (log: $log)" >&2
        return 1
      fi
    done
    # The search paths SwiftPM gives swift-api-digester: the Swift modules, and the module
    # maps and headers of the C targets.
    local includes=(-I "$baseline_build/debug/Modules") path
    for path in "$baseline_build"/debug/*.build "$src"/Packages/*/Sources/*; do
      [[ -f "$path/module.modulemap" ]] && includes+=(-I "$path")
      [[ -d "$path/include" ]] && includes+=(-I "$path/include")
    done
    [[ $(uname -s) == Darwin ]] && includes+=(-sdk "$(xcrun --show-sdk-path)")
    for module in ${present[@]+"${present[@]}"}; do
      if ! "$digester" -dump-sdk -compiler-style-diags "${includes[@]}" -module "$module" \
        -o "$dir/$module.json.partial" >>"$log" 2>&1; then
        tail -20 "$log" >&2
        echo "api-check: swift-api-digester cannot dump $module at $(short "$base")" >&2
        return 1
      fi
      mv "$dir/$module.json.partial" "$dir/$module.json" || return 1
    done
  fi
  for module in "$@"; do
    [[ -f "$dir/$module.absent" ]] && echo "$module"
  done
  return 0
}

# Group the products by baseline commit, oldest first (each baseline build then only
# recompiles what changed since the previous one).
declare -A group_of=()
for product in "${products[@]}"; do
  if [[ " ${skipped_products[*]-} " == *" $product "* ]]; then
    echo "$product: skipped (no SwiftUI on $(uname -s): an empty module, no API to compare)"
    continue
  fi
  base=${base_of[${package_of[$product]}]}
  if [[ -z "$base" ]]; then
    echo "$product: new (Packages/${package_of[$product]}/VERSION was never committed), nothing to compare"
    continue
  fi
  group_of[$base]+="$product "
done
bases=()
if [[ ${#group_of[@]} -gt 0 ]]; then
  mapfile -t bases < <(git log --no-walk=unsorted --format='%ct %H' "${!group_of[@]}" | sort -n | cut -d' ' -f2)
fi

failures=()
for base in "${bases[@]}"; do
  read -ra group <<<"${group_of[$base]}"
  modules=()
  for product in "${group[@]}"; do read -ra product_modules <<<"${modules_of[$product]}" && modules+=("${product_modules[@]}"); done
  echo
  subject=$(git log -1 --format=%s "$base")
  [[ ${#subject} -le 64 ]] || subject="${subject:0:63}…"
  echo "Against $(git log -1 --format='%h, %ad' --date=short "$base") \"$subject\":"
  if ! absent=$(dump_baselines "$base" "${modules[@]}"); then
    failures+=("${group[@]}")
    continue
  fi
  compared=()
  for product in "${group[@]}"; do
    is_new=0
    for module in ${modules_of[$product]}; do [[ $'\n'"$absent"$'\n' == *$'\n'"$module"$'\n'* ]] && is_new=1; done
    if [[ $is_new -eq 1 ]]; then
      echo "  $product: new since $(short "$base"), nothing to compare"
    else
      compared+=("$product")
    fi
  done
  [[ ${#compared[@]} -gt 0 ]] || continue

  # The allowlists of the packages compared here, in one file for the one invocation.
  allowlist=$logs/allowlist-$(short "$base").txt
  : >"$allowlist"
  for product in "${compared[@]}"; do
    file=Packages/${package_of[$product]}/api-breakage-allowlist.txt
    if [[ -f "$file" ]]; then grep -v -E '^[[:space:]]*(#|$)' "$file" >>"$allowlist" || true; fi
  done
  allowlist_options=()
  [[ -s "$allowlist" ]] && allowlist_options=(--breakage-allowlist-path "$allowlist")

  log=$logs/compare-$(short "$base").log
  set +e
  swift package --scratch-path "$current" diagnose-api-breaking-changes "$base" \
    --products "${compared[@]}" --baseline-dir "$baselines" ${allowlist_options[@]+"${allowlist_options[@]}"} >"$log" 2>&1
  status=$?
  set -e
  # "<module><TAB>clean", "<module><TAB>skipped" or "<module><TAB>break<TAB><change>" per line.
  report=$(awk '
    /^No breaking changes detected in / { print $NF "\tclean"; next }
    /^[0-9]+ breaking changes? detected in / { module = $NF; sub(/:$/, "", module); next }
    /^  💔 / && module != "" { change = $0; sub(/^  💔 /, "", change); print module "\tbreak\t" change; next }
    /^Skipping .* because it does not exist in the baseline/ { print $2 "\tskipped"; next }
    { module = "" }
  ' "$log")
  tool_failed=0
  grep -q "^error: " "$log" && tool_failed=1
  [[ $status -ne 0 && "$report" != *$'\tbreak\t'* ]] && tool_failed=1
  for product in "${compared[@]}"; do
    for module in ${modules_of[$product]}; do
      grep -q "^$module"$'\t' <<<"$report" || tool_failed=1
    done
  done
  if [[ $tool_failed -eq 1 ]] && ! grep -q "^Build complete!" "$log"; then
    # The work tree does not build: every other comparison would fail the same way.
    grep -E "error:" "$log" | head -20 || true
    echo "api-check: the work tree does not build without traits (log: $log)"
    echo
    echo "API check failed"
    exit 1
  fi
  if [[ $tool_failed -eq 1 ]]; then
    grep -E "error:" "$log" | head -20 || true
    tail -15 "$log"
    echo "  ${compared[*]}: the comparison failed (log: $log)"
    failures+=("${compared[@]}")
    continue
  fi

  for product in "${compared[@]}"; do
    package=${package_of[$product]}
    changes=()
    for module in ${modules_of[$product]}; do
      while IFS=$'\t' read -r _ _ change; do changes+=("$change"); done < <(grep "^$module"$'\tbreak\t' <<<"$report" || true)
    done
    now=$(current_version "$package")
    was=$(version_at "$base" "$package")
    versions="VERSION ${was:-none} → ${now:-none}"
    [[ "$now" == "$was" ]] && versions="VERSION $now"
    if [[ ${#changes[@]} -eq 0 ]]; then
      echo "  $product: no breaking change ($versions)"
      continue
    fi
    count="${#changes[@]} breaking change"
    [[ ${#changes[@]} -gt 1 ]] && count+="s"
    if [[ "$now" != "$was" ]] && changelog_says_breaking "$package" "$now"; then
      echo "  $product: $count, allowed ($versions, and \"## $now\" in Packages/$package/CHANGELOG.md has \"### Breaking\"):"
      printf '      %s\n' "${changes[@]}"
    else
      if [[ "$now" == "$was" ]]; then
        why="Packages/$package/VERSION is still $now: bump it and add a \"### Breaking\" section under \"## <new version>\" in Packages/$package/CHANGELOG.md"
      else
        why="VERSION ${was:-none} → $now, but the \"## $now\" section of Packages/$package/CHANGELOG.md has no \"### Breaking\" heading listing them"
      fi
      echo "  $product: $count against $(short "$base"), not allowed:"
      printf '      %s\n' "${changes[@]}"
      echo "    $why"
      failures+=("$product")
    fi
  done
done

echo
if [[ ${#failures[@]} -gt 0 ]]; then
  echo "API check failed: ${failures[*]}"
  exit 1
fi
echo "API check passed"
