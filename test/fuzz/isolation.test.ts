// Model-based tenant isolation: random sequences of creates, reads, updates, list walks and operator archiving,
// by keys of three tenants with every role and scope combination, run against the API and against a plain
// in-memory model. The API must agree with the model on every status, every contact field and every list (its
// contents and order, newest first); no operation may read, list, change or reveal another tenant's contact,
// and a 404 for a foreign id is byte for byte the 404 for an id that exists nowhere.
// FUZZ_SEED and FUZZ_RUNS set the seed and the number of sequences (see docs/reliability.md).
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import type { Scope } from '../../src/auth/api-key.ts'
import type { Role } from '../../src/generated/prisma/enums.ts'
import { addKey, build, createTenantWithKey } from '../helper.ts'
import { commentRunParameters, holds, runs, Stats } from './run.ts'
import {
  type CheckedExchange,
  type Contact,
  type ContactPage,
  checkedRequest,
  EMAIL_STATUSES,
  type ErrorBody,
  fail,
  LIST,
  type NotFoundReference,
  type RequestOptions,
  referenceNotFound,
  rowToContact,
  STAGES,
  snapshot,
} from './support.ts'

const TENANTS = 3
/** Each tenant's tags; a name of another tenant (or of none) is unknown to it. */
const TENANT_TAGS = [['vip', 'news'], ['vip', 'segreto'], []]
const TAG_POOL = ['vip', 'news', 'segreto', 'nessuno']
const EMAIL_POOL = ['ann@x.io', 'bob@x.io', 'carla@y.it', 'dario@y.it', 'eva@z.org']

type KeyName = 'admin' | 'editor' | 'viewer' | 'readOnly' | 'writeOnly'
const KEYS: Record<KeyName, { role: Role; scopes: Scope[] }> = {
  admin: { role: 'admin', scopes: ['contacts:read', 'contacts:write'] },
  editor: { role: 'editor', scopes: ['contacts:read', 'contacts:write'] },
  viewer: { role: 'viewer', scopes: ['contacts:read', 'contacts:write'] },
  readOnly: { role: 'editor', scopes: ['contacts:read'] },
  writeOnly: { role: 'admin', scopes: ['contacts:write'] },
}

interface RealTenant {
  id: string
  keys: Record<KeyName, string>
}

interface Real {
  app: FastifyInstance
  tenants: RealTenant[]
  notFound: NotFoundReference
  stats: Stats
  /** Contacts of a tenant outside the model. */
  strangers: string[]
}

/** What the API must show: each tenant's contacts, by id. */
interface Model {
  tenants: Map<string, Contact>[]
}

type Target = { kind: 'own' | 'foreign' | 'random'; pick: number; upper: boolean; random: string }

function call(r: Real, tenant: number, key: KeyName, name: string, options: RequestOptions): Promise<CheckedExchange> {
  const realTenant = r.tenants[tenant] ?? fail(`no tenant ${tenant}`)
  return checkedRequest(r.app, r.stats, name, realTenant.keys[key], options, `t${tenant}/${key}`)
}

function expectStatus(res: LightMyRequestResponse, body: unknown, status: number, code: string | null, where: string) {
  const got = res.statusCode >= 400 ? (body as ErrorBody).error.code : null
  if (res.statusCode !== status || got !== code) {
    fail(`${where}: expected ${status} ${code ?? ''}, got ${res.statusCode} ${res.body.slice(0, 400)}`)
  }
}

/** The refusal the key's role and scopes impose, if any, in docs/api.md's order (scope, then role). */
function refusal(key: KeyName, access: 'read' | 'write'): { status: number; code: string; scope: Scope } | null {
  const scope: Scope = access === 'read' ? 'contacts:read' : 'contacts:write'
  if (!KEYS[key].scopes.includes(scope)) return { status: 403, code: 'insufficient_scope', scope }
  if (access === 'write' && KEYS[key].role === 'viewer') return { status: 403, code: 'insufficient_role', scope }
  return null
}

function checkRefusal(key: KeyName, access: 'read' | 'write', x: CheckedExchange) {
  const refused = refusal(key, access)
  if (!refused) return false
  expectStatus(x.res, x.body, refused.status, refused.code, x.where)
  const message = (x.body as ErrorBody).error.message
  if (refused.code === 'insufficient_scope') {
    for (const scope of [refused.scope, ...KEYS[key].scopes]) {
      if (!message.includes(scope)) fail(`${x.where}: the scope message does not name ${scope}: ${message}`)
    }
  }
  return true
}

