// What the tenant's own fields cost (docs/performance.md, "The tenant's own fields"): the same requests on contacts
// with 20 fields set and on contacts without, in one run, in rounds whose order alternates, against the server run
// as its own process on PostgreSQL: GET by id, POST, PATCH (the same change of a name; with fields, the body also
// sets all 20 of them, one changed), and the batch import of 1,000 contacts. Prints requests (or contacts) per
// second and the CPU each took in the server and in the database (read from /proc: the database on this machine),
// and each figure with fields as a multiple of the one without. Nothing is sent anywhere but 127.0.0.1.
//
//   tsx bench/fields.ts            # BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres)
//   SECONDS=2 ROUNDS=1 tsx bench/fields.ts
import { Agent, request } from 'node:http'
import { createApiKey } from '../src/admin/api-keys.ts'
import { openDatabase } from '../src/db/database.ts'
import { deployMigrations } from '../src/db/migrate.ts'
import { scratchDatabase, sql } from './database.ts'
import { cpuMs } from './sampling.ts'
import { buildIfNeeded, fixed, log, note, startRubrica, stopServer } from './servers.ts'

const SECONDS = Number(process.env.SECONDS ?? 4)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
/** Requests in flight at once: enough to keep the server's one thread and the database busy. */
const AT_ONCE = 8

/** 20 fields of every type, as an integration would define them. */
const DEFINITIONS = [
  ...['azienda', 'ruolo', 'citta', 'note', 'codice'].map((name) => ({ name, type: 'text', maxLength: 200 })),
  ...['punti', 'ordini', 'spesa', 'sconto'].map((name) => ({ name, type: 'number' })),
  ...['attivo', 'privacy', 'vip'].map((name) => ({ name, type: 'boolean' })),
  ...['compleanno', 'rinnovo', 'iscrizione'].map((name) => ({ name, type: 'date' })),
  ...['ultimo_ordine', 'ultimo_accesso'].map((name) => ({ name, type: 'datetime' })),
  ...['livello', 'canale'].map((name) => ({ name, type: 'enum', options: ['uno', 'due', 'tre', 'quattro'] })),
  { name: 'interessi', type: 'multiEnum', options: ['vino', 'viaggi', 'libri', 'sport', 'musica'] },
]
const values = (i: number) => ({
  azienda: `Azienda ${i % 97} S.r.l.`,
  ruolo: 'Responsabile acquisti',
  citta: ['Milano', 'Forlì', 'Napoli'][i % 3],
  note: `Cliente dal ${2000 + (i % 25)}, preferisce essere contattato la mattina`,
  codice: `C-${100000 + i}`,
  punti: i % 1000,
  ordini: i % 50,
  spesa: (i % 5000) + 0.5,
  sconto: i % 30,
  attivo: i % 2 === 0,
  privacy: true,
  vip: i % 10 === 0,
  compleanno: `19${50 + (i % 50)}-0${1 + (i % 9)}-1${i % 10}`,
  rinnovo: '2027-01-31',
  iscrizione: '2024-05-02',
  ultimo_ordine: '2026-11-20T10:15:00.000Z',
  ultimo_accesso: '2026-11-28T18:42:07.123Z',
  livello: ['uno', 'due', 'tre', 'quattro'][i % 4],
  canale: 'due',
  interessi: ['vino', 'libri'],
})

const agent = new Agent({ keepAlive: true, maxSockets: AT_ONCE })
function call(url: string, key: string, method: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const headers = {
    authorization: `Bearer ${key}`,
    ...(payload !== undefined && { 'content-type': 'application/json' }),
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    req.end(payload)
  })
}

