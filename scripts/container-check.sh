#!/usr/bin/env bash
# Builds the Dockerfile with buildah, Debian's engine-free image builder, and runs the image it made: the check
# that the Dockerfile builds what it says where no Docker engine runs. Root only (buildah's storage).
#
#   bash scripts/container-check.sh
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 bash scripts/container-check.sh
#
# 1. The base image. This environment reaches Debian's packages and the npm registry, not an image registry, so
#    node:24-trixie-slim is stood in for by the same parts: Debian trixie (debootstrap, minbase), the Node.js of
#    .node-version (scripts/pinned-node.sh), npm, and the user `node` (1000). It also trusts this machine's CA
#    bundle, through which the egress to the npm registry passes. Built once per Node.js version and kept.
# 2. The image: `buildah bud` of the committed HEAD (cloned, so .dockerignore and the context are the real ones),
#    with NODE_IMAGE pointing at that base. RUN steps use chroot isolation and the host's network: this kernel
#    gives containers no cgroups (crun refuses), and the build's `npm ci` needs the registry.
# 3. Checks on the image's configuration and file set, then runs of its CMD as its USER (buildah run, chroot
#    isolation, the host's network): on the embedded database (an empty start prints no key; the CLI makes a
#    tenant and key; a second start serves them) and, with DATABASE_URL, on a fresh PostgreSQL database behind the
#    one-shot migration. Each run: /health, the image's HEALTHCHECK command, /ready, /metrics, a contact created
#    and read back, and SIGTERM ending it with exit code 0.
# Prints PASS/FAIL lines and "container check: PASS|FAIL"; exits 1 on any failure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
admin_url=${DATABASE_URL:-}
redis_url=${REDIS_URL:-}
node_version=$(tr -d '[:space:]' <"$root/.node-version")
base=localhost/rubrica-node-base:$node_version-trixie
image=localhost/rubrica-check:$$
work=$(mktemp -d /tmp/rubrica-container.XXXXXX)
failures=0 ctr='' db_name='' server_pid=''

pass() { printf 'PASS %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
die() { fail "$*"; exit 1; }
check() { # check <description> <command...>: PASS or FAIL by the command's status (its output dropped)
  local what=$1
  shift
  if "$@" >/dev/null; then pass "$what"; else fail "$what"; fi
}

cleanup() {
  local status=$?
  if [[ -n $server_pid ]]; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  if [[ -n $ctr ]]; then buildah rm "$ctr" >/dev/null 2>&1 || true; fi
  buildah rmi "$image" >/dev/null 2>&1 || true
  if [[ -n $db_name ]]; then psql "$admin_url" -qX -c "DROP DATABASE IF EXISTS \"$db_name\" WITH (FORCE)" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
  if ((failures == 0 && status == 0)); then echo "container check: PASS"; else echo "container check: FAIL"; exit 1; fi
}
trap cleanup EXIT

[[ $(id -u) == 0 ]] || die "run as root (buildah keeps its images in /var/lib/containers)"
for tool in buildah debootstrap git curl jq psql; do command -v "$tool" >/dev/null || die "$tool is missing (docs/deployment.md, Containers)"; done

build_base() {
  if buildah inspect --type image "$base" >/dev/null 2>&1; then pass "base image $base (kept from an earlier run)"; return; fi
  local context=$work/base node_bin npm_version
  mkdir -p "$context"
  debootstrap --variant=minbase trixie "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log"; die "debootstrap of Debian trixie"; }
  node_bin=$(bash "$root/scripts/pinned-node.sh" "$work/node" "$node_version")
  cp "$node_bin/node" "$context/node"
  # The npm that npm's own registry marks as the one bundled with this Node.js line would do as well; the
  # machine's is what built and tested the lockfile.
  npm_version=$(npm --version)
  (cd "$context" && npm pack "npm@$npm_version" --silent >/dev/null)
  cp /etc/ssl/certs/ca-certificates.crt "$context/"
  cat >"$context/Containerfile" <<'EOF'
FROM scratch
ADD rootfs.tar /
COPY node /usr/local/bin/node
COPY npm.tgz ca-certificates.crt /tmp/
RUN mkdir -p /usr/local/lib/node_modules/npm /etc/ssl/certs \
 && tar -xzf /tmp/npm.tgz -C /usr/local/lib/node_modules/npm --strip-components=1 \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && mv /tmp/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt && rm /tmp/npm.tgz \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --create-home node
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
EOF
  mv "$context"/npm-*.tgz "$context/npm.tgz"
  tar -C "$work/rootfs" -cf "$context/rootfs.tar" .
  buildah bud --quiet --isolation chroot --network host -t "$base" "$context" >/dev/null || die "base image"
  pass "base image $base: Debian trixie minbase, Node.js $node_version, npm $npm_version, user node (1000)"
}

