// How soon a write is seen (docs/performance-freshness.md): from each POST's 201 to its first sight in the
// tenant's feed (a follower polling every 50 ms) and at its webhook's receiver, p50 and p99, in five scenarios:
//   alone       the tenant writes 200 contacts a second, one instance;
//   import      the same beside another tenant importing in 4 loops of 1,000-contact batches;
//   imports×2   the tenant writes 20 a second on one instance and is followed on another, beside two tenants
//               importing in 4 loops each, over both instances;
//   largest     the tenant writes 20 a second beside two tenants sending the largest batches the body limit
//               admits, 2 loops each, one instance;
//   mixed       the tenant writes 20 a second beside another tenant's other legal load, one instance: 4 loops each
//               creating a contact with an Idempotency-Key (and its replay), patching it 5 times, exporting and
//               erasing it;
// then a burst of 10,000 events (10 batches of 1,000 at once) and the rate at which the webhook drains it. With
// --before DIR (a built checkout of an earlier commit), that build is measured in the same run, alternating by
// round, on a database of its own deployed by its own CLI. The servers run as their own processes
// (dist/server.js); the load, the follower and the receivers run here, the batches' bodies built once. Nothing is
// sent anywhere but 127.0.0.1.
//
//   npx tsx bench/freshness.ts [--before DIR] [--seconds 10] [--rounds 2] [--only alone,burst]
// (the PostgreSQL server: BENCH_PG_URL, as bench/run.ts)
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { largestBatchBody, largestTagNames } from '../test/largest-batch.ts'
import { scratchDatabase } from './database.ts'
import {
  buildIfNeeded,
  http,
  root,
  runCommand,
  type Server,
  serviceEnv,
  sleep,
  startRubrica,
  stopServer,
} from './servers.ts'

const { values: options } = parseArgs({
  options: {
    before: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    only: { type: 'string' },
  },
})
const SECONDS = Number(options.seconds)
const ROUNDS = Number(options.rounds)
const BURST_BATCHES = 10
const secretsKey = Buffer.alloc(32, 9).toString('base64')
/** In a body's emails, where each batch puts 8 characters of its own. */
const UNIQUE = 'QQQQQQQQ'
const SMALL_BODY = JSON.stringify({
  contacts: Array.from({ length: 1000 }, (_, i) => ({ email: `${UNIQUE}.${i}@example.it`, firstName: 'Ada' })),
})
const LARGEST_BODY = largestBatchBody(UNIQUE)

interface Build {
  name: string
  checkout: string
  url: string
  drop: () => Promise<void>
  keys: Record<'writer' | 'importer' | 'second' | 'burst', string>
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))] ?? NaN

/** A database of the build's own, deployed by its CLI; four tenants with an admin key each, importers' tags. */
async function prepare(name: string, checkout: string): Promise<Build> {
  const { url, drop } = await scratchDatabase(`freshness_${name}`)
  const cli = async (...args: string[]) => {
    const command = [resolve(checkout, 'bin/rubrica.js'), ...args, '--json']
    return JSON.parse(await runCommand(process.execPath, command, serviceEnv(url), 120_000))
  }
  await cli('db', 'deploy')
  const key = async (tenant: string, tags: string[] = []) => {
    const { id } = await cli('tenant', 'create', '--name', tenant)
    if (tags.length > 0) await cli('tag', 'create', '--tenant', id, ...tags)
    const scopes = 'contacts:read,contacts:write,webhooks:manage,contacts:erase'
    return (await cli('key', 'create', '--tenant', id, '--role', 'admin', '--scopes', scopes)).key as string
  }
  const keys = {
    writer: await key('Scrive'),
    importer: await key('Importa', largestTagNames()),
    second: await key('Importa anche', largestTagNames()),
    burst: await key('Raffica'),
  }
  return { name, checkout, url, drop, keys }
}

const start = (build: Build) =>
  startRubrica(build.name, build.url, build.checkout, {
    WEBHOOKS_ALLOW_INSECURE: 'true',
    WEBHOOKS_SECRET_KEY: secretsKey,
    LOG_LEVEL: 'error',
  })

const call = (server: Server, key: string, method: string, path: string, body?: unknown) =>
  http(
    `${server.url}/api/v1${path}`,
    method,
    { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
    120_000,
  )

/** A batch of `body` with emails of its own; one refused with 503 server_busy is sent again after its Retry-After. */
async function sendBatch(server: Server, key: string, body: string): Promise<number> {
  const unique = body.replaceAll(UNIQUE, randomBytes(4).toString('hex'))
  for (;;) {
    // A 503 comes before the body is read, and the server may close the connection while it is still being sent.
    const answer = await call(server, key, 'POST', '/contacts/batch', unique).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') return null
      throw error
    })
    if (answer && answer.status !== 503) return answer.status
    await sleep(Number(answer?.headers['retry-after'] ?? 1) * 1000)
  }
}

