// The admin CLI's erasure commands run in-process (runCli) against a fresh test database: `contact erase` erases
// as the API does and is recorded as the CLI's, `contact erasures` lists the record (no personal data), `contact
// allow` lets an erased address back; without the instance's secrets key, erase and allow refuse; `db vacuum`
// rewrites the tables, so that the erased rows leave their files (read on the embedded database).
import { PGlite } from '@electric-sql/pglite'
import t, { type Test } from 'tap'
import { createApiKey } from '../../src/admin/api-keys.ts'
import { CHANGES_CHANNEL, erasingTenantOf } from '../../src/announcements/channel.ts'
import { type CliIo, runCli } from '../../src/cli/main.ts'
import { openDatabase, PGLITE_EXTENSIONS } from '../../src/db/database.ts'
import { deployMigrations } from '../../src/db/migrate.ts'
import { pgliteSession } from '../../src/db/sql-session.ts'
import { citusNodes, createTestDatabase } from '../database.ts'
import { TEST_WEBHOOKS_KEY } from '../helper.ts'

const testDatabase = await createTestDatabase()
t.teardown(() => testDatabase.close())
const { database } = testDatabase
const { prisma } = database

const WITH_KEY = { WEBHOOKS_SECRET_KEY: TEST_WEBHOOKS_KEY }

async function cli(argv: string[], env: Record<string, string> = WITH_KEY) {
  const run = { code: -1, stdout: '', stderr: '' }
  const io: CliIo = {
    stdout: { write: (text: string) => (run.stdout += text) },
    stderr: { write: (text: string) => (run.stderr += text) },
    env,
    openDatabase: async () => ({ ...database, close: async () => {} }),
  }
  run.code = await runCli(argv, io)
  return run
}

async function cliJson<T>(t: Test, argv: string[], env?: Record<string, string>): Promise<T> {
  const run = await cli([...argv, '--json'], env)
  t.equal(run.code, 0, `${argv.join(' ')}: exit code 0 (stderr: ${run.stderr})`)
  return JSON.parse(run.stdout) as T
}

async function contactOf(tenantId: string, email: string): Promise<string> {
  const contact = await prisma.contact.create({ data: { tenantId, email, firstName: 'Ottavia', phone: '+39 333 1' } })
  return contact.id
}

t.test('erase, list, allow: as the API does, recorded as the CLI, announced to instances', async (t) => {
  const tenant = await prisma.tenant.create({ data: { name: 'Cancellazioni' } })
  const id = await contactOf(tenant.id, 'Ottavia@Example.it')
  await prisma.contact.update({ where: { tenantId_id: { tenantId: tenant.id, id } }, data: { stage: 'customer' } })
  const heard: string[] = []
  const unsubscribe = await database.listen(CHANGES_CHANNEL, (announcement) => {
    if (announcement !== undefined) heard.push(announcement)
  })
  t.teardown(unsubscribe)

  t.same(await cliJson(t, ['contact', 'erase', '--tenant', tenant.id, id]), { id, tenantId: tenant.id })
  t.equal(await prisma.contact.count({ where: { tenantId: tenant.id } }), 0, 'the contact is gone')
  const events = await prisma.event.findMany({
    where: { tenantId: tenant.id },
    orderBy: [{ occurredAt: 'asc' }, { n: 'asc' }],
  })
  t.same(
    events.map((event) => [event.type, event.contact]),
    [
      ['contact_created', null],
      ['contact_updated', null],
      ['contact_erased', null],
    ],
    'its events keep no snapshot; contact.erased follows',
  )
  for (let waited = 0; heard.length === 0 && waited < 3000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.same(heard.map(erasingTenantOf), [tenant.id], 'announced to running instances')

  const again = await cli(['contact', 'erase', '--tenant', tenant.id, id])
  t.equal(again.code, 1, 'erasing twice is an error')
  t.match(again.stderr, /^error: Contact .* does not exist in tenant .* \(never did, or was erased already\)\.\n$/)

  // An erasure by an API key, beside the CLI's.
  const key = await createApiKey(prisma, { tenantId: tenant.id, role: 'admin', scopes: ['contacts:erase'] })
  const second = await contactOf(tenant.id, 'secondo@example.it')
  await prisma.erasure.create({ data: { tenantId: tenant.id, contactId: second, keyId: key.id, source: 'api' } })
  const { erasures } = await cliJson<{ erasures: Record<string, unknown>[] }>(t, [
    'contact',
    'erasures',
    '--tenant',
    tenant.id,
  ])
  t.match(erasures, [
    { contactId: id, keyId: null, source: 'cli', erasedAt: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/ },
    { contactId: second, keyId: key.id, source: 'api' },
  ])
  t.same(Object.keys(erasures[0] ?? {}).sort(), ['contactId', 'erasedAt', 'keyId', 'source'], 'no personal data')
  const text = await cli(['contact', 'erasures', '--tenant', tenant.id])
  t.match(text.stdout, new RegExp(`^CONTACT +ERASED +BY\\n${id} +\\S+ +cli\\n${second} +\\S+ +key ${key.id}\\n$`))

  const stored = await prisma.erasedEmail.findMany({ where: { tenantId: tenant.id } })
  t.equal(stored.length, 1, 'one erased address')
  t.match(stored[0]?.emailHash, /^[0-9a-f]{64}$/, 'its keyed hash, not the address')
  t.same(await cliJson(t, ['contact', 'allow', '--tenant', tenant.id, 'OTTAVIA@example.IT']), {
    tenantId: tenant.id,
    allowed: true,
  })
  t.equal(await prisma.erasedEmail.count({ where: { tenantId: tenant.id } }), 0, 'lifted, in any case')
  t.same(await cliJson(t, ['contact', 'allow', '--tenant', tenant.id, 'ottavia@example.it']), {
    tenantId: tenant.id,
    allowed: false,
  })
  t.match((await cli(['contact', 'allow', '--tenant', tenant.id, 'ottavia@example.it'])).stdout, /nothing changed/)
})

t.test('without the secrets key, erase and allow refuse and change nothing; bad input is refused first', async (t) => {
  const tenant = await prisma.tenant.create({ data: { name: 'Senza chiave' } })
  const id = await contactOf(tenant.id, 'senza@example.it')
  for (const argv of [
    ['contact', 'erase', '--tenant', tenant.id, id],
    ['contact', 'allow', '--tenant', tenant.id, 'senza@example.it'],
  ]) {
    const run = await cli(argv, {})
    t.equal(run.code, 1, argv.join(' '))
    t.match(run.stderr, /^error: Cannot do it: the instance’s secrets key is needed .* WEBHOOKS_SECRET_KEY/)
  }
  t.equal(await prisma.contact.count({ where: { tenantId: tenant.id } }), 1, 'nothing erased')
  const bad = await cli(['contact', 'allow', '--tenant', tenant.id, 'not an address'])
  t.equal(bad.code, 1)
  t.match(bad.stderr, /Email is not an address the API takes/)
  const unknown = await cli(['contact', 'erasures', '--tenant', '00000000-0000-4000-8000-000000000000'])
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /Tenant .* does not exist/)
  t.match((await cli(['contact', 'erasures', '--tenant', tenant.id])).stdout, 'No erasures.')
})