const database = await scratchDatabase('fields')
try {
  buildIfNeeded()
  const db = await openDatabase({ url: database.url, poolSize: 2 })
  await db.withSession((session) => deployMigrations(session))
  const tenant = await db.prisma.tenant.create({ data: { name: 'Campi', eventFeed: { create: {} } } })
  const { key } = await createApiKey(db.prisma, {
    tenantId: tenant.id,
    role: 'admin',
    scopes: ['contacts:read', 'contacts:write', 'fields:manage'],
  })
  await db.close()
  const server = await startRubrica('rubrica', database.url)
  const api = `${server.url}/api/v1`
  for (const definition of DEFINITIONS) {
    const answer = await call(`${api}/fields`, key, 'POST', definition)
    if (answer.status !== 201) throw new Error(`define ${definition.name}: ${answer.text}`)
  }

  const backends = async () => {
    const rows = await sql<{ pid: number }>(
      database.url,
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' " +
        'AND pid <> pg_backend_pid()',
    )
    return rows.map((row) => row.pid)
  }
  /** Runs `work` and answers its seconds and the CPU ms the server and the database backends took meanwhile. */
  const measure = async (work: () => Promise<number>) => {
    const pids = await backends()
    const before = { server: cpuMs(server.pid), db: pids.map(cpuMs) }
    const started = process.hrtime.bigint()
    const done = await work()
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    const database = pids.reduce((sum, pid, i) => sum + cpuMs(pid) - (before.db[i] ?? 0), 0)
    return { done, seconds, serverMs: cpuMs(server.pid) - before.server, databaseMs: database }
  }
  /**
   * As many `send`s as `atOnce` loops make in SECONDS, each answering `status`; the count of what they sent, `per`
   * a send.
   */
  const load = (
    status: number,
    send: (n: number) => Promise<{ status: number; text: string }>,
    atOnce = AT_ONCE,
    per = 1,
  ) =>
    measure(async () => {
      let n = 0
      const until = Date.now() + SECONDS * 1000
      await Promise.all(
        Array.from({ length: atOnce }, async () => {
          while (Date.now() < until) {
            const answer = await send(n++)
            if (answer.status !== status) throw new Error(`${answer.status}: ${answer.text.slice(0, 300)}`)
          }
        }),
      )
      return n * per
    })

  let created = 0
  const person = (withFields: boolean) => {
    const i = created++
    return { email: `p${i}@bench.example.com`, firstName: `Nome${i}`, ...(withFields && { fields: values(i) }) }
  }
  const ids: Record<'plain' | 'fields', string[]> = { plain: [], fields: [] }
  /** Batches of 1,000 new contacts, two at once, for SECONDS: one batch took too little time to measure alone. */
  const batch = (withFields: boolean) =>
    load(
      200,
      async () => {
        const contacts = Array.from({ length: 1000 }, () => person(withFields))
        const answer = await call(`${api}/contacts/batch`, key, 'POST', { contacts })
        if (answer.status !== 200) return answer
        const results = JSON.parse(answer.text).results as { status: number; contact: { id: string } }[]
        for (const result of results) {
          if (result.status !== 201) throw new Error(`item ${JSON.stringify(result)}`)
          ids[withFields ? 'fields' : 'plain'].push(result.contact.id)
        }
        return answer
      },
      2,
      1000,
    )
  const kinds = {
    'batch import of 1,000': batch,
    'GET by id': (withFields: boolean) => {
      const pool = ids[withFields ? 'fields' : 'plain']
      return load(200, (n) => call(`${api}/contacts/${pool[n % pool.length]}`, key, 'GET'))
    },
    POST: (withFields: boolean) => load(201, () => call(`${api}/contacts`, key, 'POST', person(withFields))),
    PATCH: (withFields: boolean) => {
      const pool = ids[withFields ? 'fields' : 'plain']
      return load(200, (n) => {
        const changed = { firstName: `Nuovo${n}`, ...(withFields && { fields: { ...values(n), punti: n } }) }
        return call(`${api}/contacts/${pool[n % pool.length]}`, key, 'PATCH', changed)
      })
    },
  }
  type Figures = Awaited<ReturnType<typeof batch>>
  const results = new Map<string, Figures[]>()
  // Round 0 warms the server (its compiled code, the statements prepared on its connections) and is not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [kind, run] of Object.entries(kinds)) {
      // Batches first: they make the contacts the reads and PATCHes take.
      const order = round % 2 === 1 ? [false, true] : [true, false]
      for (const withFields of order) {
        const figures = await run(withFields)
        const name = `${kind}|${withFields}`
        if (round > 0) results.set(name, [...(results.get(name) ?? []), figures])
        note(
          `round ${round}, ${kind}, ${withFields ? '20 fields' : 'no fields'}: ${fixed(figures.done / figures.seconds, 0)}/s`,
        )
      }
    }
  }
  await stopServer(server)

  const total = (name: string) => {
    const runs = results.get(name) ?? []
    const sum = (pick: (f: Figures) => number) => runs.reduce((s, f) => s + pick(f), 0)
    const done = sum((f) => f.done)
    return {
      perSecond: done / sum((f) => f.seconds),
      serverUs: (sum((f) => f.serverMs) * 1000) / done,
      databaseUs: (sum((f) => f.databaseMs) * 1000) / done,
    }
  }
  log(`The tenant's own fields: ${ROUNDS} rounds, ${SECONDS} s of load each (${AT_ONCE} at once), PostgreSQL`)
  log(
    '| request | per s, no fields | per s, 20 fields | ratio | CPU µs server + database, no fields | 20 fields | CPU ratio |',
  )
  log('| --- | --- | --- | --- | --- | --- | --- |')
  for (const kind of Object.keys(kinds)) {
    const plain = total(`${kind}|false`)
    const fields = total(`${kind}|true`)
    const cpu = (f: typeof plain) => f.serverUs + f.databaseUs
    log(
      `| ${kind} | ${fixed(plain.perSecond, 0)} | ${fixed(fields.perSecond, 0)} | ${fixed(plain.perSecond / fields.perSecond, 2)}x | ` +
        `${fixed(plain.serverUs, 0)} + ${fixed(plain.databaseUs, 0)} | ${fixed(fields.serverUs, 0)} + ${fixed(fields.databaseUs, 0)} | ` +
        `${fixed(cpu(fields) / cpu(plain), 2)}x |`,
    )
  }
  log('(per s of a batch: contacts; a ratio is the cost with fields as a multiple of the cost without: time, then CPU)')
} finally {
  agent.destroy()
  await database.drop()
}
