#!/usr/bin/env bash
# A Citus cluster for rubrica's tests and benchmarks on this machine: Citus 13.2.2 installed into PostgreSQL 15 from
# ../shared/citus (install.sh, as root), a coordinator on 9700 and workers on 9701 and 9702 (cluster.sh), and the
# settings rubrica needs on every node (docs/operations.md, "Running on Citus"). Idempotent: a cluster already
# running is left running, with the settings applied again.
#   usage: scripts/citus-cluster.sh          then: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:9700/postgres \
#                                                  TEST_CITUS_WORKERS=127.0.0.1:9701,127.0.0.1:9702 npm test
set -euo pipefail
cd "$(dirname "$0")/.."
citus_dir=${CITUS_DIR:-../shared/citus}
[ -f "$citus_dir/cluster.sh" ] || { echo "citus-cluster.sh: no $citus_dir/cluster.sh (set CITUS_DIR)" >&2; exit 1; }

bash "$citus_dir/install.sh"
# Triggers on distributed tables (rubrica's only touch the same tenant's co-located rows), and a stopped worker's
# tenants refused within 5 s rather than 30.
settings=("citus.enable_unsafe_triggers = on" "citus.node_connection_timeout = 5000")
export CITUS_CONF=$(printf '%s\n' "${settings[@]}")
bash "$citus_dir/cluster.sh" start
for port in 9700 9701 9702; do
  for setting in "${settings[@]}"; do
    psql -h 127.0.0.1 -p "$port" -U postgres -v ON_ERROR_STOP=1 -qAt \
      -c "ALTER SYSTEM SET ${setting%% =*} = '${setting#*= }'" postgres >/dev/null
  done
  psql -h 127.0.0.1 -p "$port" -U postgres -qAt -c 'SELECT pg_reload_conf()' postgres >/dev/null
done
echo "Citus ready: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:9700/postgres TEST_CITUS_WORKERS=127.0.0.1:9701,127.0.0.1:9702"
