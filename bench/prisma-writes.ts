// Where Prisma's cost goes on rubrica's two write paths. In one Node process, against a seeded database, a POST
// with one tag and a PATCH {stage, consentType} are each done four ways, with 8 operations in flight for a fixed
// count:
//   (i)   Prisma model calls as rubrica made them before commit 797fadf: a prepared lookup of the tag, then
//         contact.create with a nested create of the tag link; contact.updateManyAndReturn, then a prepared read
//         of the tag names. Once with Prisma's statements unnamed (the adapter's default, as rubrica ran them
//         then) and once named (prepared, as src/db/database.ts names them now);
//   (ii)  the single statement rubrica runs now (src/contacts/sql.ts, imported, so that this
//         measures exactly rubrica's SQL) through prisma.$queryRawUnsafe, prepared by name through
//         @prisma/adapter-pg's statementNameGenerator;
//   (iii) the same statement through a pg pool, as a named statement (what rubrica does).
// It prints operations per second, this process's CPU per operation (process.cpuUsage), PostgreSQL's CPU per
// operation (all its processes, from /proc: other users of the server count too), the RSS after each way's warm-up
// (the ways warm up in the table's order before any is measured) and at the end.
//
//   tsx bench/prisma-writes.ts [--smoke] [--operations N] [--concurrency C] [--keep]
//
// Defaults: 4 tenants x 10,000 contacts (the createdAt trigger serialises the inserts of one tenant, so the
// operations are spread over several), 5,000 operations per row after a warm-up of a tenth as many, pools of as
// many connections as operations in flight; --smoke: 2 x 1,000 and 500. The database (rubrica_prisma_writes, or
// rubrica_prisma_writes_smoke_<pid>) is created and seeded as bench/run.ts does (bench/database.ts, on
// BENCH_PG_URL's server) and dropped at the end unless --keep.
import { createHash, randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { statements } from '../src/contacts/sql.ts'
import { PrismaClient } from '../src/generated/prisma/client.ts'

const { CREATE_SQL, createParams, updateStatement } = statements

import { type ContactUpdate, STAGES } from '../src/contacts/model.ts'
import { type BenchDatabase, benchDatabase, prepareDatabase, releaseDatabase, sampleTenants } from './database.ts'
import { cleanUpOnSignals, cleanup, onCleanup } from './lifecycle.ts'
import { fixed, log, note } from './output.ts'
import { loadavg, postgresCpuMeter } from './sampling.ts'
import { buildIfNeeded } from './servers.ts'
import { BENCH_EMAIL_DOMAIN } from './wrk.ts'

interface Settings {
  tenants: number
  contacts: number
  operations: number
  concurrency: number
  keep: boolean
  database: string
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      operations: { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      keep: { type: 'boolean', default: false },
    },
  })
  const positive = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback
    if (!/^[1-9][0-9]{0,6}$/.test(value)) throw new Error(`--${name} must be a whole number from 1`)
    return Number(value)
  }
  const smoke = values.smoke
  // Never shared with a concurrent smoke run unless kept on purpose (as bench/options.ts does).
  const smokeDatabase = values.keep ? 'rubrica_prisma_writes_smoke' : `rubrica_prisma_writes_smoke_${process.pid}`
  return {
    tenants: smoke ? 2 : 4,
    contacts: smoke ? 1_000 : 10_000,
    operations: positive('operations', values.operations, smoke ? 500 : 5_000),
    concurrency: positive('concurrency', values.concurrency, 8),
    keep: values.keep,
    database: smoke ? smokeDatabase : 'rubrica_prisma_writes',
  }
}

/** What one operation works on: a tenant, one of its tags and one of its contacts. */
interface TenantFixture {
  id: string
  tags: string[]
  contactIds: string[]
}

/** The PATCH measured: {stage, consentType}, as the HTTP benchmark's scenario f sends. */
type Patch = Required<Pick<ContactUpdate, 'stage' | 'consentType'>>

