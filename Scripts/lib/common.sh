# Shared helpers for Kiln's scripts. Source it; do not run it.

# Runs a command as root: directly when we are root, through sudo otherwise.
kiln_as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# Makes sure the C libraries the package links are present (a fresh Debian or Ubuntu
# machine may lack the SQLite headers KilnStorage's system-library target needs).
kiln_ensure_system_libraries() {
  if [[ "$(uname -s)" != "Linux" ]]; then return 0; fi
  local missing=()
  [[ -f /usr/include/sqlite3.h ]] || missing+=(libsqlite3-dev)
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "Installing ${missing[*]}…"
    kiln_as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive kiln_as_root apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}
