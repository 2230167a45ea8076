// The scenarios of bench/run.ts and their wrk scripts: one Lua file per scenario, each tenant's requests (paths,
// bodies, ETags) inlined as Lua tables from the sampled data, one generic request() that picks among them, and a
// done() hook that prints one JSON line. No response() hook: it would make wrk parse every response in Lua and
// slow the load generator down; wrk counts statuses >= 400 itself (summary.errors.status).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCommand } from './servers.ts'

export interface TenantSample {
  key: string
  /** Random contact ids of this tenant (archived ones included: GET by id reads them too). */
  ids: string[]
  /** createdAt cursors about 90% down this tenant's live history. */
  deepCursors: string[]
  /** Tag names of this tenant (POST sends one; each is on about 30% of its contacts, as the seed makes them). */
  tags: string[]
  /** Starts of this tenant's first names, three letters, URL-encoded: the words scenario m searches. */
  words: string[]
  /**
   * Other contacts of this tenant, none of them in `ids`, with their ETag when sampled: no scenario writes to
   * them, so a GET with If-None-Match gets 304 all run long.
   */
  unchanged: { id: string; etag: string }[]
}

export type ScenarioId = 'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g' | 'h' | 'i' | 'j' | 'k' | 'l' | 'm'

/** A request of a scenario: its path, and its body or the ETag it sends in If-None-Match. */
type Item = [path: string, body?: string, etag?: string]

export interface Scenario {
  name: string
  method: 'GET' | 'POST' | 'PATCH'
  /** A scenario only rubrica serves, reported as a ratio to this one of rubrica's own (its plain variant). */
  variantOf?: ScenarioId
  /** Every request on the first tenant (otherwise each on a random tenant). */
  oneTenant?: boolean
  /**
   * `{unique}` in the body becomes a string of its own for each request (run, wrk process, thread, counter,
   * random): a new contact's email; `idempotent` sends the same string as its Idempotency-Key.
   */
  unique?: 'email' | 'idempotent'
  /** Each tenant's requests, picked at random. */
  items: (tenant: TenantSample) => Item[]
  /** Bodies sent at random with the items that have none. */
  bodies?: string[]
}

const STAGES = ['lead', 'prospect', 'customer', 'ex_customer']
const EMAIL_STATUSES = ['active', 'unsubscribed', 'bounced', 'complained', 'suppressed', 'pending_review']
const CONTACTS = '/api/v1/contacts'

/** Bench-created contacts have addresses in this domain; run.ts deletes them when it keeps the database. */
export const BENCH_EMAIL_DOMAIN = 'bench.example.com'

const PAGE = `${CONTACTS}?limit=50`

/** GETs of each tenant's `paths`. */
const get = (name: string, paths: (t: TenantSample) => string[], variantOf?: ScenarioId): Scenario => ({
  name,
  method: 'GET',
  items: (t) => paths(t).map((path): Item => [path]),
  variantOf,
})
/** A new contact with one of the tenant's tags. */
const POST = {
  method: 'POST',
  unique: 'email',
  items: (t: TenantSample) =>
    t.tags.map((tag): Item => {
      const contact = { firstName: 'Bench', lastName: 'Load', phone: '+39 02 1234 5678', tags: [tag] }
      return [CONTACTS, JSON.stringify({ email: `{unique}@${BENCH_EMAIL_DOMAIN}`, ...contact })]
    }),
} as const
/** {stage, consentType} on a random contact of the tenant. */
const PATCH = {
  method: 'PATCH',
  items: (t: TenantSample) => t.ids.map((id): Item => [`${CONTACTS}/${id}`]),
  bodies: STAGES.flatMap((stage) =>
    ['consent', 'contract', 'unknown'].map((consentType) => JSON.stringify({ stage, consentType })),
  ),
} as const

export const SCENARIOS: Record<ScenarioId, Scenario> = {
  a: get('GET by id', (t) => t.ids.map((id) => `${CONTACTS}/${id}`)),
  b: get('list first page', () => [PAGE]),
  c: get('list at 90% depth', (t) => t.deepCursors.map((cursor) => `${PAGE}&cursor=${cursor}`)),
  d: get('list filtered', () =>
    STAGES.flatMap((stage) => EMAIL_STATUSES.map((s) => `${PAGE}&stage=${stage}&emailStatus=${s}`)),
  ),
  e: { name: 'POST create', ...POST },
  f: { name: 'PATCH', ...PATCH },
  g: { name: 'POST with Idempotency-Key', ...POST, unique: 'idempotent', variantOf: 'e' },
  h: {
    name: 'GET by id, If-None-Match',
    method: 'GET',
    items: (t) => t.unchanged.map((c): Item => [`${CONTACTS}/${c.id}`, undefined, c.etag]),
    variantOf: 'a',
  },
  i: { name: 'POST create, one tenant', ...POST, oneTenant: true, variantOf: 'e' },
  j: { name: 'PATCH, one tenant', ...PATCH, oneTenant: true, variantOf: 'f' },
  k: get('list by a tag', (t) => t.tags.map((tag) => `${PAGE}&tag=${tag}`), 'b'),
  l: {
    name: 'search: three tags and a stage',
    method: 'POST',
    // hasAll three of the tenant's tags in a row, and a stage.
    items: (t) =>
      t.tags.flatMap((_, i) =>
        STAGES.map((stage): Item => {
          const three = [0, 1, 2].map((n) => t.tags[(i + n) % t.tags.length])
          const filters = [
            { field: 'tags', op: 'hasAll', value: three },
            { field: 'stage', op: 'eq', value: stage },
          ]
          return [`${CONTACTS}/search`, JSON.stringify({ filterGroups: [{ filters }], limit: 50 })]
        }),
      ),
    variantOf: 'b',
  },
  m: get('list by words', (t) => t.words.map((word) => `${PAGE}&q=${word}`), 'b'),
}