/** The i-th operation's tenant, tag, contact and patch: spread evenly, the same for every way. */
function pick(tenants: TenantFixture[], i: number) {
  const tenant = tenants[i % tenants.length]
  if (!tenant) throw new Error('no tenant')
  const tag = tenant.tags[i % tenant.tags.length] ?? ''
  const contactId = tenant.contactIds[i % tenant.contactIds.length] ?? ''
  const patch: Patch = {
    stage: STAGES[i % STAGES.length] ?? 'lead',
    consentType: ['consent', 'contract', 'unknown'][i % 3] ?? 'unknown',
  }
  return { tenant, tag, contactId, patch }
}

// What rubrica ran besides Prisma's model calls before commit 797fadf (its prepared statements).
const TAGS_BY_NAME_SQL =
  'SELECT id, name FROM tags WHERE tenant_id = $1 AND name = ANY($2::text[]) ORDER BY name COLLATE "C"'
const TAG_NAMES_SQL =
  'SELECT t.name FROM contact_tags ct JOIN tags t ON t.tenant_id = ct.tenant_id AND t.id = ct.tag_id ' +
  'WHERE ct.tenant_id = $1 AND ct.contact_id = $2 ORDER BY t.name COLLATE "C"'

/** The stored fields of a Contact, and the version: the select of rubrica's model calls then. */
const CONTACT_SELECT = {
  id: true,
  email: true,
  firstName: true,
  lastName: true,
  phone: true,
  emailStatus: true,
  stage: true,
  source: true,
  consentType: true,
  archivedAt: true,
  acquiredAt: true,
  createdAt: true,
  updatedAt: true,
  version: true,
} as const

/** A row from a model call as a Contact (timestamps as ISO text), as rubrica's toContact made it. */
function toContact(record: Record<string, unknown>, tags: string[]): Record<string, unknown> {
  const contact: Record<string, unknown> = { tags }
  for (const [field, value] of Object.entries(record))
    contact[field] = value instanceof Date ? value.toISOString() : value
  return contact
}

/** The connections and clients the rows use; Prisma's are opened on pools of their own. */
interface Clients {
  pool: pg.Pool
  unnamed: PrismaClient
  named: PrismaClient
}

/** Prisma's statements named by their text, as src/db/database.ts names them. */
const statementNameGenerator = ({ sql }: { sql: string }) =>
  `prisma_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`

function openClients(url: string, connections: number): Clients {
  const open = () => {
    const pool = new pg.Pool({ connectionString: url, max: connections })
    pool.on('error', () => {})
    return pool
  }
  return {
    pool: open(),
    unnamed: new PrismaClient({ adapter: new PrismaPg(open()) }),
    named: new PrismaClient({ adapter: new PrismaPg(open(), { statementNameGenerator }) }),
  }
}

async function closeClients(clients: Clients): Promise<void> {
  for (const prisma of [clients.unnamed, clients.named]) await prisma.$disconnect()
  await clients.pool.end()
}

/** One way of doing one operation: `run(i)` does the i-th, and fails when it did not write. */
interface Way {
  operation: 'POST' | 'PATCH'
  how: string
  run: (i: number) => Promise<void>
}

/** What every POST sends besides its email and tag. */
const NEW_CONTACT = { phone: '+39 02 1234 5678', firstName: 'Bench', lastName: 'Load', consentType: 'unknown' }

/** rubrica's own values for its create statement. */
const createValues = (tenantId: string, email: string, tag: string) =>
  createParams(tenantId, { ...NEW_CONTACT, email, tags: [tag] }, randomUUID(), null)

/** POST as rubrica did it before 797fadf: the tag's id by a prepared statement, then Prisma's nested create. */
async function createByModel(clients: Clients, prisma: PrismaClient, tenantId: string, email: string, tag: string) {
  const { rows: tags } = await clients.pool.query<{ id: string; name: string }>({
    name: 'tags_by_name',
    text: TAGS_BY_NAME_SQL,
    values: [tenantId, [tag]],
  })
  const record = await prisma.contact.create({
    data: { ...NEW_CONTACT, tenantId, email, source: 'api', tags: tags.map((t) => t.name) },
    select: CONTACT_SELECT,
  })
  toContact(
    record,
    tags.map((t) => t.name),
  )
}

