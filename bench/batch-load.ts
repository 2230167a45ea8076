// What batch imports do to everyone else on an instance (docs/operations.md, "Batch imports"): the server runs as
// its own process, and for each scenario a worker thread (its own event loop, so the load generator's work does
// not distort it) asks /health every 50 ms and, where said, an idle tenant reads its contacts in 8 loops. Prints
// /health's slowest answer, the idle tenant's answers, the server's peak RSS (VmHWM, a fresh server for each
// scenario) and the batches' statuses. A batch refused with 503 server_busy is sent again after Retry-After, as a
// client does. Nothing is sent anywhere but 127.0.0.1.
//
//   tsx bench/batch-load.ts                       # every scenario on PostgreSQL (BENCH_PG_URL)
//   BENCH_DB=pglite tsx bench/batch-load.ts       # on the embedded database
//   tsx bench/batch-load.ts nested largest        # some scenarios: nested, largest, memory, readers
//   AT_ONCE=4,16 tsx bench/batch-load.ts memory   # the memory scenario's numbers of concurrent largest batches
//   BENCH_SCRIPT=emoji tsx bench/batch-load.ts    # the largest items in four-byte characters (3.6 times larger)
// Any other variable (BATCH_CONCURRENCY, DATABASE_POOL_SIZE, …) is passed on to the server.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { createApiKey } from '../src/admin/api-keys.ts'
import { BATCH_BODY_LIMIT, MAX_BATCH_ITEMS } from '../src/contacts/batch/model.ts'
import { type Database, openDatabase } from '../src/db/database.ts'
import { deployMigrations } from '../src/db/migrate.ts'
import { largestBatchBody, largestTagNames, type Script } from '../test/largest-batch.ts'
import { scratchDatabase } from './database.ts'
import { memoryMb } from './sampling.ts'
import { type Server, sleep, startSources, stopServer } from './servers.ts'

const scenarios = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['nested', 'largest', 'memory', 'readers']
const onPglite = process.env.BENCH_DB === 'pglite'
/** The largest batch's text: ASCII (the largest the route accepts) or four-byte characters (BENCH_SCRIPT=emoji). */
const script: Script = process.env.BENCH_SCRIPT === 'emoji' ? 'emoji' : 'ascii'
const IMPORTERS = 4
const dataDir = mkdtempSync(join(tmpdir(), 'rubrica-batch-load-'))

/**
 * Importing tenants, each with the largest tags in both scripts (so that every item of the largest batch is
 * written and answered in full); and an idle one with 200 contacts.
 */
async function seed(db: Database): Promise<{ importers: string[]; idle: string }> {
  const importers: string[] = []
  for (let i = 0; i < IMPORTERS; i++) {
    const tenant = await db.prisma.tenant.create({ data: { name: `Importa ${i}` } })
    const names = [...largestTagNames('ascii'), ...largestTagNames('emoji')]
    await db.prisma.tag.createMany({ data: names.map((tag) => ({ tenantId: tenant.id, name: tag })) })
    importers.push(
      (
        await createApiKey(db.prisma, {
          tenantId: tenant.id,
          role: 'editor',
          scopes: ['contacts:read', 'contacts:write'],
        })
      ).key,
    )
  }
  const quiet = await db.prisma.tenant.create({ data: { name: 'Tranquilla' } })
  await db.prisma.contact.createMany({
    data: Array.from({ length: 200 }, (_, i) => ({ tenantId: quiet.id, email: `quieto${i}@example.it` })),
  })
  const idle = (await createApiKey(db.prisma, { tenantId: quiet.id, role: 'viewer', scopes: ['contacts:read'] })).key
  return { importers, idle }
}

/** Peak and current resident set of a process, in whole MB. */
function memoryOf(pid: number) {
  const { peak, now } = memoryMb(pid)
  return { peak: Math.round(peak), now: Math.round(now) }
}

// The worker: /health every 50 ms, and 8 loops of an idle tenant's list reads when given its key.
const WATCHER = `
const { parentPort, workerData } = require('node:worker_threads')
const { base, idleKey } = workerData
let running = true
const health = []
const reads = { ok: 0, unavailable: 0, other: 0, slowestMs: 0 }
async function watchHealth() {
  while (running) {
    const started = performance.now()
    await fetch(base + '/health').then((r) => r.text()).catch(() => {})
    health.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
async function read() {
  while (running) {
    const started = performance.now()
    const res = await fetch(base + '/api/v1/contacts?limit=50', { headers: { authorization: 'Bearer ' + idleKey } })
    await res.text()
    reads.slowestMs = Math.max(reads.slowestMs, performance.now() - started)
    if (res.status === 200) reads.ok++
    else if (res.status === 503) reads.unavailable++
    else reads.other++
  }
}
const loops = [watchHealth(), ...(idleKey ? Array.from({ length: 8 }, read) : [])]
parentPort.on('message', async () => {
  running = false
  await Promise.all(loops)
  parentPort.postMessage({ health, reads })
})
`

interface Watched {
  health: number[]
  reads: { ok: number; unavailable: number; other: number; slowestMs: number }
}

async function watch<T>(base: string, idleKey: string | undefined, work: () => Promise<T>) {
  const worker = new Worker(WATCHER, { eval: true, workerData: { base, idleKey } })
  await sleep(500)
  const started = performance.now()
  const result = await work()
  const seconds = (performance.now() - started) / 1000
  const watched = await new Promise<Watched>((resolve) => {
    worker.once('message', resolve)
    worker.postMessage('stop')
  })
  await worker.terminate()
  const slowest = Math.max(...watched.health)
  return { result, seconds, slowestHealthMs: Math.round(slowest), reads: watched.reads }
}

