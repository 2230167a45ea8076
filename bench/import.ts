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
//   tsx bench/import.ts            # BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres)
//   CONTACTS=20000 tsx bench/import.ts
//   CONTACTS=1000000 RERUN=0 ROUNDS=1 tsx bench/import.ts   # the million, once, without the re-run
import { spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createApiKey } from '../src/admin/api-keys.ts'
import { openDatabase } from '../src/db/database.ts'
import { deployMigrations } from '../src/db/migrate.ts'

const CONTACTS = Number(process.env.CONTACTS ?? 100_000)
/** RERUN=0 leaves out the second import (every item unchanged), which doubles a large run. */
const RERUN = process.env.RERUN !== '0'
/**
 * Rounds of the three (import, COPY into contacts, COPY into a plain table), each into tables or tenants of its
 * own, in the reverse order in even rounds: a change in the machine's other load weighs on all three alike.
 */
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const PER_CALL = 1000
const AT_ONCE = 4
/** The million-contact target: an import of that size within this many seconds. */
const MILLION_SECONDS = 60

const adminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const name = `rubrica_bench_import_${process.pid}`
const dbUrl = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString()
const sql = async <Row>(url: string, text: string): Promise<Row[]> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows as Row[]
  } finally {
    await client.end()
  }
}