/** PATCH as rubrica did it before 797fadf: Prisma's UPDATE … RETURNING, then the tag names by a prepared read. */
async function updateByModel(clients: Clients, prisma: PrismaClient, tenantId: string, id: string, patch: Patch) {
  const [record] = await prisma.contact.updateManyAndReturn({
    where: { id, tenantId },
    data: patch,
    select: CONTACT_SELECT,
  })
  if (!record) throw new Error('the update changed no contact')
  const { rows } = await clients.pool.query<{ name: string }>({
    name: 'contact_tag_names',
    text: TAG_NAMES_SQL,
    values: [tenantId, id],
  })
  toContact(
    record,
    rows.map((row) => row.name),
  )
}

function postWays(clients: Clients, tenants: TenantFixture[], runId: string): Way[] {
  const email = (way: string, i: number) => `wrk-pw-${runId}-${way}-${i}@${BENCH_EMAIL_DOMAIN}`
  const values = (way: string, i: number) => {
    const { tenant, tag } = pick(tenants, i)
    return createValues(tenant.id, email(way, i), tag)
  }
  const created = (rows: { id?: string | null }[]) => {
    if (!rows[0]?.id) throw new Error('the create statement created nothing')
  }
  const byModel = (prisma: PrismaClient, way: string) => async (i: number) => {
    const { tenant, tag } = pick(tenants, i)
    await createByModel(clients, prisma, tenant.id, email(way, i), tag)
  }
  const byPg = async (i: number) => {
    const { rows } = await clients.pool.query({ name: 'contacts_create', text: CREATE_SQL, values: values('pg', i) })
    created(rows)
  }
  const byRaw = async (i: number) => created(await clients.named.$queryRawUnsafe(CREATE_SQL, ...values('raw', i)))
  const way = (how: string, run: Way['run']): Way => ({ operation: 'POST', how, run })
  return [
    way('(iii) one statement, pg pool, named', byPg),
    way('(ii) one statement, Prisma $queryRawUnsafe, named', byRaw),
    way('(i) tag lookup + contact.create, Prisma named', byModel(clients.named, 'named')),
    way('(i) tag lookup + contact.create, Prisma unnamed', byModel(clients.unnamed, 'unnamed')),
  ]
}

function patchWays(clients: Clients, tenants: TenantFixture[]): Way[] {
  const updated = (rows: unknown[]) => {
    if (rows.length !== 1) throw new Error('the update changed no contact')
  }
  const statement = (i: number) => {
    const { tenant, contactId, patch } = pick(tenants, i)
    return updateStatement(tenant.id, contactId, patch)
  }
  const byModel = (prisma: PrismaClient) => async (i: number) => {
    const { tenant, contactId, patch } = pick(tenants, i)
    await updateByModel(clients, prisma, tenant.id, contactId, patch)
  }
  const byPg = async (i: number) => {
    const { name, sql, params } = statement(i)
    updated((await clients.pool.query({ name, text: sql, values: params })).rows)
  }
  const byRaw = async (i: number) => {
    const { sql, params } = statement(i)
    updated(await clients.named.$queryRawUnsafe<unknown[]>(sql, ...params))
  }
  const way = (how: string, run: Way['run']): Way => ({ operation: 'PATCH', how, run })
  return [
    way('(iii) one statement, pg pool, named', byPg),
    way('(ii) one statement, Prisma $queryRawUnsafe, named', byRaw),
    way('(i) updateManyAndReturn + tag read, Prisma named', byModel(clients.named)),
    way('(i) updateManyAndReturn + tag read, Prisma unnamed', byModel(clients.unnamed)),
  ]
}