/** The files of an embedded database, by path, from its data directory's tar (written out by a CHECKPOINT first). */
async function filesOf(client: PGlite): Promise<Map<string, Buffer>> {
  await client.exec('CHECKPOINT')
  const tar = Buffer.from(await (await client.dumpDataDir('none')).arrayBuffer())
  const files = new Map<string, Buffer>()
  for (let at = 0; at + 512 <= tar.length; ) {
    const name = tar
      .subarray(at, at + 100)
      .toString('utf8')
      .replace(/\0.*$/s, '')
    if (name === '') break
    const size = Number.parseInt(
      tar
        .subarray(at + 124, at + 136)
        .toString('utf8')
        .trim() || '0',
      8,
    )
    files.set(name, tar.subarray(at + 512, at + 512 + size))
    at += 512 + Math.ceil(size / 512) * 512
  }
  return files
}

t.test('db vacuum rewrites the tables of contacts: the erased rows leave their files', async (t) => {
  if (testDatabase.url) {
    // PostgreSQL: each table is written anew (its file node changes).
    const node = async () =>
      (
        await database.query<{ node: string }>('test_node', "SELECT pg_relation_filenode('events')::text AS node", [])
      )[0]?.node
    const before = await node()
    t.same(await cliJson(t, ['db', 'vacuum']), {
      vacuumed: ['contacts', 'contact_words', 'events', 'idempotency_keys'],
    })
    if (citusNodes().length === 0) t.not(await node(), before, 'events rewritten')
    return
  }
  // The embedded database, whose files this test can read: a fresh one, migrated.
  const client = await PGlite.create({ extensions: PGLITE_EXTENSIONS })
  await deployMigrations(pgliteSession(client))
  const embedded = await openDatabase({ pglite: client })
  t.teardown(() => embedded.close())
  const run = (argv: string[]) =>
    runCli([...argv, '--json'], {
      stdout: { write: () => true },
      stderr: { write: () => true },
      env: WITH_KEY,
      openDatabase: async () => ({ ...embedded, close: async () => {} }),
    })
  const tenant = await embedded.prisma.tenant.create({ data: { name: 'Vuoto' } })
  const email = 'segreto.zelinda@example.it'
  const contact = await embedded.prisma.contact.create({ data: { tenantId: tenant.id, email, firstName: 'Zelinda' } })
  t.equal(await run(['contact', 'erase', '--tenant', tenant.id, contact.id]), 0)
  const holding = async () =>
    [...(await filesOf(client))].filter(([, bytes]) => bytes.includes(Buffer.from(email))).map(([name]) => name)
  t.ok(
    (await holding()).some((name) => name.startsWith('/base/')),
    'after the erasure, dead rows still hold the address in table files',
  )
  t.equal(await run(['db', 'vacuum']), 0)
  t.same(
    (await holding()).filter((name) => !name.startsWith('/pg_wal/')),
    [],
    'after db vacuum, only the write-ahead log does (until its segments are reused)',
  )
})
