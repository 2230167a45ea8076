// The admin CLI run in-process (runCli) against a fresh test database, with captured output.
import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { createApiKey } from '../../src/admin/api-keys.ts'
import { AdminError } from '../../src/admin/guards.ts'
import { seed } from '../../src/admin/seed.ts'
import { setTenantStatus } from '../../src/admin/tenants.ts'
import { CHANGES_CHANNEL } from '../../src/announcements/channel.ts'
import { KEY_PATTERN, PRINTED_KEY, type Scope } from '../../src/auth/api-key.ts'
import { type CliIo, runCli } from '../../src/cli/main.ts'
import { DatabaseLockedError } from '../../src/db/data-dir.ts'
import { REPLANNED } from '../../src/db/statement-name.ts'
import { createDemoIfEmpty } from '../../src/demo/demo.ts'
import type { Role, TenantStatus } from '../../src/generated/prisma/enums.ts'
import { createTestDatabase } from '../database.ts'

const testDatabase = await createTestDatabase()
t.teardown(() => testDatabase.close())
const { database } = testDatabase
const { prisma } = database

interface Run {
  code: number
  stdout: string
  stderr: string
}

async function cli(argv: string[], io: Partial<CliIo> = {}): Promise<Run> {
  const run = { code: -1, stdout: '', stderr: '' }
  run.code = await runCli(argv, {
    stdout: { write: (text: string) => (run.stdout += text) },
    stderr: { write: (text: string) => (run.stderr += text) },
    env: {},
    // The CLI closes what it opened; the test database outlives every run.
    openDatabase: async () => ({ ...database, close: async () => {} }),
    ...io,
  })
  return run
}

/** Runs with --json, checks success and that stdout holds exactly one JSON object, and returns it. */
async function cliJson<T = Record<string, unknown>>(t: Test, argv: string[]): Promise<T> {
  const run = await cli([...argv, '--json'])
  t.equal(run.code, 0, `${argv.join(' ')}: exit code 0 (stderr: ${run.stderr})`)
  t.equal(run.stdout.split('\n').length, 2, 'one line on stdout')
  const parsed: unknown = JSON.parse(run.stdout)
  t.type(parsed, 'object')
  t.notOk(Array.isArray(parsed), 'an object, not an array')
  return parsed as T
}