function resolve(m: Model, r: Real, tenant: number, target: Target): { id: string; owner: number | null; url: string } {
  const own = [...(m.tenants[tenant]?.keys() ?? [])]
  const foreign = [...m.tenants.flatMap((contacts, i) => (i === tenant ? [] : [...contacts.keys()])), ...r.strangers]
  const pool = target.kind === 'own' ? own : target.kind === 'foreign' ? foreign : []
  const chosen = pool.length > 0 ? pool[target.pick % pool.length] : undefined
  const id = chosen ?? target.random
  const owner = chosen === undefined ? null : m.tenants.findIndex((contacts) => contacts.has(chosen))
  return { id, owner, url: `${LIST}/${target.upper ? id.toUpperCase() : id}` }
}

function expectNotFound(r: Real, x: { res: LightMyRequestResponse; where: string }) {
  if (x.res.statusCode !== 404 || x.res.body !== r.notFound.body || x.res.headers['content-type'] !== r.notFound.type) {
    fail(`${x.where}: a foreign or absent id must get the reference 404, got ${x.res.statusCode} ${x.res.body}`)
  }
}

/** Every command may run in any state: the model decides what its answer must be. */
abstract class Command implements fc.AsyncCommand<Model, Real> {
  check() {
    return true
  }
  abstract run(m: Model, r: Real): Promise<void>
}

class Create extends Command {
  constructor(
    readonly tenant: number,
    readonly key: KeyName,
    readonly payload: { email: string; firstName?: string; lastName?: string; tags?: string[] },
  ) {
    super()
  }
  async run(m: Model, r: Real) {
    const x = await call(r, this.tenant, this.key, 'POST /contacts', {
      method: 'POST',
      url: LIST,
      payload: this.payload,
    })
    if (checkRefusal(this.key, 'write', x)) return
    const contacts = m.tenants[this.tenant] ?? fail('tenant')
    const known = TENANT_TAGS[this.tenant] ?? []
    const unknown = [...new Set(this.payload.tags ?? [])].filter((tag) => !known.includes(tag))
    if (unknown.length > 0) {
      expectStatus(x.res, x.body, 400, 'unknown_tag', x.where)
      const message = (x.body as ErrorBody).error.message
      for (const tag of unknown) if (!message.includes(`"${tag}"`)) fail(`${x.where}: "${tag}" not listed: ${message}`)
      for (const tag of known) if (message.includes(`"${tag}"`)) fail(`${x.where}: known "${tag}" listed: ${message}`)
      return
    }
    const existing = [...contacts.values()].find((c) => c.email?.toLowerCase() === this.payload.email.toLowerCase())
    if (existing) {
      expectStatus(x.res, x.body, 409, 'conflict', x.where)
      const named = (x.body as ErrorBody).error.existing
      if (!isDeepStrictEqual(named, { id: existing.id, status: existing.emailStatus })) {
        fail(`${x.where}: conflict names ${JSON.stringify(named)} instead of ${existing.id}/${existing.emailStatus}`)
      }
      return
    }
    expectStatus(x.res, x.body, 201, null, x.where)
    const contact = x.body as Contact
    const wanted = {
      email: this.payload.email,
      firstName: this.payload.firstName ?? null,
      lastName: this.payload.lastName ?? null,
      phone: null,
      emailStatus: 'active',
      stage: 'lead',
      source: 'api',
      consentType: 'unknown',
      tags: [...new Set(this.payload.tags ?? [])].sort(),
      archivedAt: null,
    }
    for (const [field, value] of Object.entries(wanted)) {
      if (!isDeepStrictEqual(contact[field as keyof Contact], value)) fail(`${x.where}: ${field} of ${x.res.body}`)
    }
    if (m.tenants.some((c) => c.has(contact.id))) fail(`${x.where}: id ${contact.id} reused`)
    contacts.set(contact.id, contact)
  }
  override toString() {
    return `create(t${this.tenant}, ${this.key}, ${JSON.stringify(this.payload)})`
  }
}

type Patch = Partial<Pick<Contact, 'firstName' | 'lastName' | 'emailStatus' | 'stage' | 'consentType'>>

/** A read or a PATCH of one id: the tenant's own, another tenant's or one that exists nowhere. */
abstract class OnTarget extends Command {
  constructor(
    readonly tenant: number,
    readonly key: KeyName,
    readonly target: Target,
  ) {
    super()
  }

