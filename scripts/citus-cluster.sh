#!/usr/bin/env bash
# A Citus cluster on this machine for rubrica's tests and benchmarks: a coordinator on 9700 and workers on 9701 and
# 9702, each its own PostgreSQL 15 data directory under $CITUS_ROOT (default ${TMPDIR:-/tmp}/citus-cluster), trust
# authentication on 127.0.0.1 only, with the settings rubrica needs on every node (docs/deployment.md, "Running on
# Citus"). It uses the Citus installed into PostgreSQL 15 (Citus's Debian/Ubuntu packages, or a build); only where
# none is installed does it run ../shared/citus/install.sh (or $CITUS_DIR's), which needs root.
#   scripts/citus-cluster.sh [start]    initialise (first time) and start the three nodes; idempotent
#   scripts/citus-cluster.sh db NAME    database NAME on every node, with the extension and the workers registered
#   scripts/citus-cluster.sh drop NAME  drop NAME on every node
#   scripts/citus-cluster.sh stop
# Then: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:9700/postgres TEST_CITUS_WORKERS=127.0.0.1:9701,127.0.0.1:9702 npm test
set -euo pipefail
cd "$(dirname "$0")/.."

pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
[ -x "$pg_config" ] || pg_config=$(command -v pg_config || true)
[ -n "$pg_config" ] || { echo "citus-cluster.sh: no PostgreSQL 15 (pg_config); see docs/deployment.md#installing-citus" >&2; exit 1; }
bin=$("$pg_config" --bindir)
root=${CITUS_ROOT:-${TMPDIR:-/tmp}/citus-cluster}
coordinator=9700
workers=(9701 9702)
ports=("$coordinator" "${workers[@]}")
# Triggers on distributed tables (rubrica's only touch the same tenant's co-located rows); a stopped worker's
# tenants refused within 5 s rather than 30.
settings=("citus.enable_unsafe_triggers = on" "citus.node_connection_timeout = 5000")

as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
sql() { psql -h 127.0.0.1 -p "$1" -U postgres -v ON_ERROR_STOP=1 -qAtc "$2" "${3:-postgres}"; }

ensure_citus() {
  [ -f "$("$pg_config" --pkglibdir)/citus.so" ] && return
  local installer=${CITUS_DIR:-../shared/citus}/install.sh
  [ -f "$installer" ] || {
    echo "citus-cluster.sh: Citus is not installed into $("$pg_config" --pkglibdir); see docs/deployment.md#installing-citus" >&2
    exit 1
  }
  bash "$installer"
}

start() {
  ensure_citus
  mkdir -p "$root"
  [ "$(id -u)" = 0 ] && chown postgres "$root"
  for port in "${ports[@]}"; do
    local dir=$root/n$port
    if [ ! -f "$dir/PG_VERSION" ]; then
      as_postgres "$bin/initdb" -D "$dir" -U postgres -A trust >/dev/null
      {
        echo "port = $port"
        echo "listen_addresses = '127.0.0.1'"
        echo "unix_socket_directories = '$root'"
        echo "shared_preload_libraries = 'citus'"
        echo "max_connections = 300"
        printf '%s\n' "${settings[@]}"
      } >>"$dir/postgresql.conf"
    fi
    if ! pg_isready -h 127.0.0.1 -p "$port" -q; then
      as_postgres "$bin/pg_ctl" -D "$dir" -l "$dir/log" -w start >/dev/null || { tail -n5 "$dir/log" >&2; exit 1; }
    fi
    # A cluster started before these settings existed gets them too.
    for setting in "${settings[@]}"; do sql "$port" "ALTER SYSTEM SET ${setting%% =*} = '${setting#*= }'" >/dev/null; done
    sql "$port" 'SELECT pg_reload_conf()' >/dev/null
  done
  echo "Citus ready: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$coordinator/postgres TEST_CITUS_WORKERS=127.0.0.1:${workers[0]},127.0.0.1:${workers[1]}"
}

create_database() {
  local name=$1
  for port in "${ports[@]}"; do
    [ -n "$(sql "$port" "SELECT 1 FROM pg_database WHERE datname = '$name'")" ] || sql "$port" "CREATE DATABASE \"$name\""
    sql "$port" 'CREATE EXTENSION IF NOT EXISTS citus' "$name"
  done
  sql "$coordinator" "SELECT citus_set_coordinator_host('127.0.0.1', $coordinator)" "$name" >/dev/null
  for port in "${workers[@]}"; do
    [ -n "$(sql "$coordinator" "SELECT 1 FROM pg_dist_node WHERE nodeport = $port" "$name")" ] \
      || sql "$coordinator" "SELECT citus_add_node('127.0.0.1', $port)" "$name" >/dev/null
  done
  echo "postgres://postgres@127.0.0.1:$coordinator/$name"
}

case "${1:-start}" in
  start) start ;;
  db) create_database "${2:?usage: citus-cluster.sh db NAME}" ;;
  drop) for port in "${ports[@]}"; do sql "$port" "DROP DATABASE IF EXISTS \"${2:?usage: citus-cluster.sh drop NAME}\" WITH (FORCE)"; done ;;
  stop) for port in "${ports[@]}"; do as_postgres "$bin/pg_ctl" -D "$root/n$port" -m fast -w stop >/dev/null 2>&1 || true; done ;;
  *) sed -n 2,11p "$0"; exit 2 ;;
esac