/** Runs operations `first` to `first + count - 1` with `concurrency` in flight. */
async function runConcurrently(first: number, count: number, concurrency: number, run: (i: number) => Promise<void>) {
  let next = first
  const worker = async () => {
    while (next < first + count) await run(next++)
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

interface Row {
  way: Way
  operations: number
  seconds: number
  nodeCpuMs: number
  postgresCpuMs: number
  /** This process's RSS after the warm-up of this way and of those before it (Prisma loads its parts lazily). */
  rssMb: number
}

const rss = () => process.memoryUsage.rss() / 2 ** 20

/**
 * Every way warmed up first (statements prepared, Prisma's query compiler loaded and tiered up), so that no row
 * pays for what an earlier one would have; then each measured, its operations numbered after the warm-up's.
 */
async function measureAll(ways: Way[], settings: Settings): Promise<Row[]> {
  const warmup = Math.max(settings.concurrency, Math.floor(settings.operations / 10))
  const rssAfterWarmup: number[] = []
  for (const way of ways) {
    await runConcurrently(0, warmup, settings.concurrency, way.run)
    rssAfterWarmup.push(rss())
  }
  const rows: Row[] = []
  for (const [i, way] of ways.entries()) {
    const postgresCpu = postgresCpuMeter()
    const cpu = process.cpuUsage()
    const started = performance.now()
    await runConcurrently(warmup, settings.operations, settings.concurrency, way.run)
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    const nodeCpuMs = (used.user + used.system) / 1000
    const rssMb = rssAfterWarmup[i] ?? 0
    rows.push({ way, operations: settings.operations, seconds, nodeCpuMs, postgresCpuMs: postgresCpu(), rssMb })
    note(`${way.operation} ${way.how}: ${fixed(settings.operations / seconds, 0)} ops/s`)
  }
  return rows
}

function printTable(rows: Row[]): void {
  log('| operation | how | ops | ops/s | Node CPU ms/op | PostgreSQL CPU ms/op | RSS after its warm-up (MB) |')
  log('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
  for (const r of rows) {
    const perOp = (ms: number) => fixed(ms / r.operations, 3)
    log(
      `| ${r.way.operation} | ${r.way.how} | ${r.operations} | ${fixed(r.operations / r.seconds, 0)} | ` +
        `${perOp(r.nodeCpuMs)} | ${perOp(r.postgresCpuMs)} | ${fixed(r.rssMb, 0)} |`,
    )
  }
}

/** Per tenant: its id, tag names and a sample of contact ids, from the sampling of bench/run.ts. */
async function fixtures(settings: Settings, db: BenchDatabase): Promise<TenantFixture[]> {
  const { seed } = await prepareDatabase(db, settings, settings.keep)
  const { samples } = await sampleTenants(db, settings, seed)
  return samples.map((sample, i) => ({ id: seed.tenants[i]?.id ?? '', tags: sample.tags, contactIds: sample.ids }))
}

async function main(settings: Settings): Promise<void> {
  buildIfNeeded() // the admin CLI that seeds runs from dist/
  const db = benchDatabase(settings.database)
  onCleanup(() => releaseDatabase(db, settings.keep))
  const tenants = await fixtures(settings, db)
  const loadAtStart = loadavg()
  const runId = Date.now().toString(36)
  let rows: Row[] = []
  const clients = openClients(db.url, settings.concurrency)
  try {
    rows = await measureAll([...postWays(clients, tenants, runId), ...patchWays(clients, tenants)], settings)
  } finally {
    await closeClients(clients) // before the cleanup drops the database under them
  }
  log(
    `# Prisma on the write paths: ${settings.tenants} tenant(s) x ${settings.contacts} contacts, ` +
      `${settings.operations} operations per row, ${settings.concurrency} in flight, pools of ` +
      `${settings.concurrency}; Node ${process.version}; load average ${loadAtStart} at start, ${loadavg()} at end`,
  )
  log()
  printTable(rows)
  log()
  log(`RSS of this process at the end: ${fixed(rss(), 0)} MB`)
}

cleanUpOnSignals()
let exitCode = 0
try {
  await main(readSettings())
} catch (error) {
  process.stderr.write(`prisma-writes failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`)
  exitCode = 1
} finally {
  await cleanup()
}
process.exit(exitCode)