  /**
   * Sends the request and checks the answers decided before the body: the key's refusal, or the reference 404
   * for an id not the tenant's (null then); otherwise it must be a 200, and the id and exchange are returned.
   */
  protected async send(m: Model, r: Real, patch?: Patch): Promise<{ id: string; x: CheckedExchange } | null> {
    const { id, owner, url } = resolve(m, r, this.tenant, this.target)
    const x =
      patch === undefined
        ? await call(r, this.tenant, this.key, 'GET /contacts/:id', { method: 'GET', url })
        : await call(r, this.tenant, this.key, 'PATCH /contacts/:id', { method: 'PATCH', url, payload: patch })
    if (checkRefusal(this.key, patch === undefined ? 'read' : 'write', x)) return null
    if (owner !== this.tenant) {
      expectNotFound(r, x)
      return null
    }
    expectStatus(x.res, x.body, 200, null, x.where)
    return { id, x }
  }
}

class Get extends OnTarget {
  async run(m: Model, r: Real) {
    const sent = await this.send(m, r)
    if (!sent) return
    const { id, x } = sent
    const stored = m.tenants[this.tenant]?.get(id)
    if (!isDeepStrictEqual(x.body, stored)) fail(`${x.where}: ${x.res.body} instead of ${JSON.stringify(stored)}`)
  }
  override toString() {
    return `get(t${this.tenant}, ${this.key}, ${JSON.stringify(this.target)})`
  }
}

class Update extends OnTarget {
  constructor(
    tenant: number,
    key: KeyName,
    target: Target,
    readonly patch: Patch,
  ) {
    super(tenant, key, target)
  }
  async run(m: Model, r: Real) {
    const sent = await this.send(m, r, this.patch)
    if (!sent) return
    const { id, x } = sent
    const contacts = m.tenants[this.tenant] ?? fail('tenant')
    const before = contacts.get(id) ?? fail('model')
    const contact = x.body as Contact
    const empty = Object.keys(this.patch).length === 0
    if (empty ? contact.updatedAt !== before.updatedAt : contact.updatedAt < before.updatedAt) {
      fail(`${x.where}: updatedAt ${before.updatedAt} -> ${contact.updatedAt}`)
    }
    const wanted = { ...before, ...this.patch, updatedAt: contact.updatedAt }
    if (!isDeepStrictEqual(contact, wanted)) fail(`${x.where}: ${x.res.body} instead of ${JSON.stringify(wanted)}`)
    contacts.set(id, contact)
  }
  override toString() {
    return `patch(t${this.tenant}, ${this.key}, ${JSON.stringify(this.target)}, ${JSON.stringify(this.patch)})`
  }
}

type Filters = { stage?: string; emailStatus?: string; includeArchived?: boolean }