let refusals = 0

/** Posts a batch; refused with 503 server_busy, sends it again after Retry-After, as a client does. */
async function post(base: string, key: string, body: string): Promise<number> {
  for (;;) {
    const res = await fetch(`${base}/api/v1/contacts/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    })
    const answer = await res.text()
    if (res.status !== 503 || !answer.includes('server_busy')) return res.status
    refusals++
    await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000)
  }
}

function statusCounts(statuses: number[]): string {
  const counts = new Map<number, number>()
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1)
  return [...counts].map(([status, n]) => `${n}x ${status}`).join(', ')
}

const database = onPglite ? undefined : await scratchDatabase('batch_load')
let server: Server | undefined
try {
  const db = await openDatabase(database ? { url: database.url, poolSize: 2 } : { dataDir })
  await db.withSession((session) => deployMigrations(session))
  const { importers, idle } = await seed(db)
  await db.close()
  // Every batch creates contacts (the most work, and the largest answers): a new prefix for each body.
  let bodies = 0
  const largest = () => largestBatchBody(`b${bodies++}`, script)
  console.log(
    `Batch load on ${onPglite ? 'the embedded database' : 'PostgreSQL'}; the largest batch: ${MAX_BATCH_ITEMS} items, ` +
      `${(Buffer.byteLength(largest()) / 1e6).toFixed(1)} MB`,
  )

  const restart = async () => {
    if (server) await stopServer(server)
    server = await startSources(database ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir })
    return { base: server.url, pid: server.pid }
  }

  for (const scenario of scenarios) {
    const { base, pid } = await restart()
    const before = memoryOf(pid)
    if (scenario === 'nested') {
      // The body (10,000,000 brackets each way), then the nesting and the objects the route's limit lets in.
      const room = BATCH_BODY_LIMIT - 20
      const cases = {
        'issue #29 (20 MB of brackets)': `{"contacts":[${'['.repeat(10_000_000)}${']'.repeat(10_000_000)}]}`,
        'brackets to the limit': `{"contacts":[${'['.repeat(room / 2)}${']'.repeat(room / 2)}]}`,
        'objects to the limit': `{"contacts":[${'{},'.repeat(room / 3)}{}]}`,
      }
      for (const [name, body] of Object.entries(cases)) {
        const seen = await watch(base, undefined, () => post(base, importers[0] as string, body).catch(() => 0))
        console.log(
          `nested, ${name}: ${(body.length / 1e6).toFixed(1)} MB answered ${seen.result} in ${seen.seconds.toFixed(1)} s; ` +
            `/health's slowest answer ${seen.slowestHealthMs} ms; peak RSS ${memoryOf(pid).peak} MB`,
        )
      }
    } else if (scenario === 'largest') {
      const body = largest()
      const seen = await watch(base, undefined, () => post(base, importers[0] as string, body))
      console.log(
        `largest: one batch answered ${seen.result} in ${seen.seconds.toFixed(1)} s; /health's slowest answer ` +
          `${seen.slowestHealthMs} ms; RSS ${before.now} MB before, peak ${memoryOf(pid).peak} MB`,
      )
    } else if (scenario === 'memory') {
      const counts = (process.env.AT_ONCE ?? '1,4,16').split(',').map(Number)
      for (const atOnce of counts) {
        const { pid: fresh, base: url } = atOnce === counts[0] ? { pid, base } : await restart()
        // One small batch first: what the route's first request compiles and loads is not what batches hold.
        await post(url, importers[0] as string, '{"contacts":[{"email":"primo@example.it"}]}')
        const idleBefore = memoryOf(fresh)
        refusals = 0
        const batches = Array.from({ length: atOnce }, largest)
        const seen = await watch(url, undefined, () =>
          Promise.all(batches.map((body, i) => post(url, importers[i % IMPORTERS] as string, body))),
        )
        await sleep(2000)
        const after = memoryOf(fresh)
        console.log(
          `memory: ${atOnce} largest batches sent at once (${IMPORTERS} tenants): ${statusCounts(seen.result)} after ` +
            `${refusals} refusals, in ${seen.seconds.toFixed(1)} s; RSS ${idleBefore.now} MB before, peak ${after.peak} ` +
            `MB (${after.peak - idleBefore.now} over), ${after.now} MB 2 s after; /health's slowest answer ` +
            `${seen.slowestHealthMs} ms`,
        )
      }
    } else if (scenario === 'readers') {
      refusals = 0
      const batches = importers.map((key) => ({ key, bodies: Array.from({ length: 4 }, largest) }))
      const seen = await watch(base, idle, () =>
        Promise.all(batches.flatMap(({ key, bodies }) => bodies.map((body) => post(base, key, body)))),
      )
      const perFive = Math.round((seen.reads.ok / seen.seconds) * 5)
      console.log(
        `readers: ${IMPORTERS} tenants importing 4 largest batches each (${statusCounts(seen.result)}, after ` +
          `${refusals} refusals) in ` +
          `${seen.seconds.toFixed(1)} s; an idle tenant's 8 read loops: ${seen.reads.ok} answers (${perFive} per 5 s), ` +
          `${seen.reads.unavailable} 503s, ${seen.reads.other} others, slowest ${Math.round(seen.reads.slowestMs)} ms; ` +
          `/health's slowest answer ${seen.slowestHealthMs} ms; peak RSS ${memoryOf(pid).peak} MB`,
      )
    } else {
      throw new Error(`no scenario ${scenario}`)
    }
  }
} finally {
  if (server) await stopServer(server)
  rmSync(dataDir, { recursive: true, force: true })
  await database?.drop()
}
