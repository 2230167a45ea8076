#!/usr/bin/env bash
# Proves the Dockerfile's recipe where no Docker engine runs. In a temporary directory it clones the committed
# repository (HEAD, without uncommitted work), builds the Docker build context through .dockerignore, replays
# the Dockerfile (the build stage's COPY and RUN lines, the final stage's COPY lines) on the Node.js major of
# the base image, then runs the assembled final file set as the image would: the image's ENV, its numeric
# USER (when this script runs as root), its CMD and its HEALTHCHECK command. It checks the file set, one
# start on the embedded database and, when DATABASE_URL is given, one on a fresh PostgreSQL database behind
# the one-shot migration, with a real API call, readiness, metrics and a graceful SIGTERM each time.
#
# The Dockerfile is read, not copied: an instruction this script does not understand stops it, so the two
# cannot drift apart silently. Change them together (see the comments in the Dockerfile).
#
#   bash scripts/container-recipe.sh
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 \
#     bash scripts/container-recipe.sh
#
# Optional: RECIPE_REPO (repository to clone, default this one), RECIPE_NODE=image|host (default image:
# fetch the base image's Node.js major from the npm registry package node-linux-<arch>), HEALTH_PATH (default
# /health), RECIPE_KEEP=1 (keep the temporary directory), RECIPE_STEP_TIMEOUT (seconds per build step, 600).
# Needs git, node, npm, tar, setpriv (when root), script(1) (optional) and psql (with DATABASE_URL). Prints
# PASS/FAIL/SKIP lines and a closing "container recipe: PASS|FAIL" line; exits 1 on any failure.
# pass/fail always succeed, so `test && pass || fail` is safe; cleanup and helpers run through traps and calls.
# shellcheck disable=SC2015,SC2317
set -euo pipefail
umask 022 # as in a Docker build: files readable by the service user, writable by root only

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=${RECIPE_REPO:-$root}
health_path=${HEALTH_PATH:-/health}
step_timeout=${RECIPE_STEP_TIMEOUT:-600}
admin_url=${DATABASE_URL:-}
redis_url=${REDIS_URL:-}