class Walk extends Command {
  constructor(
    readonly tenant: number,
    readonly key: KeyName,
    readonly filters: Filters,
    readonly limit: number,
  ) {
    super()
  }
  async run(m: Model, r: Real) {
    const wanted = [...(m.tenants[this.tenant]?.values() ?? [])]
      .filter((c) => this.filters.includeArchived || c.archivedAt === null)
      .filter((c) => this.filters.stage === undefined || c.stage === this.filters.stage)
      .filter((c) => this.filters.emailStatus === undefined || c.emailStatus === this.filters.emailStatus)
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1))
    const query = new URLSearchParams({ limit: String(this.limit) })
    for (const [name, value] of Object.entries(this.filters)) if (value !== undefined) query.set(name, String(value))
    const seen: Contact[] = []
    let cursor: string | null = null
    for (let page = 0; ; page++) {
      if (page > wanted.length + 1) fail(`walk ${query}: more pages than contacts`)
      const url = `${LIST}?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
      const x = await call(r, this.tenant, this.key, 'GET /contacts', { method: 'GET', url })
      if (checkRefusal(this.key, 'read', x)) return
      expectStatus(x.res, x.body, 200, null, x.where)
      const body = x.body as ContactPage
      if (body.data.length > this.limit) fail(`${x.where}: ${body.data.length} items for limit ${this.limit}`)
      if (body.data.length === 0 && wanted.length > 0) fail(`${x.where}: empty page`)
      seen.push(...body.data)
      cursor = body.next
      if (cursor === null) break
    }
    // Contacts created within one millisecond show the same createdAt (it is unique to the microsecond, which
    // answers do not show): the walk must be newest first, and hold what the model holds, ties in any order.
    seen.forEach((c, i) => {
      if (i > 0 && c.createdAt > (seen[i - 1] as Contact).createdAt)
        fail(`walk t${this.tenant} ${query}: not newest first`)
    })
    const byTime = (list: Contact[]) =>
      [...list].sort((a, b) =>
        a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? 1 : -1,
      )
    if (!isDeepStrictEqual(byTime(seen), byTime(wanted))) {
      const ids = (list: Contact[]) => list.map((c) => c.id.slice(0, 8)).join(',')
      fail(
        `walk t${this.tenant} ${query}: got [${ids(seen)}], model says [${ids(wanted)}]: ${JSON.stringify({ seen, wanted })}`,
      )
    }
  }
  override toString() {
    return `walk(t${this.tenant}, ${this.key}, ${JSON.stringify(this.filters)}, limit ${this.limit})`
  }
}

/** An operator archives or restores a contact (what `npx rubrica contact archive|unarchive` does). */
class Archive extends Command {
  constructor(
    readonly tenant: number,
    readonly pick: number,
    readonly archived: boolean,
  ) {
    super()
  }
  async run(m: Model, r: Real) {
    const contacts = m.tenants[this.tenant] ?? fail('tenant')
    const list = [...contacts.values()]
    const chosen = list[this.pick % Math.max(1, list.length)]
    if (!chosen) return
    const tenantId = r.tenants[this.tenant]?.id ?? fail('tenant')
    const prisma = r.app.db.prisma
    await prisma.contact.updateMany({
      where: { id: chosen.id, tenantId, archivedAt: this.archived ? null : { not: null } },
      data: { archivedAt: this.archived ? new Date() : null },
    })
    const row = (await prisma.contact.findFirst({ where: { id: chosen.id } })) ?? fail('archived row vanished')
    r.stats.count('operator archive', row.archivedAt ? 'archived' : 'live')
    contacts.set(chosen.id, {
      ...chosen,
      archivedAt: row.archivedAt?.toISOString() ?? null,
      updatedAt: row.updatedAt.toISOString(),
    })
  }
  override toString() {
    return `${this.archived ? 'archive' : 'unarchive'}(t${this.tenant}, #${this.pick})`
  }
}

const tenant = fc.nat({ max: TENANTS - 1 })
const key = fc.oneof(
  { weight: 4, arbitrary: fc.constant<KeyName>('admin') },
  { weight: 4, arbitrary: fc.constant<KeyName>('editor') },
  { weight: 2, arbitrary: fc.constant<KeyName>('viewer') },
  { weight: 1, arbitrary: fc.constant<KeyName>('readOnly') },
  { weight: 1, arbitrary: fc.constant<KeyName>('writeOnly') },
)
const target: fc.Arbitrary<Target> = fc.record({
  kind: fc.constantFrom<Target['kind']>('own', 'own', 'own', 'foreign', 'foreign', 'random'),
  pick: fc.nat(),
  upper: fc.boolean(),
  random: fc.uuid(),
})
const name = fc.constantFrom('Anna', 'Bruno', 'Zoë', '李', "D'Angelo")
const create = fc
  .record(
    {
      t: tenant,
      key,
      email: fc.mixedCase(fc.constantFrom(...EMAIL_POOL)),
      firstName: name,
      lastName: name,
      tags: fc.subarray(TAG_POOL),
    },
    { requiredKeys: ['t', 'key', 'email'] },
  )
  .map(({ t, key, ...payload }) => new Create(t, key, payload))
