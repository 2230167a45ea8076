# shellcheck shell=bash
# The temporary workspace, and what every exit undoes, whatever stopped the script: a server still running,
# the temporary PostgreSQL database, the directory itself. The summary (report.sh) comes last.
# Uses admin_url (the entry point); sets tmp, and reads server_pid, signal_pid and db_name as the runs set them.
# shellcheck disable=SC2154,SC2317 # admin_url, see above; the functions below run from the EXIT trap only

server_pid=
signal_pid=
db_name=

# open_workspace: makes the temporary directory $tmp and sets the traps that clean up after it.
open_workspace() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/rubrica-recipe.XXXXXX")
  chmod 755 "$tmp" # the service user must reach the app and data directories inside
  trap cleanup EXIT
  trap 'printf "FAIL interrupted\n"; exit 130' INT TERM
}

kill_server() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL ${signal_pid:+"$signal_pid"} "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}

drop_database() {
  if [[ -n $db_name ]]; then
    timeout 30 psql "$admin_url" -qX -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS \"$db_name\" WITH (FORCE)" >/dev/null 2>&1 ||
      warn "could not drop database $db_name"
  fi
}

cleanup() {
  local status=$?
  kill_server
  drop_database
  if [[ ${RECIPE_KEEP:-} == 1 ]]; then printf 'kept %s\n' "$tmp"; else rm -rf "$tmp"; fi
  finish "$status"
}