build_image() {
  git clone -q "$root" "$work/context"
  local started=$SECONDS
  # npm ci opens many files at once: the limit of RUN steps is raised to the machine's own.
  if buildah bud --isolation chroot --network host --format docker -v "$HOME/.npm:/root/.npm" \
    --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" \
    --build-arg "NODE_IMAGE=$base" -t "$image" "$work/context" >"$work/build.log" 2>&1; then
    pass "the Dockerfile builds (buildah bud, $((SECONDS - started)) s)"
  else
    tail -n 30 "$work/build.log"
    die "buildah bud of the Dockerfile"
  fi
}

config_of() { jq -c ".$1" <<<"$image_config"; }

check_config() {
  image_config=$(buildah inspect --type image "$image" | jq -c .Docker.config)
  check "USER is 1000:1000" test "$(config_of User)" == '"1000:1000"'
  check "CMD is node dist/server.js" test "$(config_of Cmd)" == '["node","dist/server.js"]'
  check "VOLUME /data" grep -q '"/data"' <<<"$(config_of Volumes)"
  check "EXPOSE 3000 and 9464" grep -q '"3000/tcp".*"9464/tcp"' <<<"$(config_of ExposedPorts)"
  local env
  env=$(config_of Env)
  for variable in NODE_ENV=production DATA_DIR=/data DEMO_ON_EMPTY=false METRICS_ENABLED=true HOST=0.0.0.0; do
    check "ENV $variable" grep -q "\"$variable\"" <<<"$env"
  done
  healthcheck=$(config_of Healthcheck.Test)
  check "a HEALTHCHECK command" grep -q '^\["CMD","node","-e",' <<<"$healthcheck"
}

check_file_set() {
  ctr=$(buildah from --quiet "$image")
  local app package
  app=$(buildah mount "$ctr")/app
  for package in tap typescript prisma @prisma/engines tsx @biomejs/biome; do
    check "$package (development only) is not in the image" test ! -e "$app/node_modules/$package"
  done
  for package in @prisma/client @electric-sql/pglite fastify pg; do
    check "$package is in the image" test -f "$app/node_modules/$package/package.json"
  done
  for path in dist/server.js dist/cli/main.js dist/.build-stamp bin/rubrica.js package.json; do
    check "$path is in the image" test -f "$app/$path"
  done
  check "prisma/migrations holds the migrations" test -n "$(find "$app/prisma/migrations" -name migration.sql)"
  check "no sources, tests or build caches" test ! -e "$app/src" -a ! -e "$app/test" -a ! -e "$app/node_modules/.cache"
  check "nothing under /app is writable by the service user" test -z "$(in_image find /app -writable -print -quit)"
  check "/data is writable by the service user" in_image test -w /data
  check "the admin CLI finds dist/ up to date" in_image node bin/rubrica.js --help
}