const patch: fc.Arbitrary<Patch> = fc.record(
  {
    firstName: fc.option(name, { nil: null }),
    lastName: fc.option(name, { nil: null }),
    emailStatus: fc.constantFrom(...(EMAIL_STATUSES as Contact['emailStatus'][])),
    stage: fc.constantFrom(...(STAGES as Contact['stage'][])),
    consentType: fc.constantFrom('contract', 'consent', 'legittimo interesse'),
  },
  { requiredKeys: [] },
)
/** Each filter in a quarter of the walks, so that most walks still see most contacts. */
const sometimes = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb })
const filters: fc.Arbitrary<Filters> = fc
  .record({
    stage: sometimes(fc.constantFrom(...STAGES)),
    emailStatus: sometimes(fc.constantFrom(...EMAIL_STATUSES)),
    includeArchived: sometimes(fc.boolean()),
  })
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as Filters)
const commands = fc.commands(
  [
    create,
    create,
    create,
    fc.tuple(tenant, key, target).map(([t, k, x]) => new Get(t, k, x)),
    fc.tuple(tenant, key, target, patch).map(([t, k, x, p]) => new Update(t, k, x, p)),
    fc.tuple(tenant, key, target, patch).map(([t, k, x, p]) => new Update(t, k, x, p)),
    fc.tuple(tenant, key, filters, fc.integer({ min: 1, max: 4 })).map(([t, k, f, l]) => new Walk(t, k, f, l)),
    fc.tuple(tenant, fc.nat(), fc.boolean()).map(([t, p, a]) => new Archive(t, p, a)),
    fc.tuple(tenant, fc.nat(), fc.constant(true)).map(([t, p, a]) => new Archive(t, p, a)),
  ],
  { maxCommands: 40, size: 'max' },
)

t.test('tenant isolation: the API agrees with a model of three separate tenants', async (t) => {
  commentRunParameters(t)
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000000000' })
  const stats = new Stats()
  const probe = await createTenantWithKey(app, { name: 'Sonda' })
  const notFound = await referenceNotFound(app, probe.key)
  t.equal(notFound.status, 404, 'reference 404')
  let sequences = 0

  // Three tenants with a key of every kind, emptied before each sequence so that the model starts empty.
  const tenants: RealTenant[] = []
  for (let i = 0; i < TENANTS; i++) {
    const made = await createTenantWithKey(app, { name: `Tenant ${i}`, role: 'admin', tags: TENANT_TAGS[i] ?? [] })
    const keys = { admin: made.key } as Record<KeyName, string>
    for (const name of ['editor', 'viewer', 'readOnly', 'writeOnly'] as const) {
      keys[name] = await addKey(app, made.tenantId, KEYS[name].role, KEYS[name].scopes)
    }
    tenants.push({ id: made.tenantId, keys })
  }
  // A fourth tenant's contacts, outside the model: foreign ids too, and they must never change.
  for (const email of EMAIL_POOL) {
    const res = await app.inject({
      method: 'POST',
      url: LIST,
      headers: { authorization: `Bearer ${probe.key}` },
      payload: { email, firstName: 'Estraneo' },
    })
    t.equal(res.statusCode, 201, `stranger ${email}`)
  }
  const strangerRows = async () => (await snapshot(app.db.prisma)).contacts.filter((c) => c.tenantId === probe.tenantId)
  const strangersBefore = await strangerRows()
  const strangers = strangersBefore.map((c) => c.id)

  const property = fc.asyncProperty(commands, async (cmds) => {
    sequences++
    await app.db.prisma.contact.deleteMany({ where: { tenantId: { in: tenants.map((x) => x.id) } } })
    const model: Model = { tenants: tenants.map(() => new Map()) }
    const real: Real = { app, tenants, notFound, stats, strangers }
    await fc.asyncModelRun(() => ({ model, real }), cmds)
    // Every sequence ends with full walks of each tenant, with and without the archived contacts.
    for (let i = 0; i < TENANTS; i++) {
      await new Walk(i, 'viewer', {}, 3).run(model, real)
      await new Walk(i, 'editor', { includeArchived: true }, 2).run(model, real)
    }
    // Whatever the responses said, the stored rows are exactly the model: nothing was written elsewhere.
    const stored = await snapshot(app.db.prisma)
    const tagNames = new Map((await app.db.prisma.tag.findMany()).map((tag) => [tag.id, tag.name]))
    tenants.forEach((tenant, i) => {
      const rows = stored.contacts
        .filter((c) => c.tenantId === tenant.id)
        .map((c) => rowToContact(c, stored.links, tagNames))
        .sort((a, b) => a.id.localeCompare(b.id))
      const modelled = [...(model.tenants[i]?.values() ?? [])].sort((a, b) => a.id.localeCompare(b.id))
      if (!isDeepStrictEqual(rows, modelled)) {
        fail(`tenant ${i}: stored ${JSON.stringify(rows)} but the model has ${JSON.stringify(modelled)}`)
      }
    })
  })
  await holds(t, 'tenant isolation model', property, runs(0.5, 5))
  t.ok(sequences > 0, `${sequences} sequences run`)
  t.same(await strangerRows(), strangersBefore, "the fourth tenant's contacts never changed")
  stats.report(t, 'isolation')
})
