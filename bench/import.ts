// The batch import on PostgreSQL (docs/performance.md, "Batch import beside COPY without triggers"): 100,000 new
// contacts into one tenant, 1,000 per call, 4 calls at a time, against the server run as its own process; then the
// same import again (every item unchanged). Beside the import, in rounds whose order alternates, PostgreSQL's own
// COPY of the same rows into another tenant (same table, same triggers: what this schema costs the database), and
// into a plain table of the same columns and indexes without any trigger or foreign key (what storing the rows
// costs: the reference of the batch's target). Prints contacts per second, the ratios to both COPYs, the server's
// peak RSS and how far the newest createdAt is from the database clock, and the CPU time each contact of the first
// import took in the database, in the server and in this bench's own client (read from /proc, so with the database
// on this machine only): against the CPU the machine has, the most any import could reach here. Nothing is sent
// anywhere but 127.0.0.1.
//
// With them, the path issue "One owner of a contact's writes" asked to measure: the same batches fed by `COPY FROM
// STDIN` into a temporary table, then set-based statements into contacts (the batch's LOCK and INSERT, reading the
// table instead of a JSON parameter; the triggers record events and links), 1,000 rows a transaction, 4 psql
// sessions at once. It has no server in front: its rate is what the database allows such a path at best.
//
//   tsx bench/import.ts            # BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres)
//   CONTACTS=20000 tsx bench/import.ts
//   CONTACTS=1000000 RERUN=0 ROUNDS=1 tsx bench/import.ts   # the million, once, without the re-run
import { spawn, spawnSync } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApiKey } from '../src/admin/api-keys.ts'
import { selectContact } from '../src/contacts/sql.ts'
import { openDatabase } from '../src/db/database.ts'
import { deployMigrations } from '../src/db/migrate.ts'
import { scratchDatabase, sql } from './database.ts'
import { cpuMs, memoryMb } from './sampling.ts'
import { type Server, startSources, stopServer } from './servers.ts'

const CONTACTS = Number(process.env.CONTACTS ?? 100_000)
/** RERUN=0 leaves out the second import (every item unchanged), which doubles a large run. */
const RERUN = process.env.RERUN !== '0'
/**
 * Rounds of the four (import, COPY into contacts, COPY into a plain table, the STDIN path), each into tables or tenants of its
 * own, in the reverse order in even rounds: a change in the machine's other load weighs on all four alike.
 */
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const PER_CALL = 1000
const AT_ONCE = 4
/** The million-contact target: an import of that size within this many seconds. */
const MILLION_SECONDS = 60

const item = (i: number) => ({
  email: `persona.${i}@example.it`,
  firstName: `Nome${i % 997}`,
  lastName: `Cognome${i % 991}`,
  consentType: i % 2 ? 'consent' : 'contract',
  stage: i % 5 ? 'lead' : 'customer',
  ...(i % 3 === 0 ? { tags: ['vip'] } : {}),
})
const chunks = Array.from({ length: Math.ceil(CONTACTS / PER_CALL) }, (_, c) =>
  JSON.stringify({
    contacts: Array.from({ length: Math.min(PER_CALL, CONTACTS - c * PER_CALL) }, (_, i) => item(c * PER_CALL + i)),
  }),
)

type Rate = { seconds: number; perSecond: number }
const rate = (started: bigint): Rate => {
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return { seconds, perSecond: Math.round(CONTACTS / seconds) }
}

