#!/usr/bin/env bash
# Instructions per GET by id, rubrica against the baseline, counted by valgrind's callgrind: unlike CPU time on a
# shared VM, a count does not move with what else the machine runs (docs/performance.md). Each server runs under callgrind with counting off; it gets WARMUP GETs (so that V8 has
# optimised the path), then counting is switched on for REQUESTS GETs, 8 at a time, and off again.
# Needs valgrind, the bench database of `npm run bench -- --keep` (rubrica_bench) and a built dist/.
#
#   bash bench/instructions.sh [REQUESTS] [WARMUP]        (defaults 5000 and 20000; about 3 minutes)
#
# Printed per GET: the total, and the total without V8's optimising compiler (under valgrind its background
# jobs run one at a time and spill into the counted window, by an amount that differs from run to run) and
# without the garbage collector (a major collection falls in one window and not in the next).
set -euo pipefail
cd "$(dirname "$0")/.."

requests=${1:-5000}
warmup=${2:-20000}
pg=${BENCH_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}
database_url=${pg%/*}/rubrica_bench
out=$(mktemp -d)
trap '[ -n "${KEEP_OUT:-}" ] || rm -rf "$out"' EXIT

command -v valgrind > /dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
[ -f dist/server.js ] || { echo "dist/ is missing: npm run build" >&2; exit 2; }
key=$(psql "$database_url" -Atc "SELECT seed->'tenants'->0->>'key' FROM bench_meta") || {
  echo "no bench database: run npm run bench -- --keep first" >&2
  exit 2
}
tenant=$(psql "$database_url" -Atc "SELECT seed->'tenants'->0->>'id' FROM bench_meta")
id=$(psql "$database_url" -Atc "SELECT id FROM contacts WHERE tenant_id = '$tenant' ORDER BY created_at LIMIT 1")
path=/api/v1/contacts/$id

# N GETs of $path, C at a time over kept-alive connections; exits non-zero unless every answer is a 200.
load() {
  node --input-type=module -e '
    import http from "node:http"
    const [port, path, key, total, concurrency] = process.argv.slice(1)
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number(concurrency) })
    let sent = 0, failed = 0
    const one = () => new Promise((resolve) => {
      http.get({ port, path, agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
        if (res.statusCode !== 200) failed++
        res.resume().on("end", resolve)
      })
    })
    const worker = async () => { while (sent < Number(total)) { sent++; await one() } }
    await Promise.all(Array.from({ length: Number(concurrency) }, worker))
    agent.destroy()
    if (failed > 0) { console.error(`${failed} answers were not 200`); process.exit(1) }
  ' "$@"
}

# valgrind names its control pipe after $HOST, which the server's environment sets: callgrind_control must see
# the same value to find it.
control() {
  HOST=127.0.0.1 callgrind_control "$@" > /dev/null 2>&1
}

# Runs one server under callgrind and prints its instructions per GET.
measure() {
  local name=$1 port=$2
  shift 2
  env NODE_ENV=production DATABASE_URL="$database_url" DATABASE_POOL_SIZE=4 HOST=127.0.0.1 PORT="$port" \
    RATE_LIMIT_MAX=1000000000 LOG_LEVEL=warn METRICS_ENABLED=false DEMO_ON_EMPTY=false MIGRATE_ON_START=false \
    valgrind --tool=callgrind --smc-check=all-non-file --instr-atstart=no \
    --callgrind-out-file="$out/$name.%p" node "$@" > "$out/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 300); do curl -fs "http://127.0.0.1:$port/health" > /dev/null && break; sleep 1; done
  load "$port" "$path" "$key" "$warmup" 8
  control --instr=on "$pid"
  load "$port" "$path" "$key" "$requests" 8
  control --instr=off "$pid"
  control --dump "$pid"
  kill "$pid"
  wait "$pid" || true
  callgrind_annotate --threshold=100 "$(ls "$out/$name".*.1)" | awk -v name="$name" -v n="$requests" '
    /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
    /^ *[0-9,]+ \(/ && !/PROGRAM TOTALS/ {
      count = $1; gsub(",", "", count)
      if ($0 ~ /compiler::|maglev/) compiler += count
      else if ($0 ~ /Scaveng|MarkCompact|Marking|Sweep|GCTracer|Heap::|heap::|Evacuat|MinorMC|RememberedSet|SlotSet/) gc += count
    }
    END {
      printf "%-9s %8.0f instructions per GET; without the optimising compiler and the GC %8.0f\n",
        name, total / n, (total - compiler - gc) / n
    }'
}

measure rubrica 4191 dist/server.js
measure baseline 4192 --import tsx bench/baseline.ts