failures=0
checks=0
pass() { checks=$((checks + 1)); printf 'PASS %s\n' "$*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); printf 'FAIL %s\n' "$*"; }
die() { failures=$((failures + 1)) && checks=$((checks + 1)) && printf 'FAIL %s\n' "$*" && exit 1; }
note() { printf -- '--- %s\n' "$*"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }'; }
timings=()

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rubrica-recipe.XXXXXX")
chmod 755 "$tmp" # the service user must reach the app and data directories inside
server_pid=
signal_pid=
db_name=
cleanup() {
  local status=$?
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL ${signal_pid:+"$signal_pid"} "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [[ -n $db_name ]]; then
    timeout 30 psql "$admin_url" -qX -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS \"$db_name\" WITH (FORCE)" >/dev/null 2>&1 ||
      printf 'WARN could not drop database %s\n' "$db_name"
  fi
  if [[ ${RECIPE_KEEP:-} == 1 ]]; then printf 'kept %s\n' "$tmp"; else rm -rf "$tmp"; fi
  ((${#timings[@]} == 0)) || printf '\nTimings:\n%s\n' "$(printf '  %s\n' "${timings[@]}")"
  if ((status == 0 && failures == 0)); then
    printf '\ncontainer recipe: PASS (%d checks)\n' "$checks"
  else
    printf '\ncontainer recipe: FAIL (%d of %d checks failed%s)\n' "$failures" "$checks" \
      "$( ((status == 0)) || printf ', stopped early')"
    ((status != 0)) || status=1
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'printf "FAIL interrupted\n"; exit 130' INT TERM

# Dockerfile interpreter, .dockerignore filter, file-set checks and small HTTP client, in one helper.
helper=$tmp/recipe-helper.mjs
cat >"$helper" <<'JS'
import { spawnSync } from 'node:child_process'
import { chownSync, cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { basename, dirname, join, posix } from 'node:path'

const [command, ...args] = process.argv.slice(2)
const fail = (message) => {
  console.error(`FAIL ${message}`)
  process.exit(2)
}

/** Instructions with continuations joined; comment lines dropped, also inside a continuation, as Docker does. */
function instructions(file) {
  const out = []
  let current = ''
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim()
    if (line.startsWith('#')) continue
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `
      continue
    }
    current += line
    if (current.trim()) out.push(current.trim())
    current = ''
  }
  if (current.trim()) out.push(current.trim())
  return out.map((line) => {
    const [, word, rest] = line.match(/^(\S+)\s*(.*)$/)
    return { op: word.toUpperCase(), rest, line }
  })
}

function stagesOf(file) {
  const globalArgs = {}
  const stages = []
  for (const step of instructions(file)) {
    if (step.op === 'ARG' && stages.length === 0) {
      const at = step.rest.indexOf('=')
      globalArgs[at < 0 ? step.rest : step.rest.slice(0, at)] = at < 0 ? '' : step.rest.slice(at + 1)
    } else if (step.op === 'FROM') {
      const m = step.rest.match(/^(\S+)(?:\s+AS\s+(\S+))?$/i) ?? fail(`cannot read: ${step.line}`)
      const image = m[1].replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => globalArgs[a ?? b] ?? fail(`no ARG for ${step.line}`))
      stages.push({ name: m[2] ?? String(stages.length), image, steps: [] })
    } else if (stages.length === 0) fail(`instruction before FROM: ${step.line}`)
    else stages.at(-1).steps.push(step)
  }
  if (stages.length === 0) fail('no FROM in the Dockerfile')
  return stages
}

/** .dockerignore rules as regular expressions (Go filepath.Match plus `**`), in file order. */
function ignoreRules(file) {
  if (!existsSync(file)) return []
  const rules = []
  for (let line of readFileSync(file, 'utf8').split('\n')) {
    line = line.trim()
    if (!line || line.startsWith('#')) continue
    const negate = line.startsWith('!')
    const pattern = posix.normalize((negate ? line.slice(1) : line).trim()).replace(/^\/+|\/+$/g, '')
    if (!pattern || pattern === '.') continue
    let re = ''
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]
      if (c === '*' && pattern[i + 1] === '*') {
        i++
        if (pattern[i + 1] === '/') {
          i++
          re += '(?:.*/)?'
        } else re += '.*'
      } else if (c === '*') re += '[^/]*'
      else if (c === '?') re += '[^/]'
      else if (c === '[' && pattern.indexOf(']', i) > i) {
        const end = pattern.indexOf(']', i)
        re += pattern.slice(i, end + 1).replace('[!', '[^')
        i = end
      } else re += c.replace(/[.+^${}()|\\\]]/g, '\\$&')
    }
    rules.push({ negate, re: new RegExp(`^${re}$`) })
  }
  return rules
}

/** Docker's rule: a path is excluded when the last rule matching it, or one of its parent folders, excludes. */
function ignored(path, rules) {
  const parts = path.split('/')
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'))
  let result = false
  for (const rule of rules) if (candidates.some((c) => rule.re.test(c))) result = !rule.negate
  return result
}

function context(clone, out) {
  const listed = spawnSync('git', ['-C', clone, 'ls-files', '-z'], { encoding: 'utf8' })
  if (listed.status !== 0) fail(`git ls-files: ${listed.stderr}`)
  const rules = ignoreRules(join(clone, '.dockerignore'))
  let kept = 0
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (ignored(file, rules)) continue
    mkdirSync(dirname(join(out, file)), { recursive: true })
    cpSync(join(clone, file), join(out, file), { preserveTimestamps: true, verbatimSymlinks: true })
    kept++
  }
  console.log(kept)
}

/** The final stage's RUN lines the script can reproduce, each with its effect outside WORKDIR. */
function finalRun(step, env, dataDir, image) {
  const m = step.rest.match(/^mkdir -p (\S+) && chown (\d+):(\d+) (\S+)$/)
  if (!m || m[1] !== m[4] || m[1] !== env.DATA_DIR)
    fail(`final stage: "${step.line}" is unknown to scripts/container-recipe.sh; teach it (finalRun) or keep the known line`)
  mkdirSync(dataDir, { recursive: true })
  if (process.getuid?.() === 0) chownSync(dataDir, Number(m[2]), Number(m[3]))
  image.dataDirOwner = `${m[2]}:${m[3]}`
}

function build(dockerfile, contextDir, stagesDir, appDir, dataDir, timeoutSeconds) {
  const stages = stagesOf(dockerfile)
  const states = new Map()
  const image = { base: stages.at(-1).image, env: {}, user: null, expose: [], volumes: [], healthcheck: null, cmd: null }
  stages.forEach((stage, index) => {
    const final = index === stages.length - 1
    const state = { dir: final ? appDir : join(stagesDir, stage.name), workdir: null, env: {} }
    states.set(stage.name, state)
    mkdirSync(state.dir, { recursive: true })
    /** A path of this stage, which must lie under its WORKDIR, mapped to the stage's directory here. */
    const local = (s, path, step) => {
      if (!s.workdir) fail(`${step.line}: no WORKDIR before it in its stage`)
      const absolute = posix.resolve(s.workdir, path)
      if (absolute !== s.workdir && !absolute.startsWith(`${s.workdir}/`))
        fail(`${step.line}: ${path} lies outside WORKDIR ${s.workdir}; the recipe script maps only WORKDIR`)
      return join(s.dir, posix.relative(s.workdir, absolute))
    }
    for (const step of stage.steps) {
      const { op, rest } = step
      if (op === 'WORKDIR') {
        if (state.workdir || !rest.startsWith('/')) fail(`${step.line}: one absolute WORKDIR per stage`)
        state.workdir = posix.normalize(rest)
      } else if (op === 'ENV') {
        for (const token of rest.split(/\s+/)) {
          const m = token.match(/^(\w+)=([^"'\s$]*)$/) ?? fail(`${step.line}: only unquoted NAME=value pairs`)
          state.env[m[1]] = m[2]
        }
      } else if (op === 'COPY') {
        const tokens = rest.split(/\s+/)
        let from = null
        while (tokens[0]?.startsWith('--')) {
          const flag = tokens.shift()
          if (flag.startsWith('--from=')) from = flag.slice('--from='.length)
          else if (flag !== '--link') fail(`${step.line}: ${flag} is not supported by the recipe script`)
        }
        if (tokens.length < 2 || tokens[0].startsWith('[')) fail(`${step.line}: only COPY src... dest`)
        const dest = tokens.pop()
        const target = local(state, dest, step)
        const intoFolder = dest.endsWith('/') || tokens.length > 1
        for (const src of tokens) {
          if (/[*?[]/.test(src)) fail(`${step.line}: no wildcards`)
          let source
          if (from) {
            const other = states.get(from) ?? fail(`${step.line}: no earlier stage ${from}`)
            source = local(other, src, step)
          } else {
            const relative = posix.normalize(src)
            if (relative.startsWith('..') || relative.startsWith('/')) fail(`${step.line}: ${src} is outside the context`)
            source = join(contextDir, relative)
          }
          if (!existsSync(source))
            fail(`${step.line}: ${src} is not in ${from ? `stage ${from}` : 'the build context (committed? excluded by .dockerignore?)'}`)
          if (statSync(source).isDirectory()) {
            cpSync(source, target, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true })
          } else {
            const file = intoFolder || (existsSync(target) && statSync(target).isDirectory()) ? join(target, basename(source)) : target
            mkdirSync(dirname(file), { recursive: true })
            cpSync(source, file, { preserveTimestamps: true })
          }
        }
      } else if (op === 'RUN' && final) {
        finalRun(step, state.env, dataDir, image)
      } else if (op === 'RUN') {
        if (rest.startsWith('[')) fail(`${step.line}: only shell-form RUN`)
        console.log(`--- [${stage.name}] RUN ${rest}`)
        const started = Date.now()
        const result = spawnSync('sh', ['-c', rest], {
          cwd: local(state, '.', step),
          env: { ...process.env, ...state.env },
          stdio: ['ignore', 'inherit', 'inherit'],
          timeout: timeoutSeconds * 1000,
          killSignal: 'SIGKILL',
        })
        if (result.error || result.status !== 0)
          fail(`[${stage.name}] RUN ${rest}: ${result.error?.message ?? `exit code ${result.status}`}`)
        console.log(`--- [${stage.name}] RUN took ${((Date.now() - started) / 1000).toFixed(1)} s`)
      } else if (final && op === 'USER') image.user = rest
      else if (final && op === 'EXPOSE') image.expose.push(...rest.split(/\s+/))
      else if (final && op === 'VOLUME') image.volumes.push(...rest.split(/\s+/))
      else if (final && op === 'HEALTHCHECK') {
        const m = rest.match(/^((?:--\S+\s+)*)CMD\s+(\[.*\])$/) ?? fail(`${step.line}: only exec-form HEALTHCHECK CMD`)
        image.healthcheck = { options: m[1].trim(), cmd: JSON.parse(m[2]) }
      } else if (final && op === 'CMD') {
        image.cmd = rest.startsWith('[') ? JSON.parse(rest) : fail(`${step.line}: only exec-form CMD`)
      } else if (op !== 'LABEL') fail(`${step.line}: not understood by scripts/container-recipe.sh`)
    }
    if (final) image.env = state.env
  })
  if (!image.cmd) fail('the final stage has no CMD')
  return image
}

/** Every lockfile package: dev-only ones must be absent from the final file set, production ones present. */
function verifyModules(app, lockfile) {
  const lock = JSON.parse(readFileSync(lockfile, 'utf8'))
  let production = 0
  let devOnly = 0
  const problems = []
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (!path) continue
    const present = existsSync(join(app, path))
    if (entry.dev || entry.devOptional) {
      devOnly++
      if (present) problems.push(`${path} (development only) is present`)
    } else if (!entry.optional) {
      production++
      if (!present) problems.push(`${path} (production) is missing`)
    }
  }
  for (const problem of problems.slice(0, 20)) console.log(`  ${problem}`)
  console.log(`${production} production packages present, ${devOnly} development-only packages absent`)
  process.exit(problems.length > 0 ? 1 : 0)
}

async function http(method, url, key, body) {
  const headers = {}
  if (key) headers.authorization = `Bearer ${key}`
  if (body) headers['content-type'] = 'application/json'
  try {
    const res = await fetch(url, { method, headers, body: body || undefined, signal: AbortSignal.timeout(5000) })
    console.log(res.status)
    console.log(await res.text())
  } catch (error) {
    console.log(0)
    console.log(error.cause?.code ?? error.message)
  }
}

if (command === 'base') console.log(stagesOf(args[0])[0].image)
else if (command === 'context') context(args[0], args[1])
else if (command === 'build') {
  const image = build(args[0], args[1], args[2], args[3], args[4], Number(args[5]))
  writeFileSync(args[6], JSON.stringify(image, null, 2))
} else if (command === 'get') {
  // A value from a JSON file or string: strings printed as is, arrays NUL-separated, env objects as NAME=value.
  const data = args[0].startsWith('{') ? JSON.parse(args[0]) : JSON.parse(readFileSync(args[0], 'utf8'))
  const value = args[1].split('.').reduce((v, k) => v?.[k], data)
  if (Array.isArray(value)) process.stdout.write(value.map((v) => `${v}\0`).join(''))
  else if (value && typeof value === 'object')
    process.stdout.write(Object.entries(value).map(([k, v]) => `${k}=${v}\0`).join(''))
  else process.stdout.write(value === undefined || value === null ? '' : String(value))
} else if (command === 'modules') verifyModules(args[0], args[1])
else if (command === 'port') {
  const server = createServer().listen(0, '127.0.0.1', () => {
    console.log(server.address().port)
    server.close()
  })
} else if (command === 'http') await http(args[0], args[1], args[2], args[3])
else if (command === 'dburl') {
  const url = new URL(args[0])
  url.pathname = `/${args[1]}`
  console.log(url.href)
} else fail(`unknown helper command ${command}`)
JS

# --- 1. The committed sources and the build context ----------------------------------------------------------
t0=$EPOCHREALTIME
note "cloning $repo (HEAD; uncommitted changes are not part of the recipe)"
timeout 300 git clone --quiet --no-local "$repo" "$tmp/src" || die "git clone of $repo"
note "commit $(git -C "$tmp/src" log -1 --format='%h %s' | cut -c1-100)"
[[ -f $tmp/src/Dockerfile ]] || die "no Dockerfile in the committed tree"
mkdir "$tmp/context"
files=$(node "$helper" context "$tmp/src" "$tmp/context") || die "the build context could not be made"
pass "build context: $files committed files pass .dockerignore"
timings+=("clone and context: $(since "$t0")")

# --- 2. Node.js of the base image --------------------------------------------------------------------------
t0=$EPOCHREALTIME
base=$(node "$helper" base "$tmp/src/Dockerfile")
major=$(sed -n 's/^node:\([0-9][0-9]*\).*/\1/p' <<<"$base")
node_bin=$(dirname "$(command -v node)")
if [[ ${RECIPE_NODE:-image} == image && -n $major ]]; then
  case $(uname -m) in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) arch= ;; esac
  mkdir "$tmp/node"
  # npm's node-linux-* packages carry the official Node.js binaries; npm's cache keeps them between runs.
  if [[ -n $arch ]] && tarball=$(cd "$tmp/node" && timeout 300 npm pack --silent "node-linux-$arch@$major" 2>/dev/null) &&
    tar -xzf "$tmp/node/$tarball" -C "$tmp/node" package/bin/node; then
    node_bin=$tmp/node/package/bin
  else
    printf 'WARN could not fetch Node.js %s from the npm registry; using this machine'"'"'s %s\n' "$major" "$(node --version)"
  fi
fi
export PATH="$node_bin:$PATH"
note "base image $base; building and running with Node.js $(node --version) (npm $(npm --version 2>/dev/null))"
timings+=("Node.js for the base image: $(since "$t0")")

# --- 3. The Dockerfile, replayed ----------------------------------------------------------------------------
t0=$EPOCHREALTIME
app=$tmp/app
data=$tmp/data
image=$tmp/image.json
node "$helper" build "$tmp/src/Dockerfile" "$tmp/context" "$tmp/stages" "$app" "$data" "$step_timeout" "$image" ||
  die "the Dockerfile's build could not be replayed (see above)"
pass "Dockerfile replayed: build stage run, final file set assembled in $(du -sh "$app" | cut -f1)"
timings+=("image build (npm ci, build, prune, copies): $(since "$t0")")

user=$(node "$helper" get "$image" user)
mapfile -d '' -t image_env < <(node "$helper" get "$image" env)
mapfile -d '' -t cmd < <(node "$helper" get "$image" cmd)
mapfile -d '' -t healthcheck < <(node "$helper" get "$image" healthcheck.cmd)
note "final stage: USER ${user:-root}, ENV ${image_env[*]}, CMD ${cmd[*]}"

# Run as the image's USER when this script is root; otherwise as whoever runs it.
as_user=()
if [[ $(id -u) == 0 ]]; then
  [[ $user =~ ^([0-9]+):([0-9]+)$ ]] || die "USER must be numeric uid:gid (got '$user')"
  as_user=(setpriv --reuid="${BASH_REMATCH[1]}" --regid="${BASH_REMATCH[2]}" --clear-groups)
  mkdir -p "$tmp/home" && chown "$user" "$tmp/home"
else
  mkdir -p "$tmp/home"
  printf 'WARN not root: running as %s; the file-ownership checks are skipped\n' "$(id -un)"
fi

# --- 4. The final file set --------------------------------------------------------------------------------
[[ $(node "$helper" get "$image" dataDirOwner) == "$user" ]] && pass "DATA_DIR is created owned by USER ($user)" ||
  fail "the final stage must create DATA_DIR owned by USER ($user)"
if out=$(node "$helper" modules "$app" "$tmp/src/package-lock.json"); then pass "node_modules: $out"; else
  fail "node_modules does not match the production dependencies:"; printf '%s\n' "$out"
fi
for package in tap typescript prisma @prisma/engines tsx @biomejs/biome; do
  [[ ! -e $app/node_modules/$package ]] && pass "$package is absent" || fail "$package (development) is in the final file set"
done
for package in @prisma/client @electric-sql/pglite fastify pg; do
  [[ -e $app/node_modules/$package/package.json ]] && pass "$package is present" || fail "$package is missing"
done
for path in dist/server.js dist/cli/main.js dist/.build-stamp bin/rubrica.js scripts/build-if-needed.js package.json; do
  [[ -f $app/$path ]] && pass "$path is present" || fail "$path is missing"
done
[[ -n $(find "$app/prisma/migrations" -name migration.sql 2>/dev/null) ]] && pass "prisma/migrations holds the migrations" ||
  fail "no migrations under prisma/migrations"
[[ ! -e $app/src && ! -e $app/test && ! -e $app/node_modules/.cache ]] && pass "no sources, tests or build caches in the final file set" ||
  fail "sources, tests or node_modules/.cache reached the final file set"
if [[ ${#as_user[@]} -gt 0 ]]; then
  writable=$("${as_user[@]}" find "$app" -writable -print 2>/dev/null | head -n 5 || true)
  [[ -z $writable ]] && pass "nothing under the app directory is writable by $user" ||
    fail "writable by $user: $writable"
  "${as_user[@]}" test -w "$data" && pass "DATA_DIR is writable by $user" || fail "DATA_DIR is not writable by $user"
fi

# Runs a command in the app directory as the image would: USER, a clean environment with the image's ENV
# (DATA_DIR moved to the temporary directory), then the given NAME=value overrides (later ones win).
image_command() { # sets `run`
  local -a overrides=()
  while [[ $# -gt 0 && $1 == *=* ]]; do overrides+=("$1"); shift; done
  run=("${as_user[@]}" env -i PATH="$node_bin:/usr/local/bin:/usr/bin:/bin" HOME="$tmp/home"
    "${image_env[@]}" DATA_DIR="$data" "${overrides[@]}" "$@")
}
in_image() { image_command "$@" && (cd "$app" && exec "${run[@]}"); }

help_err=$tmp/cli-help.err
if in_image node bin/rubrica.js --help >/dev/null 2>"$help_err" && ! grep -q building "$help_err"; then
  pass "the admin CLI runs and finds dist/ up to date (no rebuild attempted)"
else
  fail "the admin CLI: $(head -c 400 "$help_err")"
fi

# --- 5. Runs --------------------------------------------------------------------------------------------------
http() { node "$helper" http "$@"; } # prints the status, then the body
status_of() { head -n 1 <<<"$1"; }
body_of() { tail -n +2 <<<"$1"; }

# start_server <log> [--tty] NAME=value...: starts the image's CMD; sets server_pid (the job to wait for),
# signal_pid (the server process), port and metrics_port.
start_server() {
  local log=$1 tty=
  shift
  if [[ ${1:-} == --tty ]]; then tty=1 && shift; fi
  port=$(node "$helper" port)
  metrics_port=$(node "$helper" port)
  # Loopback only on this machine; the image itself listens on 0.0.0.0.
  image_command HOST=127.0.0.1 METRICS_HOST=127.0.0.1 PORT="$port" METRICS_PORT="$metrics_port" "$@" "${cmd[@]}"
  if [[ -n $tty ]]; then
    # A terminal on stdout, as `docker run -it` gives; script(1) -e exits with the server's exit code.
    (cd "$app" && export SHELL=/bin/bash && exec script -qefc "exec $(printf '%q ' "${run[@]}")" /dev/null) \
      >"$log" 2>&1 </dev/null &
    server_pid=$!
    signal_pid=
    for _ in {1..50}; do
      signal_pid=$(ps -o pid= --ppid "$server_pid" | tr -d ' ') && [[ -n $signal_pid ]] && break
      sleep 0.1
    done
    [[ -n $signal_pid ]] || die "script(1) started no server"
  else
    # exec: the background job is the server itself, so that signals reach it and $! is its pid.
    (cd "$app" && exec "${run[@]}") >"$log" 2>&1 &
    server_pid=$!
    signal_pid=$server_pid
  fi
}

show_log() { printf '    server output (last lines):\n'; tail -n 25 "$1" | sed 's/^/    /'; }

# exercise <name> <log> <key or empty>: the checks shared by both databases, ending with SIGTERM.
exercise() {
  local name=$1 log=$2 key=$3 started=$EPOCHREALTIME response
  local origin="http://127.0.0.1:$port"
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

  if [[ $health_path == /health && ${#healthcheck[@]} -gt 0 ]]; then
    in_image PORT="$port" timeout 10 "${healthcheck[@]}" && pass "[$name] the image's HEALTHCHECK command succeeds" ||
      fail "[$name] the image's HEALTHCHECK command failed"
  else
    printf 'SKIP [%s] HEALTHCHECK command (HEALTH_PATH=%s)\n' "$name" "$health_path"
  fi
  response=$(http GET "$origin/ready")
  [[ $(status_of "$response") == 200 ]] && pass "[$name] GET /ready = 200 ($(body_of "$response"))" ||
    fail "[$name] GET /ready = $(status_of "$response") $(body_of "$response")"
  response=$(http GET "http://127.0.0.1:$metrics_port/metrics")
  [[ $(status_of "$response") == 200 && $response == *rubrica_* ]] && pass "[$name] metrics served on METRICS_PORT" ||
    fail "[$name] GET /metrics on METRICS_PORT = $(status_of "$response")"

  if [[ -z $key ]]; then # the embedded database: the demo key printed on the first start
    local waited=0
    until key=$(grep -o 'Bearer svc_[0-9a-f]\{48\}' "$log" | head -n 1 | cut -d' ' -f2) && [[ -n $key ]]; do
      ((waited++ < 50)) || break
      sleep 0.2
    done
    [[ -n $key ]] && pass "[$name] the first start printed a demo key" || { show_log "$log"; die "[$name] no demo key printed"; }
  fi
  last_key=$key

  local email="recipe-$RANDOM$RANDOM@example.com" id
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

  local stopping=$EPOCHREALTIME code=0 waited=0
  kill -TERM "$signal_pid"
  while kill -0 "$server_pid" 2>/dev/null && ((waited++ < 300)); do sleep 0.1; done
  if kill -0 "$server_pid" 2>/dev/null; then show_log "$log"; die "[$name] still running 30 s after SIGTERM"; fi
  wait "$server_pid" || code=$?
  server_pid=
  signal_pid=
  [[ $code == 0 ]] && pass "[$name] SIGTERM: exit code 0 after $(since "$stopping")" ||
    { fail "[$name] SIGTERM: exit code $code"; show_log "$log"; }
  if [[ ${#healthcheck[@]} -gt 0 ]]; then
    ! in_image PORT="$port" timeout 10 "${healthcheck[@]}" && pass "[$name] the HEALTHCHECK command fails once the server is gone" ||
      fail "[$name] the HEALTHCHECK command succeeds with no server"
  fi
}

# 5a. Embedded PGlite in DATA_DIR (the image's default), demo on first start.
t0=$EPOCHREALTIME
start_server "$tmp/embedded.log"
exercise embedded "$tmp/embedded.log" ""
embedded_key=$last_key
timings+=("[embedded] whole run: $(since "$t0")")

# 5b. PostgreSQL: a fresh database, the documented one-shot migration, a tenant and a key from the CLI, then the
# server with MIGRATE_ON_START unset, as compose.yaml runs it.
if [[ -n $admin_url ]]; then
  t0=$EPOCHREALTIME
  db_name="rubrica_recipe_$$_$RANDOM"
  timeout 30 psql "$admin_url" -qX -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$db_name\"" >/dev/null ||
    { db_name=; die "could not create a database through DATABASE_URL"; }
  db_url=$(node "$helper" dburl "$admin_url" "$db_name")
  pg_env=(DATABASE_URL="$db_url" DEMO_ON_EMPTY=false)
  [[ -n $redis_url ]] && pg_env+=(REDIS_URL="$redis_url")
  cli() { in_image "${pg_env[@]}" timeout 60 node bin/rubrica.js "$@"; }

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

  start_server "$tmp/postgres.log" "${pg_env[@]}"
  exercise postgres "$tmp/postgres.log" "$pg_key"
  timings+=("[postgres] whole run, with migration and CLI: $(since "$t0")")
else
  printf 'SKIP PostgreSQL run (set DATABASE_URL to a server where a database may be created)\n'
fi

# 5c. The embedded database again: a second start on the same DATA_DIR, under a terminal as `docker run -it`
# gives one (logs must not need development-only packages), with the key from the first start.
if command -v script >/dev/null; then
  t0=$EPOCHREALTIME
  start_server "$tmp/terminal.log" --tty
  exercise "embedded, second start, terminal" "$tmp/terminal.log" "$embedded_key"
  ! grep -q 'svc_[0-9a-f]\{48\}' "$tmp/terminal.log" && pass "[embedded, second start, terminal] no new demo key" ||
    fail "[embedded, second start, terminal] a second demo key was printed"
  timings+=("[embedded, second start, terminal] whole run: $(since "$t0")")
else
  printf 'SKIP second start under a terminal (no script(1))\n'
fi

exit 0 # the summary and the exit code come from cleanup