const database = await scratchDatabase('import')
const dbUrl = database.url
const workDir = mkdtempSync(join(tmpdir(), 'rubrica-import-'))
let server: Server | undefined
try {
  const db = await openDatabase({ url: dbUrl, poolSize: 2 })
  await db.withSession((session) => deployMigrations(session))
  // Per round: a tenant the batch imports into (with its key), one the COPY writes into, one for the STDIN path.
  const rounds: { key: string; tenantId: string; copiedId: string; stdinId: string }[] = []
  for (let r = 1; r <= ROUNDS; r++) {
    const tenant = await db.prisma.tenant.create({ data: { name: `Import ${r}` } })
    const copied = await db.prisma.tenant.create({ data: { name: `Copy ${r}` } })
    const stdin = await db.prisma.tenant.create({ data: { name: `Stdin ${r}` } })
    for (const t of [tenant, copied, stdin]) await db.prisma.tag.create({ data: { tenantId: t.id, name: 'vip' } })
    const scopes = ['contacts:read', 'contacts:write'] as const
    const { key } = await createApiKey(db.prisma, { tenantId: tenant.id, role: 'editor', scopes: [...scopes] })
    rounds.push({ key, tenantId: tenant.id, copiedId: copied.id, stdinId: stdin.id })
  }
  await db.close()

  server = await startSources({ DATABASE_URL: dbUrl })
  const { pid, url } = server
  const before = memoryMb(pid)

  /** The CPU ms so far of every PostgreSQL backend connected to the bench database, but the one asking. */
  const backendMs = async () => {
    const rows = await sql<{ pid: number }>(
      dbUrl,
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' " +
        'AND pid <> pg_backend_pid()',
    )
    return new Map(rows.map((row) => [row.pid, cpuMs(row.pid)]))
  }

  const importAll = async (key: string) => {
    const totals = { created: 0, updated: 0, unchanged: 0, failed: 0 }
    let next = 0
    const cpuBefore = { server: cpuMs(pid), database: await backendMs(), client: process.cpuUsage() }
    const started = process.hrtime.bigint()
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < chunks.length) {
          const res = await fetch(`${url}/api/v1/contacts/batch`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: chunks[next++],
          })
          if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`)
          const answer = (await res.json()) as typeof totals
          for (const outcome of Object.keys(totals) as (keyof typeof totals)[]) totals[outcome] += answer[outcome]
        }
      }),
    )
    const measured = rate(started)
    // Backends that came during the import count whole; one that left in it is missed (the pool keeps them).
    let database = 0
    for (const [backend, now] of await backendMs()) database += now - (cpuBefore.database.get(backend) ?? 0)
    const client = process.cpuUsage(cpuBefore.client)
    const cpu = { database, server: cpuMs(pid) - cpuBefore.server, client: (client.user + client.system) / 1000 }
    return { ...totals, ...measured, cpu }
  }

  /** psql's \copy of the rows `row` makes (CSV) into `target` (a table and its columns). */
  const copyInto = (name: string, target: string, row: (i: number) => string[]): Rate => {
    const file = join(workDir, `${name}.csv`)
    writeFileSync(file, Array.from({ length: CONTACTS }, (_, i) => row(i).join(',')).join('\n'))
    const started = process.hrtime.bigint()
    const copy = spawnSync('psql', [dbUrl, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy ${target} FROM '${file}' CSV`], {
      encoding: 'utf8',
    })
    if (copy.status !== 0) throw new Error(`COPY into ${target} failed: ${copy.stderr}`)
    return rate(started)
  }
  const tagsOf = (i: number) => `{${(item(i).tags ?? []).join(',')}}`
  const columns = 'id, email, first_name, last_name, consent_type, stage, source, tenant_id, tags'
  // COPY of the same rows (tags included) into rubrica's table: what the database itself takes to store them,
  // triggers, foreign key and indexes included; the triggers fill in the email key and the timestamps.
  const copyOwn = (round: number, tenantId: string) =>
    copyInto(`contacts-${round}`, `contacts (${columns})`, (i) => {
      const { email, firstName, lastName, consentType, stage } = item(i)
      return [randomUUID(), email, firstName, lastName, consentType, stage, 'api', tenantId, tagsOf(i)]
    })
  // The same rows into a table of the same columns, keys and indexes (LIKE … INCLUDING ALL) with no trigger and no
  // foreign key: the values the triggers would compute (email key, createdAt one microsecond apart) are in the file.
  const start = Date.UTC(2026, 0, 1)
  const instant = (i: number) =>
    `${new Date(start + Math.floor(i / 1000)).toISOString().slice(0, 23)}${String(i % 1000).padStart(3, '0')}Z`
  const copyPlain = async (round: number, tenantId: string) => {
    const table = `contacts_plain_${round}`
    await sql(dbUrl, `CREATE TABLE ${table} (LIKE contacts INCLUDING ALL)`)
    return copyInto(`plain-${round}`, `${table} (${columns}, email_key, created_at, acquired_at)`, (i) => {
      const { email, firstName, lastName, consentType, stage } = item(i)
      const row = [randomUUID(), email, firstName, lastName, consentType, stage, 'api', tenantId, tagsOf(i)]
      return [...row, email.toLowerCase(), instant(i), instant(i)]
    })
  }

  // The COPY FROM STDIN path: one psql script per session, each COPYing its share of the batches into a temporary
  // table and writing them as the batch does (LOCK, then INSERT … SELECT … ON CONFLICT DO NOTHING RETURNING the
  // answer); the sessions announce their backend and when they are done, so that the backends' CPU is read before
  // they end.
  const answer = `${selectContact('c', true)}, c.version`
  const stdinScript = (tenantId: string, batches: number[]) => {
    const lines = [
      'SELECT pg_backend_pid() AS backend \\gset',
      '\\echo started :backend',
      `CREATE TEMP TABLE batch_rows (n int, email text, first_name text, last_name text, consent_type text,
        stage text, tags text[], email_hash char(64)) ON COMMIT DELETE ROWS;`,
    ]
    for (const b of batches) {
      lines.push('BEGIN;', 'COPY batch_rows FROM STDIN;')
      for (let i = b * PER_CALL; i < Math.min(CONTACTS, (b + 1) * PER_CALL); i++) {
        const { email, firstName, lastName, consentType, stage } = item(i)
        const hash = createHash('sha256').update(email).digest('hex')
        lines.push([i, email, firstName, lastName, consentType, stage, tagsOf(i), hash].join('\t'))
      }
      lines.push(
        '\\.',
        `SELECT b.n, c.id FROM batch_rows b LEFT JOIN LATERAL (SELECT c.id FROM contacts c WHERE c.tenant_id =
          '${tenantId}' AND c.email_key = lower(b.email) OFFSET 0 FOR NO KEY UPDATE OF c) c ON true;`,
        `INSERT INTO contacts AS c (id, tenant_id, email, first_name, last_name, consent_type, stage, tags, source)
          SELECT gen_random_uuid(), '${tenantId}', b.email, b.first_name, b.last_name, b.consent_type,
            b.stage::stage, b.tags, 'api'
          FROM batch_rows b
          WHERE NOT EXISTS (SELECT 1 FROM contacts e WHERE e.tenant_id = '${tenantId}' AND e.email_key =
              lower(b.email) OFFSET 0)
            AND NOT EXISTS (SELECT 1 FROM erased_emails x WHERE x.tenant_id = '${tenantId}' AND x.email_hash =
              b.email_hash OFFSET 0)
          ORDER BY lower(b.email) ON CONFLICT DO NOTHING RETURNING ${answer};`,
        'COMMIT;',
      )
    }
    lines.push('\\echo done', 'SELECT pg_sleep(30);')
    return lines.join('\n')
  }
  /** The STDIN path into `tenantId`: its rate, and its backends' CPU per contact in µs. */
  const stdinPath = async (round: number, tenantId: string) => {
    const scripts = Array.from({ length: AT_ONCE }, (_, s) => {
      const file = join(workDir, `stdin-${round}-${s}.sql`)
      const mine = chunks.flatMap((_, b) => (b % AT_ONCE === s ? [b] : []))
      writeFileSync(file, stdinScript(tenantId, mine))
      return file
    })
    const started = process.hrtime.bigint()
    const backendsMs = await Promise.all(
      scripts.map(
        (file) =>
          new Promise<number>((resolvePromise, reject) => {
            const psql = spawn('psql', [dbUrl, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-o', '/dev/null', '-f', file])
            let out = ''
            let err = ''
            psql.stderr.on('data', (chunk: Buffer) => {
              err += chunk.toString()
            })
            psql.stdout.on('data', (chunk: Buffer) => {
              out += chunk.toString()
              const backend = /started (\d+)/.exec(out)?.[1]
              if (backend && out.includes('done')) {
                resolvePromise(cpuMs(Number(backend)))
                psql.kill()
              }
            })
            psql.on('exit', (code) => reject(new Error(`psql ${file} ended (${code}) before it was done: ${err}`)))
          }),
      ),
    )
    const measured = rate(started)
    const database = Math.round((backendsMs.reduce((a, b) => a + b, 0) / CONTACTS) * 1000)
    return { ...measured, databaseUs: database }
  }

  const measured: { batch: Rate; own: Rate; plain: Rate; stdin: Rate & { databaseUs: number } }[] = []
  let first: Awaited<ReturnType<typeof importAll>> | undefined
  let again: Awaited<ReturnType<typeof importAll>> | undefined
  let ahead: number | undefined
  for (const [index, round] of rounds.entries()) {
    const number = index + 1
    const steps = {
      batch: async (): Promise<Rate> => {
        const result = await importAll(round.key)
        if (result.created !== CONTACTS) throw new Error(`round ${number}: created ${result.created} of ${CONTACTS}`)
        if (first === undefined) {
          first = result
          const [clock] = await sql<{ ahead: number }>(
            dbUrl,
            `SELECT extract(epoch FROM max(created_at) - clock_timestamp())::float AS ahead FROM contacts
             WHERE tenant_id = '${round.tenantId}'`,
          )
          ahead = clock?.ahead
          if (RERUN) again = await importAll(round.key)
        }
        return result
      },
      own: async () => copyOwn(number, round.copiedId),
      plain: () => copyPlain(number, round.copiedId),
      stdin: () => stdinPath(number, round.stdinId),
    }
    const order =
      number % 2 === 0 ? (['plain', 'stdin', 'own', 'batch'] as const) : (['batch', 'own', 'stdin', 'plain'] as const)
    const rates = {} as (typeof measured)[number]
    for (const step of order) Object.assign(rates, { [step]: await steps[step]() })
    measured.push(rates)
    console.error(
      `round ${number}: import ${rates.batch.perSecond}/s, COPY into contacts ${rates.own.perSecond}/s, ` +
        `COPY into the plain table ${rates.plain.perSecond}/s, the STDIN path ${rates.stdin.perSecond}/s`,
    )
  }
  const after = memoryMb(pid)

  const middle = (values: number[]) => values.sort((x, y) => x - y)[Math.floor((values.length - 1) / 2)] ?? Number.NaN
  /** Each round's figure, then their median. */
  const perRound = (pick: (m: (typeof measured)[number]) => number, digits = 0) => {
    const values = measured.map(pick)
    return `${values.map((v) => v.toFixed(digits)).join(', ')}; median ${middle(values).toFixed(digits)}`
  }
  const toPlain = middle(measured.map((m) => m.batch.perSecond / m.plain.perSecond))
  console.log(
    `Batch import, ${CONTACTS} new contacts into one tenant, ${PER_CALL} per call, ${AT_ONCE} calls at a time; ` +
      `${ROUNDS} round(s), alternating order; per round, then the median`,
  )
  console.log(
    `  import: ${perRound((m) => m.batch.perSecond)} contacts/s (seconds: ${perRound((m) => m.batch.seconds, 1)})`,
  )
  if (again) {
    console.log(
      `  re-run (round 1): ${again.perSecond} contacts/s (${again.seconds.toFixed(1)} s; unchanged ${again.unchanged}, ` +
        `created ${again.created}, updated ${again.updated})`,
    )
  }
  console.log(
    `  COPY into contacts: ${perRound((m) => m.own.perSecond)} contacts/s (same rows, same triggers and keys, psql \\copy)`,
  )
  console.log(
    `  COPY into a plain table: ${perRound((m) => m.plain.perSecond)} contacts/s (same columns and indexes, no ` +
      'trigger, no foreign key)',
  )
  console.log(
    `  the COPY FROM STDIN path, no server: ${perRound((m) => m.stdin.perSecond)} contacts/s, ` +
      `${perRound((m) => m.stdin.perSecond / m.plain.perSecond, 2)}x of the plain table; its backends' CPU per ` +
      `contact ${perRound((m) => m.stdin.databaseUs)} µs`,
  )
  console.log(`  import / COPY into contacts: ${perRound((m) => m.batch.perSecond / m.own.perSecond, 2)}x`)
  console.log(
    `  import / COPY into the plain table: ${perRound((m) => m.batch.perSecond / m.plain.perSecond, 2)}x (target ` +
      `>= 0.5x: ${toPlain >= 0.5 ? 'met' : 'missed'})`,
  )
  if (CONTACTS >= 1_000_000 && first) {
    console.log(
      `  ${CONTACTS} contacts in ${first.seconds.toFixed(1)} s (target < ${MILLION_SECONDS} s: ` +
        `${first.seconds < MILLION_SECONDS ? 'met' : 'missed'})`,
    )
  }
  if (first) {
    const { database, server: ofServer, client } = first.cpu
    const micros = (cpu: number) => Math.round((cpu / CONTACTS) * 1000)
    const total = database + ofServer + client
    const cores = availableParallelism()
    console.log(
      `  CPU per contact, first import: database ${micros(database)} µs, server ${micros(ofServer)} µs, this ` +
        `bench's client ${micros(client)} µs; ${micros(total)} µs in all: on ${cores} cores at most ` +
        `${Math.round((cores * CONTACTS * 1000) / total)} contacts/s (${((total / 1000 / first.seconds / cores) * 100).toFixed(0)}% ` +
        'of them busy during the import)',
    )
  }
  console.log(`  server RSS: ${Math.round(before.now)} MB before, peak ${Math.round(after.peak)} MB during the imports`)
  console.log(`  newest createdAt after the first import: ${(ahead ?? Number.NaN).toFixed(3)} s from the clock`)
} finally {
  if (server) await stopServer(server)
  rmSync(workDir, { recursive: true, force: true })
  await database.drop()
}