/** Every row of every table as text: what "the database" contains, to compare or to search. */
async function dumpDatabase(): Promise<string> {
  const tables = await prisma.$queryRaw<{ name: string }[]>`
    SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`
  const parts: string[] = []
  for (const { name } of tables) {
    const rows = await prisma.$queryRawUnsafe<{ row: string }[]>(`SELECT t::text AS row FROM "${name}" t ORDER BY 1`)
    parts.push(`${name}:`, ...rows.map((r) => r.row))
  }
  return parts.join('\n')
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

t.test('demo: created once on an empty database, even when starts race', async (t) => {
  t.equal(await prisma.tenant.count(), 0, 'starts empty')
  const results = await Promise.all([createDemoIfEmpty(prisma), createDemoIfEmpty(prisma), createDemoIfEmpty(prisma)])
  const created = results.filter((r) => r !== null)
  t.equal(created.length, 1, 'exactly one call creates the demo')
  const demo = created[0]
  if (!demo) throw new Error('no demo')
  t.match(demo.key, KEY_PATTERN)

  const tenants = await prisma.tenant.findMany()
  t.same(
    tenants.map((x) => [x.id, x.name]),
    [[demo.tenantId, 'Demo']],
  )
  const tags = await prisma.tag.findMany({ where: { tenantId: demo.tenantId }, orderBy: { name: 'asc' } })
  t.same(
    tags.map((x) => x.name),
    ['evento-2026', 'newsletter', 'vip'],
  )
  const contacts = await prisma.contact.findMany({ where: { tenantId: demo.tenantId } })
  t.ok(contacts.length >= 5 && contacts.length <= 8, `${contacts.length} contacts`)
  t.equal(contacts.filter((c) => c.archivedAt !== null).length, 1, 'one archived')
  t.ok(contacts.filter((c) => c.tags.length > 0).length >= 3, 'several tagged')
  t.ok(new Set(contacts.map((c) => c.stage)).size >= 3, 'varied stages')
  t.ok(new Set(contacts.map((c) => c.emailStatus)).size >= 3, 'varied email statuses')
  t.same(new Set(contacts.map((c) => c.source)), new Set(['manual', 'import']))
  t.ok(
    contacts.every((c) => c.acquiredAt <= c.createdAt && c.createdAt <= new Date()),
    'acquired before created',
  )
  t.equal(new Set(contacts.map((c) => c.createdAt.getTime())).size, contacts.length, 'distinct createdAt')
  t.ok(
    contacts.every((c) => c.emailKey === (c.email === null ? null : c.email.toLowerCase())),
    'emailKey set by the trigger',
  )

  const keys = await prisma.apiKey.findMany({ where: { tenantId: demo.tenantId } })
  t.equal(keys.length, 1)
  t.equal(keys[0]?.role, 'admin')
  t.same(keys[0]?.scopes, ['contacts:read', 'contacts:write'])
  t.equal(keys[0]?.keyHash, sha256(demo.key), 'only the hash is stored')

  const before = await dumpDatabase()
  t.equal(await createDemoIfEmpty(prisma), null, 'null on a database that has a tenant')
  t.equal(await dumpDatabase(), before, 'and nothing changes')
})

t.test('db deploy', async (t) => {
  const result = await cliJson<{ applied: string[]; alreadyApplied: number }>(t, ['db', 'deploy'])
  t.same(result.applied, [], 'the test database is already migrated')
  t.ok(result.alreadyApplied >= 1)
  const text = await cli(['db', 'deploy'])
  t.equal(text.code, 0)
  t.match(text.stdout, /^No pending migrations \(\d+ already applied\)\.\n$/)
})

t.test('tenant create, list and status', async (t) => {
  const created = await cliJson<{ id: string; name: string; status: string }>(t, [
    'tenant',
    'create',
    '--name',
    '  Rossi & Figli S.r.l.  ',
  ])
  t.same(Object.keys(created).sort(), ['id', 'name', 'rateLimitMax', 'status'])
  t.equal(created.name, 'Rossi & Figli S.r.l.', 'trimmed')
  t.equal(created.status, 'active')

  const listed = await cliJson<{ tenants: { id: string; name: string; status: string; createdAt: string }[] }>(t, [
    'tenant',
    'list',
  ])
  t.same(listed.tenants.at(-1), { ...created, createdAt: listed.tenants.at(-1)?.createdAt })
  t.equal(listed.tenants.length, await prisma.tenant.count())

  const suspended = await cliJson(t, ['tenant', 'status', created.id, 'suspended'])
  t.same(suspended, { ...created, status: 'suspended' })
  t.equal((await prisma.tenant.findUnique({ where: { id: created.id } }))?.status, 'suspended')

  const text = await cli(['tenant', 'status', created.id, 'active'])
  t.equal(text.code, 0)
  t.equal(text.stdout, `Tenant ${created.id} "Rossi & Figli S.r.l." is now active.\n`)
  const table = await cli(['tenant', 'list'])
  t.match(table.stdout, /^ID +STATUS +LIMIT +CREATED +NAME\n/)
  t.match(table.stdout, `${created.id}  active  default `)

  const limited = await cliJson(t, ['tenant', 'limit', created.id, '--per-minute', '600'])
  t.same(limited, { ...created, rateLimitMax: 600 })
  const limitText = await cli(['tenant', 'limit', created.id, '--default'])
  t.equal(limitText.stdout, `Tenant ${created.id} "Rossi & Figli S.r.l." now has the default rate limit.\n`)
  t.equal((await prisma.tenant.findUnique({ where: { id: created.id } }))?.rateLimitMax, null)
  for (const argv of [
    ['tenant', 'limit', created.id],
    ['tenant', 'limit', created.id, '--per-minute', '0'],
    ['tenant', 'limit', created.id, '--per-minute', '10', '--default'],
  ]) {
    const refused = await cli(argv)
    t.not(refused.code, 0, `${argv.slice(3).join(' ') || 'no option'}: refused`)
  }
})

t.test('key create, list and revoke', async (t) => {
  const tenant = await prisma.tenant.create({ data: { name: 'Chiavi' } })
  const issued = await cliJson<{ id: string; key: string; tenantId: string; role: string; scopes: string[] }>(t, [
    'key',
    'create',
    '--tenant',
    tenant.id,
    '--role',
    'editor',
    '--scopes',
    'contacts:read, contacts:write,contacts:read',
    '--label',
    'import notturno',
  ])
  t.same(Object.keys(issued).sort(), ['id', 'key', 'role', 'scopes', 'tenantId'])
  t.match(issued, { tenantId: tenant.id, role: 'editor', scopes: ['contacts:read', 'contacts:write'] })
  t.match(issued.key, KEY_PATTERN)

  const dump = await dumpDatabase()
  t.notOk(dump.toLowerCase().includes(issued.key.toLowerCase()), 'the clear key is stored nowhere')
  t.notOk(dump.includes(issued.key.slice(4, 20)), 'not even a part of it')
  const row = await prisma.apiKey.findFirstOrThrow({ where: { id: issued.id } })
  t.equal(row.keyHash, sha256(issued.key), 'the stored hash is the SHA-256 of the key')
  t.equal(row.hint, issued.key.slice(-4))
  t.equal(row.label, 'import notturno')

  const text = await cli(['key', 'create', '--tenant', tenant.id, '--role', 'viewer', '--scopes', 'contacts:read'])
  t.equal(text.code, 0)
  const shown = text.stdout.match(new RegExp(PRINTED_KEY.source, 'g')) ?? []
  t.equal(shown.length, 1, 'the text output shows the key once')

  for (const format of [['--json'], []]) {
    const listed = await cli(['key', 'list', '--tenant', tenant.id, ...format])
    t.equal(listed.code, 0)
    t.notOk(listed.stdout.includes(issued.key), 'key list never prints a key')
    t.notOk(listed.stdout.includes(row.keyHash), 'nor a hash')
    t.notOk(/svc_[0-9a-f]{8}/.test(listed.stdout), 'nor anything like a key')
  }
  const { keys } = await cliJson<{ keys: Record<string, unknown>[] }>(t, ['key', 'list', '--tenant', tenant.id])
  t.equal(keys.length, 2)
  const listedIssued = keys.find((k) => k.id === issued.id)
  t.same(Object.keys(listedIssued ?? {}).sort(), [
    'createdAt',
    'hint',
    'id',
    'label',
    'lastUsedAt',
    'revokedAt',
    'role',
    'scopes',
    'tenantId',
  ])
  t.match(listedIssued, { hint: issued.key.slice(-4), revokedAt: null, label: 'import notturno' })

  const revoked = await cliJson<{ revokedAt: string; changed: boolean }>(t, ['key', 'revoke', issued.id])
  t.equal(revoked.changed, true)
  const stored = await prisma.apiKey.findFirstOrThrow({ where: { id: issued.id } })
  t.equal(stored.revokedAt?.toISOString(), revoked.revokedAt, 'revokedAt is set')
  const again = await cliJson<{ revokedAt: string; changed: boolean }>(t, ['key', 'revoke', issued.id])
  t.same(again, { ...revoked, changed: false }, 'revoking again changes nothing')
  const againText = await cli(['key', 'revoke', issued.id])
  t.match(againText.stdout, `was already revoked on ${revoked.revokedAt}`)
  const other = await prisma.apiKey.findFirstOrThrow({ where: { tenantId: tenant.id, id: { not: issued.id } } })
  t.equal(other.revokedAt, null, 'the other key is untouched')
})

t.test('key create takes webhooks:manage; webhook list and remove, within one tenant', async (t) => {
  const tenant = await prisma.tenant.create({ data: { name: 'Ganci' } })
  const other = await prisma.tenant.create({ data: { name: 'Altri ganci' } })
  const issued = await cliJson<{ scopes: string[] }>(t, [
    'key',
    'create',
    '--tenant',
    tenant.id,
    '--role',
    'admin',
    '--scopes',
    'webhooks:manage',
  ])
  t.same(issued.scopes, ['webhooks:manage'])
  const hook = (tenantId: string, url: string) =>
    prisma.webhook.create({
      data: { tenantId, id: crypto.randomUUID(), url, events: ['contact_created'], secret: Buffer.alloc(60, 1) },
    })
  const mine = await hook(tenant.id, 'https://crm.example.it/a')
  const theirs = await hook(other.id, 'https://crm.example.it/b')
  await prisma.webhookCursor.create({ data: { tenantId: tenant.id, webhookId: mine.id, seq: 0n, n: 0n } })
  await prisma.deliveryRetry.createMany({
    data: [1, 2].map((attempts) => ({
      tenantId: tenant.id,
      webhookId: mine.id,
      eventId: crypto.randomUUID(),
      attempts,
      nextAttemptAt: new Date(),
    })),
  })
  await prisma.deliveryAttempt.create({
    data: {
      tenantId: tenant.id,
      webhookId: mine.id,
      eventId: crypto.randomUUID(),
      attempt: 9,
      error: 'HTTP 500',
      durationMs: 5,
      outcome: 'given_up',
    },
  })

  const { webhooks } = await cliJson<{ webhooks: Record<string, unknown>[] }>(t, [
    'webhook',
    'list',
    '--tenant',
    tenant.id,
  ])
  t.match(webhooks, [{ id: mine.id, url: mine.url, events: ['contact.created'], pending: 2, failed: 1 }])
  t.equal(webhooks.length, 1, "the other tenant's webhook is not listed")
  t.notOk('secret' in (webhooks[0] ?? {}), 'never the sealed secret')
  const text = await cli(['webhook', 'list', '--tenant', tenant.id])
  t.match(text.stdout, /ID\s+CREATED\s+EVENTS\s+PENDING\s+FAILED\s+URL/)

  const foreign = await cli(['webhook', 'remove', '--tenant', tenant.id, theirs.id])
  t.equal(foreign.code, 1, "another tenant's webhook cannot be removed through this one")
  t.match(foreign.stderr, `has no webhook ${theirs.id}`)
  t.ok(await prisma.webhook.findUnique({ where: { tenantId_id: { tenantId: other.id, id: theirs.id } } }))

  t.same(await cliJson(t, ['webhook', 'remove', '--tenant', tenant.id, mine.id]), { id: mine.id })
  t.equal(
    await prisma.deliveryRetry.count({ where: { tenantId: tenant.id, webhookId: mine.id } }),
    0,
    'its retries went with it',
  )
  t.equal((await cli(['webhook', 'remove', '--tenant', tenant.id, mine.id])).code, 1, 'removing twice is an error')
  t.match((await cli(['webhook', 'list', '--tenant', tenant.id])).stdout, 'No webhooks.')
})

t.test('revocations and tenant status changes are announced on the database, with no Redis setting', async (t) => {
  let announcements = 0
  // The subscription's own start counts once: what follows it is what the CLI announced.
  const unsubscribe = await database.listen(CHANGES_CHANNEL, () => announcements++)
  t.teardown(unsubscribe)
  t.equal(announcements, 1, 'the start of the subscription')

  const tenant = await prisma.tenant.create({ data: { name: 'Annunci' } })
  const issued = await createApiKey(prisma, { tenantId: tenant.id, role: 'admin', scopes: ['contacts:read'] })
  for (const argv of [
    ['key', 'revoke', issued.id],
    ['key', 'revoke', issued.id],
    ['tenant', 'status', tenant.id, 'suspended'],
  ]) {
    const run = await cli(argv)
    t.same([run.code, run.stderr], [0, ''], argv.join(' '))
  }
  for (let waited = 0; announcements < 3 && waited < 3000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(announcements, 3, 'the revocation and the status change; a repeated revocation is not announced')

  const failing = {
    ...database,
    close: async () => {},
    query: async <Row>(name: string, sql: string, params: unknown[]): Promise<Row[]> => {
      if (name === 'auth_changes_notify') throw new Error('connection lost')
      return database.query<Row>(name, sql, params)
    },
  }
  const unannounced = await cli(['tenant', 'status', tenant.id, 'active'], { openDatabase: async () => failing })
  t.equal(unannounced.code, 0, 'the announcement failed: the change is still made')
  t.match(unannounced.stderr, /^warning: could not announce the change; .* within AUTH_CACHE_TTL_MS/)
  t.equal(unannounced.stdout, `Tenant ${tenant.id} "Annunci" is now active.\n`)
  t.equal((await prisma.tenant.findUniqueOrThrow({ where: { id: tenant.id } })).status, 'active')
})

t.test('tag create and list', async (t) => {
  const tenant = await prisma.tenant.create({ data: { name: 'Etichette' } })
  const first = await cliJson<{ created: { name: string }[]; existing: { name: string }[] }>(t, [
    'tag',
    'create',
    '--tenant',
    tenant.id,
    'vip',
    '  newsletter ',
    'vip',
  ])
  t.same(
    first.created.map((x) => x.name),
    ['vip', 'newsletter'],
  )
  t.same(first.existing, [])
  const second = await cli(['tag', 'create', '--tenant', tenant.id, 'VIP', 'vip'])
  t.equal(second.code, 0)
  t.equal(second.stdout, 'Created: VIP.\nAlready present: vip.\n', 'existing names are reported, not an error')

  const { tags } = await cliJson<{ tags: { name: string }[] }>(t, ['tag', 'list', '--tenant', tenant.id])
  t.same(
    tags.map((x) => x.name),
    ['newsletter', 'VIP', 'vip'].sort(),
  )
  t.equal(await prisma.tag.count({ where: { tenantId: tenant.id } }), 3)
  const text = await cli(['tag', 'list', '--tenant', tenant.id])
  t.match(text.stdout, /^ID +CREATED +NAME\n/)
})

t.test('field create, list and delete, with the API’s rules; a deletion reclaims the values', async (t) => {
  const tenant = await prisma.tenant.create({ data: { name: 'Campi', eventFeed: { create: {} } } })
  const created = await cliJson<{ name: string; options: string[] }>(t, [
    'field',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'livello',
    '--type',
    'enum',
    '--options',
    'bronzo, oro',
    '--label',
    'Livello',
  ])
  t.same(created.options, ['bronzo', 'oro'])
  await cliJson(t, ['field', 'create', '--tenant', tenant.id, '--name', 'note', '--type', 'text', '--max-length', '20'])
  const { fields } = await cliJson<{ fields: { name: string; maxLength?: number }[] }>(t, [
    'field',
    'list',
    '--tenant',
    tenant.id,
  ])
  t.same(
    fields.map((f) => [f.name, f.maxLength]),
    [
      ['livello', undefined],
      ['note', 20],
    ],
  )
  t.match(
    (await cli(['field', 'list', '--tenant', tenant.id])).stdout,
    /^NAME +TYPE +RULE +LABEL\nlivello +enum +bronzo,oro +Livello\n/,
  )
  for (const [argv, message] of [
    [['--name', 'livello', '--type', 'text'], /già un campo "livello"/],
    [['--name', 'email', '--type', 'text'], /già un campo del contatto/],
    [['--name', 'x', '--type', 'enum'], /vuole "options"/],
    [['--name', 'x', '--type', 'colore'], /"type"/],
    [['--name', 'x', '--type', 'text', '--max-length', 'tanti'], /"maxLength"/],
  ] as const) {
    const run = await cli(['field', 'create', '--tenant', tenant.id, ...argv])
    t.equal(run.code, 1, argv.join(' '))
    t.match(run.stderr, message, argv.join(' '))
  }
  await database.query(
    REPLANNED,
    `INSERT INTO contacts (id, tenant_id, email, fields) VALUES (gen_random_uuid(), $1, 'a@example.it', '{"livello": "oro"}')`,
    [tenant.id],
  )
  const deleted = await cliJson<{ reclaimed: number }>(t, ['field', 'delete', '--tenant', tenant.id, 'livello'])
  t.equal(deleted.reclaimed, 1)
  const [row] = await database.query<{ fields: object; version: number }>(
    REPLANNED,
    'SELECT fields, version FROM contacts WHERE tenant_id = $1',
    [tenant.id],
  )
  t.same(row, { fields: {}, version: 1 })
  const missing = await cli(['field', 'delete', '--tenant', tenant.id, 'livello'])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /has no field "livello"/)
})

t.test('contact archive and unarchive, within one tenant', async (t) => {
  const [mine, theirs] = await Promise.all(['Mia', 'Altrui'].map((name) => prisma.tenant.create({ data: { name } })))
  if (!mine || !theirs) throw new Error('tenants not created')
  const contact = await prisma.contact.create({ data: { tenantId: mine.id, email: 'anna.verdi@example.com' } })

  const archived = await cliJson<{ id: string; archivedAt: string | null; changed: boolean }>(t, [
    'contact',
    'archive',
    '--tenant',
    mine.id,
    contact.id,
  ])
  t.match(archived, { id: contact.id, changed: true })
  const stored = await prisma.contact.findFirstOrThrow({ where: { id: contact.id } })
  t.equal(stored.archivedAt?.toISOString(), archived.archivedAt)
  // The contact's representation changed (archivedAt): its ETag moves, so an If-None-Match never hides it.
  t.ok(stored.version > contact.version, `the version moved from ${contact.version} to ${stored.version}`)
  t.ok(stored.updatedAt > contact.updatedAt, 'updatedAt moved')

  const again = await cliJson(t, ['contact', 'archive', '--tenant', mine.id, contact.id])
  t.same(again, { ...archived, changed: false }, 'archiving twice keeps the first date')

  const foreign = await cli(['contact', 'unarchive', '--tenant', theirs.id, contact.id])
  t.equal(foreign.code, 1, 'another tenant cannot touch it')
  t.equal(foreign.stderr, `error: Contact ${contact.id} does not exist in tenant ${theirs.id}.\n`)
  t.equal(foreign.stdout, '')

  const restored = await cli(['contact', 'unarchive', '--tenant', mine.id, contact.id])
  t.equal(restored.stdout, `Contact ${contact.id} is now not archived.\n`)
  const unarchived = await prisma.contact.findFirstOrThrow({ where: { id: contact.id } })
  t.equal(unarchived.archivedAt, null)
  t.ok(unarchived.version > stored.version, 'unarchiving moves the version again')
})

t.test('bad arguments: a clear message on stderr, exit 1, nothing changed', async (t) => {
  const tenant = await prisma.tenant.create({ data: { name: 'Intatto' } })
  const key = await prisma.apiKey.findFirstOrThrow()
  const keyArgs = ['key', 'create', '--tenant', tenant.id, '--scopes', 'contacts:read']
  const cases: [string, string[], RegExp][] = [
    [
      'unknown role',
      [...keyArgs, '--role', 'owner'],
      /argument 'owner' is invalid\. Allowed choices are admin, editor/,
    ],
    ['missing role', keyArgs, /required option '--role <role>' not specified/],
    [
      'unknown scope',
      ['key', 'create', '--tenant', tenant.id, '--role', 'admin', '--scopes', 'contacts:read,contacts:delete'],
      /Unknown scope contacts:delete/,
    ],
    [
      'empty scopes',
      ['key', 'create', '--tenant', tenant.id, '--role', 'admin', '--scopes', ','],
      /at least one scope/,
    ],
    [
      'bad tenant UUID',
      ['key', 'create', '--tenant', 'acme', '--role', 'admin', '--scopes', 'contacts:read'],
      /Tenant id "acme" is not a UUID/,
    ],
    [
      'unknown tenant',
      ['key', 'create', '--tenant', UNKNOWN_ID, '--role', 'admin', '--scopes', 'contacts:read'],
      new RegExp(`^error: Tenant ${UNKNOWN_ID} does not exist\\.\\n$`),
    ],
    [
      'label too long',
      [...keyArgs, '--role', 'admin', '--label', 'x'.repeat(201)],
      /Key label must be 0-200 characters/,
    ],
    ['missing --name', ['tenant', 'create'], /required option '--name <name>' not specified/],
    ['blank name', ['tenant', 'create', '--name', '   '], /Tenant name must be 1-200 characters/],
    ['long name', ['tenant', 'create', '--name', 'n'.repeat(201)], /Tenant name must be 1-200 characters/],
    ['control character', ['tenant', 'create', '--name', 'a\u0000b'], /control characters/],
    ['bad status', ['tenant', 'status', tenant.id, 'frozen'], /'frozen' is invalid .*active, suspended, closed/],
    ['status of unknown tenant', ['tenant', 'status', UNKNOWN_ID, 'closed'], /Tenant .* does not exist/],
    ['bad key UUID', ['key', 'revoke', '12345'], /Key id "12345" is not a UUID/],
    ['unknown key', ['key', 'revoke', UNKNOWN_ID], /API key .* does not exist/],
    ['key list of unknown tenant', ['key', 'list', '--tenant', UNKNOWN_ID], /Tenant .* does not exist/],
    ['no tag name', ['tag', 'create', '--tenant', tenant.id], /missing required argument 'name'/],
    ['long tag name', ['tag', 'create', '--tenant', tenant.id, 'ok', 't'.repeat(65)], /must be 1-64 characters/],
    ['blank tag name', ['tag', 'create', '--tenant', tenant.id, 'ok', ' '], /must be 1-64 characters/],
    ['tags of unknown tenant', ['tag', 'create', '--tenant', UNKNOWN_ID, 'vip'], /Tenant .* does not exist/],
    ['tag list bad UUID', ['tag', 'list', '--tenant', 'x'], /Tenant id "x" is not a UUID/],
    ['bad contact UUID', ['contact', 'archive', '--tenant', tenant.id, 'c-1'], /Contact id "c-1" is not a UUID/],
    ['unknown contact', ['contact', 'archive', '--tenant', tenant.id, UNKNOWN_ID], /Contact .* does not exist/],
    ['non-integer --contacts', ['seed', '--tenants', '1', '--contacts', '1.5'], /'1.5' is invalid/],
    ['zero --tenants', ['seed', '--tenants', '0', '--contacts', '5'], /from 1 to 1000\b/],
    ['too many --contacts', ['seed', '--tenants', '1', '--contacts', '1000001'], /from 1 to 1000000/],
    ['missing --contacts', ['seed', '--tenants', '1'], /required option '--contacts <m>'/],
    ['unknown command', ['tenant', 'delete', tenant.id], /unknown command 'delete'/],
    ['unknown option', ['tenant', 'list', '--all'], /unknown option '--all'/],
    ['excess argument', ['key', 'revoke', key.id, key.id], /too many arguments/],
  ]
  const before = await dumpDatabase()
  for (const [name, argv, message] of cases) {
    for (const json of [true, false]) {
      const run = await cli(json ? [...argv, '--json'] : argv)
      t.equal(run.code, 1, `${name}: exit code 1`)
      t.match(run.stderr, message, `${name}: message`)
      t.notMatch(run.stderr, /\n\s+at /, `${name}: no stack trace`)
      t.equal(run.stdout, '', `${name}: nothing on stdout`)
    }
  }
  t.equal(await dumpDatabase(), before, 'the database is unchanged')
})

t.test('admin functions check their input for callers other than the CLI', async (t) => {
  const tenant = await prisma.tenant.create({ data: { name: 'Diretto' } })
  const before = await dumpDatabase()
  const refusals: [string, () => Promise<unknown>, RegExp][] = [
    ['no tenants', () => seed(prisma, { tenants: 0, contacts: 1 }), /number of tenants must be an integer from 1/],
    ['fractional contacts', () => seed(prisma, { tenants: 1, contacts: 1.5 }), /number of contacts must be/],
    ['unknown status', () => setTenantStatus(prisma, tenant.id, 'frozen' as TenantStatus), /status must be one of/],
    [
      'unknown role',
      () => createApiKey(prisma, { tenantId: tenant.id, role: 'owner' as Role, scopes: ['contacts:read'] }),
      /Role must be one of admin, editor, viewer/,
    ],
    [
      'unknown scope',
      () => createApiKey(prisma, { tenantId: tenant.id, role: 'admin', scopes: ['contacts:delete' as Scope] }),
      /Unknown scope contacts:delete/,
    ],
    ['no scope', () => createApiKey(prisma, { tenantId: tenant.id, role: 'admin', scopes: [] }), /at least one scope/],
  ]
  for (const [name, call, message] of refusals) {
    await t.rejects(call(), AdminError, name)
    await t.rejects(call(), { message }, name)
  }
  t.equal(await dumpDatabase(), before, 'nothing written')
})

t.test('help and bare group commands', async (t) => {
  const help = await cli(['--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /Usage: rubrica/)
  const group = await cli(['key'])
  t.equal(group.code, 1, 'a group without a command is an error')
  t.match(group.stderr, /Usage: rubrica key/)
})

t.test('opening the database', async (t) => {
  const lockedMessage = 'The embedded database in /x is in use by another rubrica process.'
  const locked = await cli(['tenant', 'list', '--json'], {
    openDatabase: async () => {
      throw new DatabaseLockedError(lockedMessage)
    },
  })
  t.same(locked, { code: 1, stdout: '', stderr: `error: ${lockedMessage}\n` })

  let opened: unknown
  const urlRun = await cli(['tenant', 'list'], {
    env: { DATABASE_URL: 'postgres://db.example/rubrica', DATABASE_POOL_SIZE: '7' },
    openDatabase: async (options) => {
      opened = options
      throw new Error('connection refused')
    },
  })
  t.match(
    opened,
    { url: 'postgres://db.example/rubrica', poolSize: 7 },
    'DATABASE_URL and its pool size, as the server',
  )
  t.equal(urlRun.stderr, 'error: connection refused\n')

  await cli(['tenant', 'list'], {
    env: { DATA_DIR: '/srv/rubrica' },
    openDatabase: async (options) => {
      opened = options
      throw new Error('stop')
    },
  })
  t.same(opened, { dataDir: '/srv/rubrica' }, 'no DATABASE_URL: the embedded database in DATA_DIR')

  const badConfig = await cli(['tenant', 'list'], { env: { DATABASE_URL: 'mysql://x' } })
  t.equal(badConfig.code, 1)
  t.match(badConfig.stderr, /^error: invalid configuration: .*DATABASE_URL/)
})

t.test('the database is opened only for a valid command line, and always closed', async (t) => {
  let opened = 0
  let closed = 0
  const counting: Partial<CliIo> = {
    openDatabase: async () => {
      opened++
      return { ...database, close: async () => void closed++ }
    },
  }
  t.equal((await cli(['tenant', 'list'], counting)).code, 0)
  t.equal((await cli(['key', 'revoke', UNKNOWN_ID], counting)).code, 1, 'the admin function refuses')
  t.same([opened, closed], [2, 2], 'closed after a success and after a failure')
  t.equal((await cli(['key', 'revoke', 'x'], counting)).code, 1, 'a bad argument')
  t.equal((await cli(['key', '--help'], counting)).code, 0, 'help')
  t.same([opened, closed], [2, 2], 'neither opens the database')
})

t.test('seed', async (t) => {
  const before = await prisma.tenant.count()
  const result = await cliJson<{ tenants: { id: string; name: string; key: string }[]; contacts: number }>(t, [
    'seed',
    '--tenants',
    '2',
    '--contacts',
    '5003',
  ])
  t.equal(result.contacts, 10006)
  t.equal(result.tenants.length, 2)
  t.equal(await prisma.tenant.count(), before + 2)
  for (const tenant of result.tenants) {
    const [stats] = await prisma.$queryRaw<
      {
        contacts: number
        created: number
        emails: number
        archived: number
        acquired_after: number
        statuses: number
        stages: number
        sources: number
        consents: number
      }[]
    >`SELECT count(*)::int AS contacts, count(DISTINCT created_at)::int AS created,
        count(DISTINCT email_key)::int AS emails, count(archived_at)::int AS archived,
        count(*) FILTER (WHERE acquired_at > created_at)::int AS acquired_after,
        count(DISTINCT email_status)::int AS statuses, count(DISTINCT stage)::int AS stages,
        count(DISTINCT source)::int AS sources, count(DISTINCT consent_type)::int AS consents
      FROM contacts WHERE tenant_id = ${tenant.id}::uuid`
    t.match(stats, {
      contacts: 5003,
      created: 5003,
      acquired_after: 0,
      statuses: 6,
      stages: 4,
      sources: 4,
      consents: 3,
    })
    t.ok(stats && stats.emails > 4800, 'email addresses, unique (most contacts have one)')
    t.ok(stats && stats.archived > 150 && stats.archived < 350, `about 5% archived (${stats?.archived})`)

    const perContact = await prisma.$queryRaw<{ tags: number; contacts: number }[]>`
      SELECT n AS tags, count(*)::int AS contacts FROM (
        SELECT (SELECT count(*) FROM contact_tags ct WHERE ct.tenant_id = c.tenant_id AND ct.contact_id = c.id)::int AS n
        FROM contacts c WHERE c.tenant_id = ${tenant.id}::uuid) x GROUP BY n ORDER BY n`
    t.same(
      perContact.map((x) => x.tags),
      [0, 1, 2, 3],
      '0-3 tags per contact',
    )
    // The contact's own tags (what answers and searches read) are its links (seeded contacts once had none).
    const [apart] = await prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM contacts c WHERE c.tenant_id = ${tenant.id}::uuid AND cardinality(c.tags) <>
        (SELECT count(*) FROM contact_tags ct WHERE ct.tenant_id = c.tenant_id AND ct.contact_id = c.id)`
    t.equal(apart?.n, 0, 'each contact carries the tags it is linked to')
    const key = await prisma.apiKey.findFirstOrThrow({ where: { tenantId: tenant.id } })
    t.match(key, { keyHash: sha256(tenant.key), role: 'admin', scopes: ['contacts:read', 'contacts:write'] })
  }
  const text = await cli(['seed', '--tenants', '1', '--contacts', '3'])
  t.equal(text.code, 0)
  t.match(text.stdout, /^Seeded 1 tenant\(s\) with 3 contacts each in \d+\.\d s\.\nTENANT +ADMIN KEY/)
  t.equal(text.stderr, '', 'no progress bar when stderr is not a terminal')
})
