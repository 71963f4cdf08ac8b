#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests, benchmarks and the demo.
#
# Sourced (Scripts/test.sh, Scripts/tsan.sh, Scripts/bench.sh):
#   kiln_postgres_start      starts a cluster once, exports KILN_POSTGRES_URL and
#                            KILN_POSTGRES_DIR, and stops it when the shell exits
#   kiln_postgres_stop       stops and deletes it
# Run:
#   Scripts/lib/postgres.sh start          prints "url dir" of a new cluster (left running)
#   Scripts/lib/postgres.sh stop DIR       stops and deletes the cluster in DIR
#   Scripts/lib/postgres.sh restart DIR    restarts it (fast shutdown: sessions are cut)
#   Scripts/lib/postgres.sh halt DIR       stops it but keeps its files (`resume` restarts it)
#   Scripts/lib/postgres.sh resume DIR
#
# The cluster lives in a temporary directory owned by the `postgres` user (the server
# refuses to run as root), listens on 127.0.0.1 on a free port, trusts local connections
# and runs without fsync: it is for tests, never for data. The server package is
# installed with apt-get when no PostgreSQL 15 binaries are found.

# The folder holding initdb and pg_ctl, installing the server when missing.
kiln_postgres_bin() {
  local bin
  for bin in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    if [[ -x "$bin/initdb" && -x "$bin/pg_ctl" ]]; then
      echo "$bin"
      return 0
    fi
  done
  if [[ "$(uname -s)" == "Linux" ]] && command -v apt-get >/dev/null; then
    echo "Installing the PostgreSQL server…" >&2
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq postgresql-15 >/dev/null 2>&1 ||
      DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq postgresql >/dev/null 2>&1
    for bin in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
      if [[ -x "$bin/initdb" ]]; then
        echo "$bin"
        return 0
      fi
    done
  fi
  command -v initdb >/dev/null && dirname "$(command -v initdb)" && return 0
  echo "PostgreSQL server binaries (initdb, pg_ctl) not found and could not be installed" >&2
  return 1
}

# Runs a command as the cluster's owner: `postgres` when we are root, ourselves otherwise.
kiln_postgres_as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# A free TCP port on 127.0.0.1.
kiln_postgres_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Creates and starts a cluster; prints "url dir".
kiln_postgres_create() {
  local bin dir port
  bin=$(kiln_postgres_bin) || return 1
  dir=$(mktemp -d "${TMPDIR:-/tmp}/kiln-postgres.XXXXXX") || return 1
  chmod 755 "$dir"
  [[ $(id -u) -eq 0 ]] && chown postgres: "$dir"
  if ! kiln_postgres_as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 \
    >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    return 1
  fi
  port=$(kiln_postgres_free_port)
  {
    echo "port = $port"
    echo "listen_addresses = '127.0.0.1'"
    echo "unix_socket_directories = '$dir'"
    echo "fsync = off"
    echo "synchronous_commit = off"
    echo "full_page_writes = off"
    echo "max_connections = 300"
  } >>"$dir/data/postgresql.conf"
  echo "$port" >"$dir/port"
  if ! kiln_postgres_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null; then
    cat "$dir/server.log" >&2
    rm -rf "$dir"
    return 1
  fi
  echo "postgres://postgres@127.0.0.1:$port/postgres $dir"
}

# pg_ctl on the cluster in $2: stop (and delete), restart, halt, resume.
kiln_postgres_control() {
  local action=$1 dir=$2 bin
  [[ -d "$dir/data" ]] || {
    echo "no cluster in $dir" >&2
    return 1
  }
  bin=$(kiln_postgres_bin) || return 1
  case "$action" in
    stop)
      kiln_postgres_as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
      rm -rf "$dir"
      ;;
    restart) kiln_postgres_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w restart >/dev/null ;;
    halt) kiln_postgres_as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null ;;
    resume) kiln_postgres_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null ;;
    *)
      echo "unknown action $action" >&2
      return 1
      ;;
  esac
}

# Starts one cluster for this shell (unless KILN_POSTGRES_URL is already set) and stops it
# when the shell exits, whether the tests pass or not.
kiln_postgres_start() {
  if [[ -n "${KILN_POSTGRES_URL:-}" ]]; then return 0; fi
  local created
  if ! created=$(kiln_postgres_create); then
    echo "Could not start PostgreSQL: the PostgreSQL suites will fail" >&2
    return 1
  fi
  export KILN_POSTGRES_URL=${created% *}
  export KILN_POSTGRES_DIR=${created#* }
  KILN_POSTGRES_OWNED=1
  echo "PostgreSQL 15 running at $KILN_POSTGRES_URL"
}

kiln_postgres_stop() {
  if [[ "${KILN_POSTGRES_OWNED:-0}" == 1 && -n "${KILN_POSTGRES_DIR:-}" ]]; then
    kiln_postgres_control stop "$KILN_POSTGRES_DIR"
    KILN_POSTGRES_OWNED=0
  fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -uo pipefail
  case "${1:-}" in
    start) kiln_postgres_create ;;
    stop | restart | halt | resume) kiln_postgres_control "$1" "${2:?usage: $0 $1 DIR}" ;;
    *)
      echo "usage: $0 start | stop DIR | restart DIR | halt DIR | resume DIR" >&2
      exit 2
      ;;
  esac
fi
