# shellcheck shell=bash
# The runs of the assembled image: on the embedded database, on a fresh PostgreSQL database behind the one-shot
# migration, and on the embedded database again under a terminal. Each start makes the same checks (run_image):
# health, the image's HEALTHCHECK, readiness, metrics, a real API call, and a graceful SIGTERM.
# Uses health_path, admin_url, redis_url and helper (the entry point), tmp (cleanup.sh), healthcheck, port,
# metrics_port, server_pid and signal_pid (image.sh).
# shellcheck disable=SC2015,SC2154 # pass and fail always succeed; globals of earlier parts, listed above

http() { node "$helper" http "$@"; } # prints the status, then the body
status_of() { head -n 1 <<<"$1"; }
body_of() { tail -n +2 <<<"$1"; }
show_log() { printf '    server output (last lines):\n'; tail -n 25 "$1" | sed 's/^/    /'; }
healthcheck_succeeds() { in_image PORT="$port" timeout 10 "${healthcheck[@]}"; }

# run_image <name> <log> <key> [--tty] [NAME=value...]: starts the image's CMD with these overrides and makes the
# shared checks with the key, ending with SIGTERM.
run_image() {
  local name=$1 log=$2 key=$3
  shift 3
  start_server "$log" "$@"
  local origin="http://127.0.0.1:$port"
  wait_until_healthy "$name" "$log" "$origin"
  if [[ $health_path == /health && ${#healthcheck[@]} -gt 0 ]]; then
    healthcheck_succeeds && pass "[$name] the image's HEALTHCHECK command succeeds" ||
      fail "[$name] the image's HEALTHCHECK command failed"
  else
    skip "[$name] HEALTHCHECK command (HEALTH_PATH=$health_path)"
  fi
  check_ready_and_metrics "$name" "$origin"
  check_contacts "$name" "$origin" "$key"
  stop_gracefully "$name" "$log"
}

wait_until_healthy() {
  local name=$1 log=$2 origin=$3 started=$EPOCHREALTIME response
  local deadline=$((SECONDS + 90))
  while :; do
    response=$(http GET "$origin$health_path")
    [[ $(status_of "$response") == 200 ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then show_log "$log"; die "[$name] the server exited before answering $health_path"; fi
    if ((SECONDS > deadline)); then show_log "$log"; die "[$name] no 200 from $health_path within 90 s"; fi
    sleep 0.3
  done
  pass "[$name] GET $health_path = 200 after $(since "$started") ($(body_of "$response"))"
  timings+=("[$name] start to first 200: $(since "$started")")
}

check_ready_and_metrics() {
  local name=$1 origin=$2 response
  response=$(http GET "$origin/ready")
  [[ $(status_of "$response") == 200 ]] && pass "[$name] GET /ready = 200 ($(body_of "$response"))" ||
    fail "[$name] GET /ready = $(status_of "$response") $(body_of "$response")"
  response=$(http GET "http://127.0.0.1:$metrics_port/metrics")
  [[ $(status_of "$response") == 200 && $response == *rubrica_* ]] && pass "[$name] metrics served on METRICS_PORT" ||
    fail "[$name] GET /metrics on METRICS_PORT = $(status_of "$response")"
}

# A contact created and read back with the key.
check_contacts() {
  local name=$1 origin=$2 key=$3 email="recipe-$RANDOM$RANDOM@example.com" id response
  response=$(http POST "$origin/api/v1/contacts" "$key" "{\"email\":\"$email\",\"firstName\":\"Recipe\",\"phone\":\"+39 02 1234 5678\"}")
  if [[ $(status_of "$response") == 201 ]]; then
    id=$(node "$helper" get "$(body_of "$response")" id)
    pass "[$name] POST /api/v1/contacts = 201 ($id)"
    response=$(http GET "$origin/api/v1/contacts/$id" "$key")
    [[ $(status_of "$response") == 200 && $response == *"$email"* ]] && pass "[$name] GET /api/v1/contacts/$id = 200" ||
      fail "[$name] GET /api/v1/contacts/$id = $(status_of "$response") $(body_of "$response" | head -c 300)"
  else
    fail "[$name] POST /api/v1/contacts = $(status_of "$response") $(body_of "$response" | head -c 300)"
  fi
}

# SIGTERM, as `docker stop` sends: exit code 0 within 30 s, after which the HEALTHCHECK command must fail.
stop_gracefully() {
  local name=$1 log=$2 stopping=$EPOCHREALTIME code=0 waited=0
  kill -TERM "$signal_pid"
  while kill -0 "$server_pid" 2>/dev/null && ((waited++ < 300)); do sleep 0.1; done
  if kill -0 "$server_pid" 2>/dev/null; then show_log "$log"; die "[$name] still running 30 s after SIGTERM"; fi
  wait "$server_pid" || code=$?
  server_pid=
  signal_pid=
  [[ $code == 0 ]] && pass "[$name] SIGTERM: exit code 0 after $(since "$stopping")" ||
    { fail "[$name] SIGTERM: exit code $code"; show_log "$log"; }
  if [[ ${#healthcheck[@]} -gt 0 ]]; then
    ! healthcheck_succeeds && pass "[$name] the HEALTHCHECK command fails once the server is gone" ||
      fail "[$name] the HEALTHCHECK command succeeds with no server"
  fi
}

# Embedded PGlite in DATA_DIR (the image's default). The first start on the empty database prints no key: the
# image sets DEMO_ON_EMPTY=false, since a key on stdout lands in `docker logs` and every log collector. The first
# tenant and key come from the CLI (docs/deployment.md, "Containers"), with the server stopped, then the server runs
# with that key. Sets embedded_key.
run_embedded() {
  local name=embedded log=$tmp/embedded-empty.log tenant tenant_id issued
  start_server "$log"
  wait_until_healthy "$name, empty" "$log" "http://127.0.0.1:$port"
  stop_gracefully "$name, empty" "$log"
  ! grep -q 'svc_[0-9a-f]\{48\}' "$log" && pass "[$name] the first start on an empty database printed no key" ||
    fail "[$name] the first start printed a key"
  tenant=$(in_image timeout 60 node bin/rubrica.js tenant create --name Recipe --json) || die "[$name] tenant create"
  tenant_id=$(node "$helper" get "$tenant" id)
  issued=$(in_image timeout 60 node bin/rubrica.js key create --tenant "$tenant_id" --role admin \
    --scopes contacts:read,contacts:write --json) || die "[$name] key create"
  embedded_key=$(node "$helper" get "$issued" key)
  [[ $embedded_key =~ ^svc_[0-9a-f]{48}$ ]] && pass "[$name] the first tenant and key made with the CLI" ||
    die "[$name] key create printed no key"
  run_image "$name" "$tmp/embedded.log" "$embedded_key"
}

# PostgreSQL: a fresh database, the documented one-shot migration, a tenant and a key from the CLI, then the
# server with MIGRATE_ON_START unset, as compose.yaml runs it.
run_postgres() {
  create_database
  migrate_and_create_key
  run_image postgres "$tmp/postgres.log" "$pg_key" "${pg_env[@]}"
}

# The embedded database again: a second start on the same DATA_DIR, under a terminal as `docker run -it` gives
# one (logs must not need development-only packages), with the key from the first start.
run_terminal() {
  local name="embedded, second start, terminal"
  run_image "$name" "$tmp/terminal.log" "$embedded_key" --tty
  ! grep -q 'svc_[0-9a-f]\{48\}' "$tmp/terminal.log" && pass "[$name] no key in the log" ||
    fail "[$name] a key was printed"
}

# A database for this run only (cleanup drops it); sets pg_env, the environment of every PostgreSQL command.
create_database() {
  local db_url
  db_name="rubrica_recipe_$$_$RANDOM"
  timeout 30 psql "$admin_url" -qX -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$db_name\"" >/dev/null ||
    { db_name=; die "could not create a database through DATABASE_URL"; }
  db_url=$(node "$helper" dburl "$admin_url" "$db_name")
  pg_env=(DATABASE_URL="$db_url" DEMO_ON_EMPTY=false)
  if [[ -n $redis_url ]]; then pg_env+=(REDIS_URL="$redis_url"); fi
}

cli() { in_image "${pg_env[@]}" timeout 60 node bin/rubrica.js "$@"; }

# The migration twice (the second must apply nothing), then a tenant and an admin key; sets pg_key.
migrate_and_create_key() {
  local out tenant tenant_id issued
  if out=$(cli db deploy --json 2>&1); then pass "[postgres] one-shot migration (node bin/rubrica.js db deploy): $out"; else
    die "[postgres] db deploy: $out"
  fi
  out=$(cli db deploy --json 2>&1) && [[ $out == *'"applied":[]'* ]] && pass "[postgres] db deploy again is a no-op: $out" ||
    fail "[postgres] second db deploy: $out"
  tenant=$(cli tenant create --name "Recipe $db_name" --json) || die "[postgres] tenant create"
  tenant_id=$(node "$helper" get "$tenant" id)
  issued=$(cli key create --tenant "$tenant_id" --role admin --scopes contacts:read,contacts:write --json) ||
    die "[postgres] key create"
  pg_key=$(node "$helper" get "$issued" key)
  [[ $pg_key =~ ^svc_[0-9a-f]{48}$ ]] && pass "[postgres] tenant $tenant_id and an admin key created with the CLI" ||
    die "[postgres] key create printed no key"
}
