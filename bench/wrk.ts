// wrk scripts for bench/run.ts: one Lua file per scenario, with the keys, ids, cursors and tags inlined as Lua
// tables, and a done() hook that prints one JSON line. No response() hook: it would make wrk parse every
// response in Lua and slow the load generator down; wrk counts statuses >= 400 itself (summary.errors.status).
import { type ChildProcess, spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** wrk processes still running, so that an interrupted run can stop them. */
const running = new Set<ChildProcess>()
/** wrk processes started so far: each gets its number as the scripts' `nonce`. */
let started = 0

export function killWrk(): void {
  for (const child of running) child.kill('SIGKILL')
}

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

export interface Scenario {
  name: string
  description: string
  /** A scenario only rubrica serves, reported as a ratio to this one of rubrica's own (its plain variant). */
  variantOf?: ScenarioId
}

export const SCENARIOS: Record<ScenarioId, Scenario> = {
  a: { name: 'GET by id', description: 'GET /api/v1/contacts/:id, random tenant key, random id of that tenant' },
  b: { name: 'list first page', description: 'GET /api/v1/contacts?limit=50, random tenant key' },
  c: {
    name: 'list at 90% depth',
    description: 'GET /api/v1/contacts?limit=50&cursor=<createdAt about 90% down the tenant history>',
  },
  d: {
    name: 'list filtered',
    description: 'GET /api/v1/contacts?limit=50&stage=<random>&emailStatus=<random> (all 24 combinations)',
  },
  e: {
    name: 'POST create',
    description: 'POST /api/v1/contacts, unique email (run, thread, counter, random), names, phone, one tenant tag',
  },
  f: { name: 'PATCH', description: 'PATCH /api/v1/contacts/:id {stage, consentType}, random own id' },
  g: {
    name: 'POST with Idempotency-Key',
    description: 'as e, each request with its own Idempotency-Key (the same unique string as the email)',
    variantOf: 'e',
  },
  h: {
    name: 'GET by id, If-None-Match',
    description: "as a, with If-None-Match: the contact's current ETag, on contacts no scenario writes; 304 expected",
    variantOf: 'a',
  },
  i: {
    name: 'POST create, one tenant',
    description: 'as e, all requests on the first tenant (e spreads them over every tenant)',
    variantOf: 'e',
  },
  j: {
    name: 'PATCH, one tenant',
    description: "as f, all requests on the first tenant's contacts",
    variantOf: 'f',
  },
  k: {
    name: 'list by a tag',
    description: 'GET /api/v1/contacts?limit=50&tag=<random tag of the tenant, on about 30% of its contacts>',
    variantOf: 'b',
  },
  l: {
    name: 'search: three tags and a stage',
    description: 'POST /api/v1/contacts/search, one group: hasAll three of the tenant’s tags, stage eq <random>',
    variantOf: 'b',
  },
  m: {
    name: 'list by words',
    description: 'GET /api/v1/contacts?limit=50&q=<the first three letters of one of the tenant’s first names>',
    variantOf: 'b',
  },
}

const STAGES = ['lead', 'prospect', 'customer', 'ex_customer']
const EMAIL_STATUSES = ['active', 'unsubscribed', 'bounced', 'complained', 'suppressed', 'pending_review']

/** Bench-created contacts have addresses in this domain; run.ts deletes them when it keeps the database. */
export const BENCH_EMAIL_DOMAIN = 'bench.example.com'

const lua = (value: string) => JSON.stringify(value) // JSON string escapes are valid Lua for these characters
const luaList = (values: string[]) => `{${values.map(lua).join(',')}}`

/** GET of `path` followed by a random item of a random tenant's own `list` (its ids or its deep cursors). */
function getRandomItem(list: 'ids' | 'cursors', path: string): string {
  return `request = function()
  local t = math.random(nt)
  local list = ${list}[t]
  return wrk.format("GET", "${path}" .. list[math.random(#list)], hget[t])
end`
}

function requestFunction(scenario: ScenarioId): string {
  switch (scenario) {
    case 'a':
      return getRandomItem('ids', '/api/v1/contacts/')
    case 'b':
      return `request = function()
  return wrk.format("GET", "/api/v1/contacts?limit=50", hget[math.random(nt)])
end`
    case 'c':
      return getRandomItem('cursors', '/api/v1/contacts?limit=50&cursor=')
    case 'd':
      return `request = function()
  return wrk.format("GET", "/api/v1/contacts?limit=50&stage=" .. stages[math.random(#stages)] ..
    "&emailStatus=" .. statuses[math.random(#statuses)], hget[math.random(nt)])
end`
    case 'e':
      return postRequest('hjson[t]')
    case 'i':
      return postRequest('hjson[t]', '1')
    case 'f':
      return patchRequest('math.random(nt)')
    case 'j':
      return patchRequest('1')
    case 'g':
      return postRequest(
        '{ ["Authorization"] = auth[t], ["Content-Type"] = "application/json", ["Idempotency-Key"] = unique }',
      )
    case 'k':
      return `request = function()
  local t = math.random(nt)
  local tl = tags[t]
  return wrk.format("GET", "/api/v1/contacts?limit=50&tag=" .. tl[math.random(#tl)], hget[t])
end`
    case 'l':
      return `request = function()
  local t = math.random(nt)
  local tl = tags[t]
  local i = math.random(#tl)
  local body = string.format(
    '{"filterGroups":[{"filters":[{"field":"tags","op":"hasAll","value":["%s","%s","%s"]},' ..
    '{"field":"stage","op":"eq","value":"%s"}]}],"limit":50}',
    tl[i], tl[i % #tl + 1], tl[(i + 1) % #tl + 1], stages[math.random(#stages)])
  return wrk.format("POST", "/api/v1/contacts/search", hjson[t], body)
end`
    case 'm':
      return `request = function()
  local t = math.random(nt)
  local list = words[t]
  return wrk.format("GET", "/api/v1/contacts?limit=50&q=" .. list[math.random(#list)], hget[t])
end`
    case 'h':
      return `request = function()
  local t = math.random(nt)
  local list = unchanged[t]
  local pick = list[math.random(#list)]
  return wrk.format("GET", "/api/v1/contacts/" .. pick[1], { ["Authorization"] = auth[t], ["If-None-Match"] = pick[2] })
end`
  }
}

/** PATCH of {stage, consentType} on a random contact of the tenant `tenant` (a Lua expression). */
function patchRequest(tenant: string): string {
  return `local consents = {"consent", "contract", "unknown"}
request = function()
  local t = ${tenant}
  local list = ids[t]
  local body = string.format('{"stage":"%s","consentType":"%s"}', stages[math.random(#stages)],
    consents[math.random(#consents)])
  return wrk.format("PATCH", "/api/v1/contacts/" .. list[math.random(#list)], hjson[t], body)
end`
}

/**
 * POST of a new contact (unique email: run, wrk process, thread, counter, random; one of the tenant's tags) with
 * the headers `headers`, a Lua expression that may use `t` (the tenant) and `unique` (the email's local part);
 * `tenant`, a Lua expression, picks the tenant (a random one by default).
 */
function postRequest(headers: string, tenant = 'math.random(nt)'): string {
  return `local n = 0
request = function()
  local t = ${tenant}
  n = n + 1
  local tl = tags[t]
  local unique = string.format("wrk-%s-%s-%d-%d-%06d", run, nonce, tid, n, math.random(0, 999999))
  local body = string.format(
    '{"email":"%s@${BENCH_EMAIL_DOMAIN}","firstName":"Bench","lastName":"Load","phone":"+39 02 1234 5678","tags":["%s"]}',
    unique, tl[math.random(#tl)])
  return wrk.format("POST", "/api/v1/contacts", ${headers}, body)
end`
}

/** The whole Lua script of one scenario. `runId` keeps POSTed emails unique across runs on a kept database. */
function luaScript(scenario: ScenarioId, tenants: TenantSample[], runId: string): string {
  return `-- generated by bench/run.ts, scenario ${scenario}: ${SCENARIOS[scenario].name}
local keys = ${luaList(tenants.map((t) => t.key))}
ids = {
${tenants.map((t) => luaList(t.ids)).join(',\n')}
}
cursors = {
${tenants.map((t) => luaList(t.deepCursors)).join(',\n')}
}
tags = {
${tenants.map((t) => luaList(t.tags)).join(',\n')}
}
words = {
${tenants.map((t) => luaList(t.words)).join(',\n')}
}
unchanged = {
${tenants.map((t) => `{${t.unchanged.map((c) => luaList([c.id, c.etag])).join(',')}}`).join(',\n')}
}
stages = ${luaList(STAGES)}
statuses = ${luaList(EMAIL_STATUSES)}
run = ${lua(runId)}
nt = #keys
auth, hget, hjson = {}, {}, {}
for i = 1, nt do
  auth[i] = "Bearer " .. keys[i]
  hget[i] = { ["Authorization"] = auth[i] }
  hjson[i] = { ["Authorization"] = auth[i], ["Content-Type"] = "application/json" }
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

${requestFunction(scenario)}

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"p50":%.0f,"p90":%.0f,"p99":%.0f,"max":%.0f,"mean":%.1f,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean, e.connect, e.read, e.write, e.status, e.timeout))
end
`
}

/** The path of each scenario's Lua script. */
export type Scripts = Record<ScenarioId, string>

/** Writes the script of every scenario into `dir`; returns their paths. */
export function writeLuaScripts(dir: string, tenants: TenantSample[], runId: string): Scripts {
  const scripts = {} as Scripts
  for (const scenario of Object.keys(SCENARIOS) as ScenarioId[]) {
    scripts[scenario] = join(dir, `${scenario}.lua`)
    writeFileSync(scripts[scenario], luaScript(scenario, tenants, runId))
  }
  return scripts
}

export interface WrkResult {
  requests: number
  durationUs: number
  bytes: number
  /** Latencies in microseconds. */
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
  connect: number
  read: number
  write: number
  /** Responses with status >= 400. */
  status: number
  timeout: number
}

export function errorCount(result: WrkResult): number {
  return result.connect + result.read + result.write + result.status + result.timeout
}

export interface WrkOptions {
  url: string
  script: string
  seconds: number
  connections: number
  threads: number
  /** Requests slower than this are counted as timeouts. */
  timeoutSeconds?: number
  /** Told wrk's pid once it runs (to sample its CPU). */
  onStart?: (pid: number) => void
}

/** Runs wrk once; rejects when it fails, prints no result, or outlives its duration by 30 s. */
export function runWrk(options: WrkOptions): Promise<WrkResult> {
  const args = [
    `-t${options.threads}`,
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    `--timeout`,
    `${options.timeoutSeconds ?? 5}s`,
    '-s',
    options.script,
    options.url,
    '--',
    String(++started),
  ]
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    running.add(child)
    if (child.pid !== undefined) options.onStart?.(child.pid)
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), (options.seconds + 30) * 1000)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      running.delete(child)
      clearTimeout(timer)
      const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${out}${err}`))
        return
      }
      resolve(JSON.parse(line.slice('BENCH_JSON '.length)) as WrkResult)
    })
  })
}