/** A receiver on loopback that notes when each contact's first event arrived, and a webhook of `key` to it. */
async function receiver(server: Server, key: string) {
  const arrived = new Map<string, number>()
  const listener = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      const id = (JSON.parse(body) as { data: { id: string } }).data.id
      if (!arrived.has(id)) arrived.set(id, performance.now())
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done))
  const { port } = listener.address() as { port: number }
  const hook = await call(server, key, 'POST', '/webhooks', { url: `http://127.0.0.1:${port}/` })
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${hook.body}`)
  const { id } = JSON.parse(hook.body) as { id: string }
  return {
    arrived,
    async close() {
      await call(server, key, 'DELETE', `/webhooks/${id}`)
      await new Promise((done) => listener.close(done))
    },
  }
}

/** The followed tenant's writes, on the first instance, and the other tenants' load beside them. */
interface Load {
  /** Writes a second of the followed tenant. */
  rate: number
  /** Followed on the second instance, the imports sent to both in turn (otherwise everything on the first). */
  twoInstances?: boolean
  /** Importing tenants (1 or 2), the body each loop sends, the loops per tenant. */
  imports?: { tenants: number; body: string; loops: number }
  /** Another tenant's loops of single requests (mixedLoop). */
  mixed?: number
}

const LOADS: Record<string, Load> = {
  alone: { rate: 200 },
  import: { rate: 200, imports: { tenants: 1, body: SMALL_BODY, loops: 4 } },
  'imports×2': { rate: 20, twoInstances: true, imports: { tenants: 2, body: SMALL_BODY, loops: 4 } },
  largest: { rate: 20, imports: { tenants: 2, body: LARGEST_BODY, loops: 2 } },
  mixed: { rate: 20, mixed: 4 },
}

/**
 * One round of another tenant's legal load: a POST with an Idempotency-Key and its replay, 5 PATCHes, an export,
 * an erasure. Returns the requests sent.
 */
async function mixedLoop(server: Server, key: string): Promise<number> {
  const idempotent = (body: unknown) =>
    http(
      `${server.url}/api/v1/contacts`,
      'POST',
      { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      JSON.stringify(body),
      120_000,
    )
  const idempotencyKey = randomBytes(16).toString('hex')
  const body = { email: `m.${idempotencyKey}@example.it`, firstName: 'Ada' }
  const created = await idempotent(body)
  await idempotent(body)
  const { id } = JSON.parse(created.body) as { id: string }
  for (let i = 0; i < 5; i++) await call(server, key, 'PATCH', `/contacts/${id}`, { lastName: `Rossi ${i}` })
  await call(server, key, 'GET', `/contacts/${id}/export`)
  await call(server, key, 'DELETE', `/contacts/${id}`)
  return 9
}

/** The followed tenant's writes at `load.rate`, its follower and its webhook's receiver: latencies after each 201. */
async function freshness(build: Build, [writes, two]: [Server, Server], load: Load) {
  const { imports } = load
  const reads = load.twoInstances ? two : writes
  const importers = [build.keys.importer, build.keys.second].slice(0, imports?.tenants ?? 0)
  const key = build.keys.writer
  const hook = await receiver(writes, key)
  const start = JSON.parse((await call(reads, key, 'GET', '/events?after=now')).body).next as string
  const acknowledged = new Map<string, number>()
  const seen = new Map<string, number>()
  let writing = true
  let following = true
  /** How long each POST took to its 201, and each of the follower's pages to its answer: where the time goes. */
  const posts: number[] = []
  const pages: number[] = []
  const follower = (async () => {
    let after = start
    while (following) {
      const asked = performance.now()
      const page = await call(reads, key, 'GET', `/events?after=${after}&limit=200`)
      const at = performance.now()
      pages.push(at - asked)
      if (page.status === 200) {
        const { data, next } = JSON.parse(page.body) as { data: Array<{ data: { id: string } }>; next: string }
        for (const event of data) if (!seen.has(event.data.id)) seen.set(event.data.id, at)
        after = next
      }
      await sleep(50)
    }
  })()
  let imported = 0
  const importing = Promise.all(
    importers.flatMap((tenantKey) =>
      Array.from({ length: imports?.loops ?? 0 }, async (_, loop) => {
        while (writing) {
          const server = load.twoInstances && loop % 2 === 1 ? reads : writes
          if ((await sendBatch(server, tenantKey, imports?.body ?? '')) === 200) imported += 1000
        }
      }),
    ),
  )
  let mixedRequests = 0
  const mixing = Promise.all(
    Array.from({ length: load.mixed ?? 0 }, async () => {
      while (writing) mixedRequests += await mixedLoop(writes, build.keys.importer)
    }),
  )
  if (imports || load.mixed) await sleep(2000)
  const writesDone: Promise<void>[] = []
  const began = performance.now()
  for (let i = 0; performance.now() < began + SECONDS * 1000; i++) {
    await sleep(Math.max(0, began + (i * 1000) / load.rate - performance.now()))
    const email = `w.${i}.${randomBytes(4).toString('hex')}@example.it`
    const sent = performance.now()
    writesDone.push(
      call(writes, key, 'POST', '/contacts', { email }).then((answer) => {
        const at = performance.now()
        posts.push(at - sent)
        if (answer.status === 201) acknowledged.set(JSON.parse(answer.body).id, at)
      }),
    )
  }
  await Promise.all(writesDone)
  const seconds = (performance.now() - began) / 1000
  writing = false
  const ids = [...acknowledged.keys()]
  const deadline = performance.now() + 60_000
  while (performance.now() < deadline && !ids.every((id) => seen.has(id) && hook.arrived.has(id))) await sleep(50)
  following = false
  await Promise.all([follower, importing, mixing])
  await hook.close()
  const after = (times: Map<string, number>) =>
    ids.map((id) => Math.max(0, (times.get(id) ?? Number.POSITIVE_INFINITY) - (acknowledged.get(id) as number)))
  const [feed, webhook] = [after(seen), after(hook.arrived)]
  const rates =
    `${Math.round(ids.length / seconds)} writes/s` +
    (imports ? `, ${Math.round(imported / seconds)} imported/s` : '') +
    (load.mixed ? `, ${Math.round(mixedRequests / seconds)} other requests/s` : '')
  const p50p99 = (values: number[]) =>
    `p50 ${Math.round(percentile(values, 50))} ms, p99 ${Math.round(percentile(values, 99))} ms`
  return (
    `feed ${p50p99(feed)}; webhook ${p50p99(webhook)} (${rates}; ` +
    `a POST's answer ${p50p99(posts)}, a page of the feed's ${p50p99(pages)})`
  )
}

/** BURST_BATCHES batches of 1,000 contacts at once, then deliveries a second from the first arrival to the last. */
async function burst(build: Build, server: Server): Promise<string> {
  const hook = await receiver(server, build.keys.burst)
  const began = performance.now()
  const statuses = await Promise.all(
    Array.from({ length: BURST_BATCHES }, () => sendBatch(server, build.keys.burst, SMALL_BODY)),
  )
  // The deliveries keep pace with the batches while they are written: what is left when the last is acknowledged
  // drains at the deliverer's own rate.
  const written = performance.now()
  const expected = statuses.filter((status) => status === 200).length * 1000
  const deadline = performance.now() + 120_000
  while (hook.arrived.size < expected && performance.now() < deadline) await sleep(20)
  const times = [...hook.arrived.values()]
  await hook.close()
  const last = Math.max(...times)
  const perSecond = times.length / ((last - Math.min(...times)) / 1000)
  const left = times.filter((at) => at > written).length
  return (
    `${times.length} events delivered at ${Math.round(perSecond)}/s (written at ` +
    `${Math.round(expected / ((written - began) / 1000))}/s; ${left} left at the last 200, drained at ` +
    `${Math.round(left / ((last - written) / 1000))}/s)`
  )
}

buildIfNeeded()
const builds = [await prepare('after', root)]
if (options.before) builds.push(await prepare('before', resolve(options.before)))
const results: string[] = []
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      const [one, two] = [await start(build), await start(build)] as [Server, Server]
      const chosen = options.only?.split(',')
      for (const scenario of [...Object.keys(LOADS), 'burst'].filter((name) => !chosen || chosen.includes(name))) {
        const load = LOADS[scenario]
        const result = load ? await freshness(build, [one, two], load) : await burst(build, one)
        const line = `${build.name.padEnd(6)} ${scenario.padEnd(9)} ${result}`
        results.push(line)
        console.log(`round ${round + 1}: ${line}`)
      }
      await stopServer(two)
      await stopServer(one)
    }
  }
} finally {
  for (const build of builds) await build.drop()
}
console.log(
  `\nfreshness, ${SECONDS} s a scenario, ${ROUNDS} rounds (targets: p50 < 250 ms, p99 < 1 s; burst >= 1,000/s)`,
)
for (const line of results) console.log(`  ${line}`)