// JSON string escapes are valid Lua for these characters.
const lua = (value: string | undefined) => (value === undefined ? 'nil' : JSON.stringify(value))
const luaList = (values: (string | undefined)[]) => `{${values.map(lua).join(',')}}`

/** The whole Lua script of one scenario. `runId` keeps POSTed emails unique across runs on a kept database. */
function luaScript(id: ScenarioId, tenants: TenantSample[], runId: string): string {
  const scenario = SCENARIOS[id]
  return `-- generated by bench/wrk.ts, scenario ${id}: ${scenario.name}
local keys = ${luaList(tenants.map((t) => t.key))}
local items = {
${tenants.map((t) => `{${scenario.items(t).map(luaList).join(',')}}`).join(',\n')}
}
local bodies = ${luaList(scenario.bodies ?? [])}
local method, one_tenant, unique = ${lua(scenario.method)}, ${scenario.oneTenant === true}, ${lua(scenario.unique)}
local run = ${lua(runId)}
local nt = #keys
local hget, hjson = {}, {}
for i = 1, nt do
  hget[i] = { ["Authorization"] = "Bearer " .. keys[i] }
  hjson[i] = { ["Authorization"] = "Bearer " .. keys[i], ["Content-Type"] = "application/json" }
end

local threads, counter = {}, 0
function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  table.insert(threads, thread)
end

function init(args)
  tid = tid or 0
  -- Told by runWrk, different for every wrk process of a run: emails stay unique whatever the random seeds.
  nonce = args[1] or "0"
  math.randomseed(os.time() * 1000 + tid * 7919)
  for _ = 1, 10 do math.random() end
end

local n = 0
request = function()
  local t = one_tenant and 1 or math.random(nt)
  local list = items[t]
  local item = list[math.random(#list)]
  local body = item[2]
  if not body and #bodies > 0 then body = bodies[math.random(#bodies)] end
  local headers = body and hjson[t] or hget[t]
  if item[3] then
    headers = { ["Authorization"] = hget[t]["Authorization"], ["If-None-Match"] = item[3] }
  end
  if unique then
    n = n + 1
    local u = string.format("wrk-%s-%s-%d-%d-%06d", run, nonce, tid, n, math.random(0, 999999))
    body = string.gsub(body, "{unique}", u)
    if unique == "idempotent" then
      headers = { ["Authorization"] = hget[t]["Authorization"], ["Content-Type"] = "application/json", ["Idempotency-Key"] = u }
    end
  end
  return wrk.format(method, item[1], headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write("BENCH_JSON {" .. ${Object.entries(RESULT)
    .map(([field, value]) => `'"${field}":' .. ${value}`)
    .join(' .. "," .. ')} .. "}\\n")
end
`
}

/** The path of each scenario's Lua script. */
export type Scripts = Record<ScenarioId, string>

/** Writes the script of each scenario into `dir`; returns their paths. */
export function writeLuaScripts(dir: string, scenarios: ScenarioId[], tenants: TenantSample[], runId: string) {
  const scripts = {} as Scripts
  for (const scenario of scenarios) {
    scripts[scenario] = join(dir, `${scenario}.lua`)
    writeFileSync(scripts[scenario], luaScript(scenario, tenants, runId))
  }
  return scripts
}

/** What wrk's done() prints, each as the Lua expression of its value: latencies in microseconds. */
const RESULT = {
  requests: 'summary.requests',
  durationUs: 'summary.duration',
  bytes: 'summary.bytes',
  p50: 'latency:percentile(50)',
  p90: 'latency:percentile(90)',
  p99: 'latency:percentile(99)',
  max: 'latency.max',
  mean: 'latency.mean',
  connect: 'e.connect',
  read: 'e.read',
  write: 'e.write',
  /** Responses with status >= 400. */
  status: 'e.status',
  timeout: 'e.timeout',
}
export type WrkResult = Record<keyof typeof RESULT, number>

export const errorCount = (r: WrkResult) => r.connect + r.read + r.write + r.status + r.timeout

/** wrk processes started so far: each gets its number as the scripts' `nonce`. */
let started = 0
/** After a signal, no wrk starts while the cleanup runs (the exit kills those running). */
let stopped = false
export const stopStartingWrk = () => {
  stopped = true
}

/** Runs wrk once (requests slower than 5 s count as timeouts); rejects when it fails or outlives its time by 30 s. */
export async function runWrk(
  options: { url: string; script: string; seconds: number; connections: number; threads: number },
  onStart?: (pid: number) => void,
): Promise<WrkResult> {
  if (stopped) throw new Error('interrupted')
  const { url, script, seconds, connections, threads } = options
  const args = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', script, url]
  const out = await runCommand('wrk', [...args, '--', String(++started)], process.env, (seconds + 30) * 1000, onStart)
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
  if (line === undefined) throw new Error(`wrk ${args.join(' ')} printed no result:\n${out}`)
  return JSON.parse(line.slice('BENCH_JSON '.length)) as WrkResult
}