# in_image [NAME=value...] command...: runs a command in the image as its USER, with these variables set.
in_image() {
  local env=()
  while [[ $# -gt 0 && $1 == *=* ]]; do env+=(--env "$1"); shift; done
  buildah run --isolation chroot --user 1000:1000 "${env[@]}" "$ctr" -- "$@" 2>>"$work/run.err"
}

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
http() { curl -s -o "$work/body" -w '%{http_code}' "$@" || true; }

# start <log> [NAME=value...]: the image's CMD in the background, on ports of its own; sets server_pid.
start() {
  local log=$1
  shift
  port=$(free_port) metrics_port=$(free_port)
  in_image PORT="$port" METRICS_PORT="$metrics_port" "$@" node dist/server.js >"$log" 2>&1 &
  local deadline=$((SECONDS + 90))
  until [[ $(http "http://127.0.0.1:$port/health") == 200 ]]; do
    ((SECONDS < deadline)) || { tail -n 20 "$log"; die "no 200 from /health within 90 s"; }
    sleep 0.3
  done
  # Chroot isolation shares the host's process table: the server logs its pid, which SIGTERM is sent to.
  server_pid=$(grep -o '"pid":[0-9]*' "$log" | head -n 1 | cut -d: -f2)
}

# stop <name> <log>: SIGTERM, as `docker stop` sends; the server must end with exit code 0 within 30 s.
stop() {
  local name=$1 log=$2 waited=0
  kill -TERM "$server_pid"
  while kill -0 "$server_pid" 2>/dev/null && ((waited++ < 300)); do sleep 0.1; done
  check "[$name] SIGTERM ends the server" test "$(kill -0 "$server_pid" 2>/dev/null && echo running)" == ""
  server_pid=''
  wait || true
  check "[$name] it closed gracefully" grep -q '"signal":"SIGTERM"' "$log"
  check "[$name] no key in its log" test -z "$(grep -o 'svc_[0-9a-f]\{48\}' "$log")"
  if healthcheck_succeeds; then fail "[$name] the HEALTHCHECK command succeeds with no server"; else
    pass "[$name] the HEALTHCHECK command fails once the server is gone"
  fi
}

healthcheck_succeeds() { in_image PORT="$port" node -e "$(jq -r '.[3]' <<<"$healthcheck")"; }

serve() { # serve <name> <key> [NAME=value...]: a start, the checks of a running image, its stop
  local name=$1 key=$2 log=$work/$RANDOM.log id
  shift 2
  start "$log" "$@"
  pass "[$name] GET /health = 200"
  check "[$name] the image's HEALTHCHECK command succeeds" healthcheck_succeeds
  check "[$name] GET /ready = 200" test "$(http "http://127.0.0.1:$port/ready")" == 200
  check "[$name] metrics on METRICS_PORT" test "$(http "http://127.0.0.1:$metrics_port/metrics")" == 200
  if [[ $(http -H "authorization: Bearer $key" -H 'content-type: application/json' \
    -d "{\"email\":\"check-$RANDOM@example.com\",\"firstName\":\"Prova\"}" "http://127.0.0.1:$port/api/v1/contacts") == 201 ]]; then
    id=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).id' "$work/body")
    check "[$name] a contact created (201) and read back (200)" \
      test "$(http -H "authorization: Bearer $key" "http://127.0.0.1:$port/api/v1/contacts/$id")" == 200
  else
    fail "[$name] POST /api/v1/contacts: $(head -c 300 "$work/body")"
  fi
  stop "$name" "$log"
}

# new_key [NAME=value...]: a tenant and an admin key made with the image's CLI; prints the key.
new_key() {
  local tenant
  tenant=$(in_image "$@" node bin/rubrica.js tenant create --name Prova --json) || die "tenant create"
  in_image "$@" node bin/rubrica.js key create --tenant "$(node -p 'JSON.parse(process.argv[1]).id' "$tenant")" \
    --role admin --scopes contacts:read,contacts:write --json | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).key'
}

run_embedded() {
  local log=$work/empty.log key
  start "$log"
  pass "[embedded] an empty start answers /health"
  stop "embedded, empty" "$log"
  key=$(new_key)
  serve embedded "$key"
}

run_postgres() {
  db_name=rubrica_container_$$
  psql "$admin_url" -qX -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$db_name\"" >/dev/null || die "CREATE DATABASE"
  local url=${admin_url%/*}/$db_name key env
  env=(DATABASE_URL="$url")
  if [[ -n $redis_url ]]; then env+=(REDIS_URL="$redis_url"); fi
  check "[postgres] the one-shot migration (db deploy)" in_image "${env[@]}" node bin/rubrica.js db deploy --json
  check "[postgres] db deploy again applies nothing" grep -q '"applied":\[\]' <<<"$(in_image "${env[@]}" node bin/rubrica.js db deploy --json)"
  key=$(new_key "${env[@]}")
  serve postgres "$key" "${env[@]}"
}

build_base
build_image
check_config
check_file_set
run_embedded
if [[ -n $admin_url ]]; then run_postgres; else echo "SKIP PostgreSQL run (set DATABASE_URL)"; fi