const item = (i: number) => ({
  email: `persona.${i}@example.it`,
  firstName: `Nome${i % 997}`,
  lastName: `Cognome${i % 991}`,
  consentType: i % 2 ? 'consent' : 'contract',
  stage: i % 5 ? 'lead' : 'customer',
  ...(i % 3 === 0 ? { tags: ['vip'] } : {}),
})
/** psql's \copy of `file` (CSV) into `target` (a table and its columns); rows per second. */
function copyInto(file: string, target: string): { seconds: number; perSecond: number } {
  const started = process.hrtime.bigint()
  const copy = spawnSync('psql', [dbUrl, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy ${target} FROM '${file}' CSV`], {
    encoding: 'utf8',
  })
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  if (copy.status !== 0) throw new Error(`COPY into ${target} failed: ${copy.stderr}`)
  return { seconds, perSecond: Math.round(CONTACTS / seconds) }
}

const chunks = Array.from({ length: Math.ceil(CONTACTS / PER_CALL) }, (_, c) =>
  JSON.stringify({
    contacts: Array.from({ length: Math.min(PER_CALL, CONTACTS - c * PER_CALL) }, (_, i) => item(c * PER_CALL + i)),
  }),
)

/** Clock ticks per second of /proc/PID/stat's times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100

/** The CPU seconds (user and system) process `pid` has used so far (Linux); 0 once it has gone. */
function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/** The CPU seconds so far of every PostgreSQL backend connected to the bench database, but the one asking. */
async function backendSeconds(): Promise<Map<number, number>> {
  const rows = await sql<{ pid: number }>(
    dbUrl,
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' " +
      'AND pid <> pg_backend_pid()',
  )
  return new Map(rows.map(({ pid }) => [pid, cpuSecondsOf(pid)]))
}

/** Kilobytes of the process's peak and current resident set (Linux). */
function memoryOf(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
  return { peak: kb('VmHWM'), now: kb('VmRSS') }
}

await sql(adminUrl, `CREATE DATABASE "${name}"`)
const workDir = mkdtempSync(join(tmpdir(), 'rubrica-import-'))
let server: ReturnType<typeof spawn> | undefined
try {
  const database = await openDatabase({ url: dbUrl, poolSize: 2 })
  await database.withSession((session) => deployMigrations(session))
  // Per round: a tenant the batch imports into (with its key) and one the COPY writes into.
  const rounds: { key: string; tenantId: string; copiedId: string }[] = []
  for (let r = 1; r <= ROUNDS; r++) {
    const tenant = await database.prisma.tenant.create({ data: { name: `Import ${r}` } })
    const copied = await database.prisma.tenant.create({ data: { name: `Copy ${r}` } })
    for (const t of [tenant, copied]) await database.prisma.tag.create({ data: { tenantId: t.id, name: 'vip' } })
    const { key } = await createApiKey(database.prisma, {
      tenantId: tenant.id,
      role: 'editor',
      scopes: ['contacts:read', 'contacts:write'],
    })
    rounds.push({ key, tenantId: tenant.id, copiedId: copied.id })
  }
  await database.close()

  server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: dbUrl,
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
      RATE_LIMIT_MAX: '1000000',
      WEBHOOKS_ENABLED: 'false',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const child = server
  const base = await new Promise<string>((resolve, reject) => {
    let output = ''
    child.stdout?.on('data', (chunk) => {
      output += chunk
      const found = /Server listening at (http:\/\/[^"\s]+)/.exec(output)
      if (found?.[1]) resolve(found[1])
    })
    child.on('exit', () => reject(new Error(`the server stopped:\n${output}`)))
  })
  const pid = child.pid as number
  const before = memoryOf(pid)

  const importAll = async (key: string) => {
    const totals = { created: 0, updated: 0, unchanged: 0, failed: 0 }
    let next = 0
    const cpuBefore = { server: cpuSecondsOf(pid), database: await backendSeconds(), client: process.cpuUsage() }
    const started = process.hrtime.bigint()
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < chunks.length) {
          const body = chunks[next++]
          const res = await fetch(`${base}/api/v1/contacts/batch`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body,
          })
          if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`)
          const answer = (await res.json()) as typeof totals
          for (const outcome of Object.keys(totals) as (keyof typeof totals)[]) totals[outcome] += answer[outcome]
        }
      }),
    )
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    // Backends that came during the import count whole; one that left in it is missed (the pool keeps them).
    let database = 0
    for (const [backend, now] of await backendSeconds()) database += now - (cpuBefore.database.get(backend) ?? 0)
    const client = process.cpuUsage(cpuBefore.client)
    const cpu = {
      database,
      server: cpuSecondsOf(pid) - cpuBefore.server,
      client: (client.user + client.system) / 1e6,
    }
    return { ...totals, seconds, perSecond: Math.round(CONTACTS / seconds), cpu }
  }

  // COPY of the same rows (tags included) into rubrica's table: what the database itself takes to store them,
  // triggers, foreign key and indexes included; the triggers fill in the email key and the timestamps.
  const tagsOf = (i: number) => `{${(item(i).tags ?? []).join(',')}}`
  const copyOwn = (round: number, tenantId: string) => {
    const csv = join(workDir, `contacts-${round}.csv`)
    writeFileSync(
      csv,
      Array.from({ length: CONTACTS }, (_, i) => {
        const { email, firstName, lastName, consentType, stage } = item(i)
        return [randomUUID(), email, firstName, lastName, consentType, stage, 'api', tenantId, tagsOf(i)].join(',')
      }).join('\n'),
    )
    return copyInto(csv, 'contacts (id, email, first_name, last_name, consent_type, stage, source, tenant_id, tags)')
  }

  // The same rows into a table of the same columns, keys and indexes (LIKE … INCLUDING ALL) with no trigger and no
  // foreign key: the values the triggers would compute (email key, createdAt one microsecond apart) are in the file.
  const start = Date.UTC(2026, 0, 1)
  const instant = (i: number) =>
    `${new Date(start + Math.floor(i / 1000)).toISOString().slice(0, 23)}${String(i % 1000).padStart(3, '0')}Z`
  const copyPlain = async (round: number, tenantId: string) => {
    const table = `contacts_plain_${round}`
    await sql(dbUrl, `CREATE TABLE ${table} (LIKE contacts INCLUDING ALL)`)
    const csv = join(workDir, `plain-${round}.csv`)
    writeFileSync(
      csv,
      Array.from({ length: CONTACTS }, (_, i) => {
        const { email, firstName, lastName, consentType, stage } = item(i)
        const at = instant(i)
        const row = [randomUUID(), email, email.toLowerCase(), firstName, lastName, consentType, stage, 'api']
        return [...row, tenantId, tagsOf(i), at, at].join(',')
      }).join('\n'),
    )
    return copyInto(
      csv,
      `${table} (id, email, email_key, first_name, last_name, consent_type, stage, source, tenant_id, tags, ` +
        'created_at, acquired_at)',
    )
  }

  type Rate = { seconds: number; perSecond: number }
  const measured: { batch: Rate; own: Rate; plain: Rate }[] = []
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
      own: () => Promise.resolve(copyOwn(number, round.copiedId)),
      plain: () => copyPlain(number, round.copiedId),
    }
    const order = (['batch', 'own', 'plain'] as const).slice()
    if (number % 2 === 0) order.reverse()
    const rates = {} as Record<(typeof order)[number], Rate>
    for (const step of order) rates[step] = await steps[step]()
    measured.push(rates)
    console.error(
      `round ${number}: import ${rates.batch.perSecond}/s, COPY into contacts ${rates.own.perSecond}/s, ` +
        `COPY into the plain table ${rates.plain.perSecond}/s`,
    )
  }
  const after = memoryOf(pid)

  const mb = (kb: number) => `${Math.round(kb / 1024)} MB`
  const middle = (values: number[]) => values.sort((x, y) => x - y)[Math.floor((values.length - 1) / 2)] ?? Number.NaN
  const each = (pick: (m: (typeof measured)[number]) => number) => measured.map(pick)
  const perRound = (values: number[], digits = 0) => values.map((v) => v.toFixed(digits)).join(', ')
  const toOwn = each((m) => m.batch.perSecond / m.own.perSecond)
  const toPlain = each((m) => m.batch.perSecond / m.plain.perSecond)
  console.log(
    `Batch import, ${CONTACTS} new contacts into one tenant, ${PER_CALL} per call, ${AT_ONCE} calls at a time; ` +
      `${ROUNDS} round(s), alternating order; per round, then the median`,
  )
  console.log(
    `  import:  ${perRound(each((m) => m.batch.perSecond))} contacts/s (seconds: ${perRound(
      each((m) => m.batch.seconds),
      1,
    )}); median ${middle(each((m) => m.batch.perSecond))}`,
  )
  if (again) {
    console.log(
      `  re-run (round 1):  ${again.perSecond} contacts/s (${again.seconds.toFixed(1)} s; unchanged ${again.unchanged}, created ${again.created}, updated ${again.updated})`,
    )
  }
  console.log(
    `  COPY into contacts: ${perRound(each((m) => m.own.perSecond))} contacts/s; median ${middle(each((m) => m.own.perSecond))} (same rows, same triggers and keys, psql \\copy)`,
  )
  console.log(
    `  COPY into a plain table: ${perRound(each((m) => m.plain.perSecond))} contacts/s; median ${middle(each((m) => m.plain.perSecond))} (same columns and indexes, no trigger, no foreign key)`,
  )
  console.log(`  import / COPY into contacts: ${perRound(toOwn, 2)}; median ${middle(toOwn).toFixed(2)}x`)
  const ratio = middle(toPlain)
  console.log(
    `  import / COPY into the plain table: ${perRound(toPlain, 2)}; median ${ratio.toFixed(2)}x (target >= 0.5x: ` +
      `${ratio >= 0.5 ? 'met' : 'missed'})`,
  )
  if (CONTACTS >= 1_000_000 && first) {
    console.log(
      `  ${CONTACTS} contacts in ${first.seconds.toFixed(1)} s (target < ${MILLION_SECONDS} s: ` +
        `${first.seconds < MILLION_SECONDS ? 'met' : 'missed'})`,
    )
  }
  if (first) {
    const { database, server: ofServer, client } = first.cpu
    const micros = (cpuSeconds: number) => Math.round((cpuSeconds / CONTACTS) * 1e6)
    const total = database + ofServer + client
    const cores = availableParallelism()
    console.log(
      `  CPU per contact, first import: database ${micros(database)} µs, server ${micros(ofServer)} µs, this ` +
        `bench's client ${micros(client)} µs; ${micros(total)} µs in all: on ${cores} cores at most ` +
        `${Math.round((cores * CONTACTS) / total)} contacts/s (${((total / first.seconds / cores) * 100).toFixed(0)}% of ` +
        'them busy during the import)',
    )
  }
  console.log(`  server RSS: ${mb(before.now)} before, peak ${mb(after.peak)} during the imports`)
  console.log(`  newest createdAt after the first import: ${(ahead ?? Number.NaN).toFixed(3)} s from the clock`)
} finally {
  server?.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 1000))
  rmSync(workDir, { recursive: true, force: true })
  await sql(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
}
