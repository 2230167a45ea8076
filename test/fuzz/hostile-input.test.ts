// Property-based tests over the four endpoints with hostile input: arbitrary and malformed JSON bodies, raw query
// strings, path ids, Authorization headers and content types (generators in ./hostile.ts). For every response:
// never 5xx; a 2xx is exactly the documented shape, anything else the Italian error envelope with a documented
// code; the status is one the README allows for that input (./oracle.ts); a refused request changes nothing in
// the database; no contact of another tenant is ever shown; no prototype gets polluted.
// FUZZ_SEED and FUZZ_RUNS set the seed and the number of cases (see docs/RELIABILITY.md).
import { isDeepStrictEqual as same } from 'node:util'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { hashApiKey, type Scope } from '../../src/api-key.ts'
import { addKey, build, createTenantWithKey, request } from '../helper.ts'
import {
  type AuthKeys,
  authorization,
  contentType,
  createBody,
  extraHeaders,
  listQuery,
  pathId,
  rawBody,
  rawPathSuffix,
  rawQuery,
  updateBody,
} from './hostile.ts'
import {
  authOutcome,
  bodyValidation,
  createVerdicts,
  type Expectation,
  type KeyInfo,
  keyOf,
  type ListQuery,
  only,
  parseStep,
  queryExpectation,
  union,
  updateVerdicts,
} from './oracle.ts'
import {
  assertNoPollution,
  type Contact,
  type ContactPage,
  changedIds,
  checkResponse,
  describe,
  type ErrorBody,
  FUZZ_RUNS,
  FUZZ_SEED,
  holds,
  isRecord,
  prototypeFingerprint,
  rowToContact,
  runs,
  type Snapshot,
  Stats,
  snapshot,
  UUID,
} from './support.ts'

const LIST = '/api/v1/contacts'

/** The text as the server receives it: sent as UTF-8, where a lone surrogate can only become U+FFFD. */
const wire = (text: string) => Buffer.from(text, 'utf8').toString('utf8')
const RW: Scope[] = ['contacts:read', 'contacts:write']
const MAIN_TAGS = ['vip', 'newsletter', 'clienti-2026', 'ü-tag', '😀']
const OTHER_TAGS = ['vip', 'segreto']

t.test('hostile input never breaks the API, its envelope, the database or tenant isolation', async (t) => {
  t.comment(`FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${FUZZ_RUNS}`)
  const pollution = prototypeFingerprint()
  const { app, config } = await build(t, { RATE_LIMIT_MAX: '1000000000' })
  const prisma = app.db.prisma
  const stats = new Stats()

  // Fixtures: the tenant under attack, another tenant whose contacts must stay invisible, a suspended and a
  // closed one; keys of every role and scope combination, and a revoked one.
  const main = await createTenantWithKey(app, { name: 'Fuzz', role: 'admin', tags: MAIN_TAGS })
  const other = await createTenantWithKey(app, { name: 'Altro', role: 'admin', tags: OTHER_TAGS })
  const suspended = await createTenantWithKey(app, { name: 'Sospesa', status: 'suspended' })
  const closed = await createTenantWithKey(app, { name: 'Chiusa', status: 'closed' })
  const keys: AuthKeys = {
    admin: main.key,
    editor: await addKey(app, main.tenantId, 'editor', RW),
    viewer: await addKey(app, main.tenantId, 'viewer', RW),
    readOnly: await addKey(app, main.tenantId, 'editor', ['contacts:read']),
    writeOnly: await addKey(app, main.tenantId, 'admin', ['contacts:write']),
    otherTenant: other.key,
    suspended: suspended.key,
    closed: closed.key,
    revoked: await addKey(app, main.tenantId, 'admin', RW),
  }
  await prisma.apiKey.updateMany({ where: { keyHash: hashApiKey(keys.revoked) }, data: { revokedAt: new Date() } })
  const info = (tenantId: string, role: KeyInfo['role'], scopes: string[], extra: Partial<KeyInfo> = {}): KeyInfo => ({
    tenantId,
    tenantStatus: 'active',
    revoked: false,
    role,
    scopes,
    ...extra,
  })
  const keyInfos = new Map<string, KeyInfo>([
    [keys.admin, info(main.tenantId, 'admin', RW)],
    [keys.editor, info(main.tenantId, 'editor', RW)],
    [keys.viewer, info(main.tenantId, 'viewer', RW)],
    [keys.readOnly, info(main.tenantId, 'editor', ['contacts:read'])],
    [keys.writeOnly, info(main.tenantId, 'admin', ['contacts:write'])],
    [keys.otherTenant, info(other.tenantId, 'admin', RW)],
    [keys.suspended, info(suspended.tenantId, 'editor', RW, { tenantStatus: 'suspended' })],
    [keys.closed, info(closed.tenantId, 'editor', RW, { tenantStatus: 'closed' })],
    [keys.revoked, info(main.tenantId, 'admin', RW, { revoked: true })],
  ])
  const tagsOf = new Map([
    [main.tenantId, new Set(MAIN_TAGS)],
    [other.tenantId, new Set(OTHER_TAGS)],
  ])

  for (const payload of [
    {
      email: 'anna.rossi@example.it',
      firstName: 'Anna',
      lastName: 'Rossi',
      phone: '+39 02 1234 5678',
      tags: ['vip', 'newsletter'],
    },
    { email: 'Bob@X.io', tags: ['😀'] },
    { email: 'carla@posta.co.uk', consentType: 'contract' },
  ]) {
    const res = await request(app, keys.admin, { method: 'POST', url: LIST, payload })
    t.equal(res.statusCode, 201, `fixture ${payload.email}`)
  }
  const instant = new Date('2026-05-01T12:00:00.000Z')
  const later = new Date('2026-05-02T08:00:00.000Z')
  await prisma.contact.createMany({
    data: [
      { tenantId: main.tenantId, email: 'dario@x.io', stage: 'customer', emailStatus: 'bounced', createdAt: instant },
      { tenantId: main.tenantId, email: 'eva@x.io', stage: 'prospect', createdAt: instant },
      { tenantId: main.tenantId, email: null, phone: '123456', firstName: 'Senza', createdAt: instant },
      { tenantId: main.tenantId, email: 'archived@x.io', archivedAt: later, createdAt: later },
      { tenantId: main.tenantId, email: 'Shared@Both.io', createdAt: later },
      { tenantId: main.tenantId, email: 'f@x.io', emailStatus: 'pending_review', stage: 'ex_customer' },
      { tenantId: main.tenantId, email: 'g@x.io', emailStatus: 'suppressed' },
      { tenantId: other.tenantId, email: 'shared@both.io', createdAt: instant },
      { tenantId: other.tenantId, email: 'solo-altro@x.io', stage: 'customer', createdAt: instant },
      { tenantId: other.tenantId, email: 'anna.rossi@example.it' },
      { tenantId: other.tenantId, email: 'archiviato@altro.it', archivedAt: later },
    ],
  })
  const seeded = await snapshot(prisma)
  const idsOf = (tenantId: string) => seeded.contacts.filter((c) => c.tenantId === tenantId).map((c) => c.id)
  const mainIds = idsOf(main.tenantId)
  const otherIds = idsOf(other.tenantId)
  const emails = [...seeded.contacts.flatMap((c) => (c.email ? [c.email] : [])), 'nuovo@x.io', 'Nuovo@Example.IT']
  const createdAts = seeded.contacts.map((c) => c.createdAt.toISOString())
  const tagNames = new Map((await prisma.tag.findMany()).map((tag) => [tag.id, tag.name]))
  const inputs = { emails, ownTags: MAIN_TAGS, foreignTags: OTHER_TAGS, bodyLimit: config.BODY_LIMIT }

  const absent = await request(app, keys.admin, { method: 'GET', url: `${LIST}/5b0c1a6e-7f5e-4c3a-9d1e-0a2b3c4d5e6f` })
  t.equal(absent.statusCode, 404)
  const notFound = { body: absent.body, type: absent.headers['content-type'] }

  // -------------------------------------------------------------------------------------------------------------
  // One exchange and the invariants every response must satisfy

  interface Exchange {
    before: Snapshot
    after: Snapshot
    res: LightMyRequestResponse
    body: unknown
    where: string
  }

  async function exchange(
    endpoint: string,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    headers: Record<string, string | undefined>,
    payload: string | undefined,
  ): Promise<Exchange | null> {
    const sent = Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined))
    const where = describe(method, url, sent, payload)
    const before = await snapshot(prisma)
    let res: LightMyRequestResponse
    try {
      res = await app.inject({ method, url, headers: sent, ...(payload !== undefined && { payload }) })
    } catch (error) {
      // light-my-request refuses some URLs and headers before anything reaches the server: not a server case.
      stats.count(endpoint, 'not sent')
      if (String(error).includes('Invalid') || String(error).includes('ERR_')) return null
      throw error
    }
    stats.count(endpoint, res.statusCode)
    const after = await snapshot(prisma)
    const shape = res.statusCode < 300 && /^\s*\{\s*"data"/.test(res.body) ? 'page' : 'contact'
    const body = checkResponse(res, shape, where)
    if (res.statusCode === 404 && (res.body !== notFound.body || res.headers['content-type'] !== notFound.type)) {
      throw new Error(`${where}: 404 differs from the reference 404: ${res.body}`)
    }
    const success = res.statusCode >= 200 && res.statusCode < 300
    if ((!success || method === 'GET') && after.text !== before.text) {
      throw new Error(`${where}: ${res.statusCode} changed the database (${changedIds(before, after).join(', ')})`)
    }
    if (success) {
      if (res.headers['x-ratelimit-limit'] === undefined) throw new Error(`${where}: no X-RateLimit-Limit on a 2xx`)
      // Whatever the route, a 2xx shows only contacts of the key's tenant.
      const requester = keyOf(sent.authorization, keyInfos)
      if (!requester) throw new Error(`${where}: ${res.statusCode} without a valid key`)
      const shown = shape === 'page' ? (body as ContactPage).data : [body as Contact]
      const mine = new Set(
        [...before.contacts, ...after.contacts].filter((c) => c.tenantId === requester.tenantId).map((c) => c.id),
      )
      const foreign = shown.filter((c) => !mine.has(c.id))
      if (foreign.length > 0) throw new Error(`${where}: shows contacts of another tenant: ${JSON.stringify(foreign)}`)
    }
    assertNoPollution(pollution)
    return { before, after, res, body, where }
  }

  function expectOutcome(x: Exchange, expectation: Expectation): void {
    const { res, body, where } = x
    const code = isRecord(body) && isRecord(body.error) ? String(body.error.code) : undefined
    if (expectation.outcomes !== 'any') {
      const ok = expectation.outcomes.some(
        (o) => o.status === res.statusCode && (o.code === undefined || o.code === code),
      )
      if (!ok) {
        throw new Error(
          `${where}: expected ${expectation.outcomes.map((o) => `${o.status} ${o.code ?? ''}`.trim()).join(' or ')}` +
            ` (${expectation.why}), got ${res.statusCode} ${res.body.slice(0, 500)}`,
        )
      }
    }
    if (res.statusCode < 400) return
    const message = (body as ErrorBody).error.message
    if (expectation.names !== undefined && !message.includes(`"${expectation.names}`)) {
      throw new Error(`${where}: the message does not name "${expectation.names}": ${message}`)
    }
    if (expectation.notJson && !/JSON/.test(message)) {
      throw new Error(`${where}: malformed JSON, but the message does not say so: ${message}`)
    }
    for (const name of expectation.unknownTags ?? []) {
      if (!message.includes(`"${name}"`)) throw new Error(`${where}: unknown tag "${name}" not listed: ${message}`)
    }
  }

  const contactsOf = (s: Snapshot, tenantId: string) => s.contacts.filter((c) => c.tenantId === tenantId)
  const shown = (s: Snapshot, id: string) => {
    const row = s.contacts.find((c) => c.id === id)
    return row ? rowToContact(row, s.links, tagNames) : undefined
  }

  type IdClass = 'own' | 'absent' | 'urn-own' | 'urn-other' | 'not-uuid'
  function classifyId(segment: string, s: Snapshot, tenantId: string | undefined): { cls: IdClass; id?: string } {
    let decoded: string
    try {
      decoded = decodeURIComponent(segment)
    } catch {
      return { cls: 'not-uuid' }
    }
    const mine = (id: string) => tenantId !== undefined && contactsOf(s, tenantId).some((c) => c.id === id)
    const lower = decoded.toLowerCase()
    if (UUID.test(lower)) return mine(lower) ? { cls: 'own', id: lower } : { cls: 'absent' }
    const urn = /^urn:uuid:(.*)$/i.exec(decoded)?.[1]?.toLowerCase()
    if (urn !== undefined && UUID.test(urn)) return mine(urn) ? { cls: 'urn-own', id: urn } : { cls: 'urn-other' }
    return { cls: 'not-uuid' }
  }

  // -------------------------------------------------------------------------------------------------------------
  // GET /api/v1/contacts

  function expectedPage(s: Snapshot, tenantId: string, q: ListQuery): ContactPage {
    const rows = contactsOf(s, tenantId)
      .filter((c) => q.includeArchived || c.archivedAt === null)
      .filter((c) => q.stage === undefined || c.stage === q.stage)
      .filter((c) => q.emailStatus === undefined || c.emailStatus === q.emailStatus)
      .filter((c) => q.cursor === undefined || c.createdAt.getTime() < Date.parse(q.cursor))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
    const page = rows.slice(0, q.limit)
    return {
      data: page.map((row) => rowToContact(row, s.links, tagNames)),
      next: rows.length > q.limit ? (page.at(-1)?.createdAt.toISOString() ?? null) : null,
    }
  }

  await t.test('GET /api/v1/contacts: raw query strings', async (t) => {
    const property = fc.asyncProperty(
      authorization(keys),
      listQuery(createdAts),
      fc.option(contentType(), { freq: 5 }),
      async (header, query, type) => {
        const url = query.raw === '' ? LIST : `${LIST}?${query.raw}`
        const x = await exchange(
          'GET /contacts',
          'GET',
          url,
          { authorization: header, 'content-type': type ?? undefined },
          undefined,
        )
        if (!x) return
        const auth = authOutcome(header, keyInfos, 'list')
        if (auth) return expectOutcome(x, auth)
        const { expectation, query: parsed } = queryExpectation(query.params, query.garbage)
        const requester = keyOf(header, keyInfos)
        if (!requester) throw new Error('authorized without a key')
        if (expectation) {
          expectOutcome(x, expectation)
          if (x.res.statusCode === 200) {
            // Even where the parameters' reading is open, the valid filters hold.
            for (const c of (x.body as ContactPage).data) {
              if (parsed.stage && c.stage !== parsed.stage) throw new Error(`${x.where}: stage filter ignored`)
              if (parsed.emailStatus && c.emailStatus !== parsed.emailStatus) {
                throw new Error(`${x.where}: emailStatus filter ignored`)
              }
            }
          }
          return
        }
        expectOutcome(x, only('valid query', { status: 200 }))
        const wanted = expectedPage(x.before, requester.tenantId, parsed)
        if (!same(x.body, wanted)) {
          throw new Error(`${x.where}: page ${JSON.stringify(x.body)} instead of ${JSON.stringify(wanted)}`)
        }
      },
    )
    await holds(t, 'GET /api/v1/contacts', property, runs(1))
  })

  // -------------------------------------------------------------------------------------------------------------
  // GET /api/v1/contacts/:id

  await t.test('GET /api/v1/contacts/:id: arbitrary ids', async (t) => {
    const property = fc.asyncProperty(authorization(keys), pathId(mainIds, otherIds), async (header, segment) => {
      const x = await exchange('GET /contacts/:id', 'GET', `${LIST}/${segment}`, { authorization: header }, undefined)
      if (!x) return
      const requester = keyOf(header, keyInfos)
      const { cls, id } = classifyId(segment, x.before, requester?.tenantId)
      const auth = authOutcome(header, keyInfos, 'get')
      if (auth) return expectOutcome(x, cls === 'not-uuid' ? union(auth, { status: 404, code: 'not_found' }) : auth)
      if (cls === 'own') expectOutcome(x, only('own contact', { status: 200 }))
      else if (cls === 'urn-own') expectOutcome(x, only('urn: form of an own id', { status: 200 }, { status: 404 }))
      else expectOutcome(x, only(`${cls} id`, { status: 404, code: 'not_found' }))
      if (x.res.statusCode === 200 && id !== undefined && !same(x.body, shown(x.before, id))) {
        throw new Error(`${x.where}: ${x.res.body} is not the stored contact ${JSON.stringify(shown(x.before, id))}`)
      }
    })
    await holds(t, 'GET /api/v1/contacts/:id', property, runs(1))
  })

  // -------------------------------------------------------------------------------------------------------------
  // POST /api/v1/contacts

  await t.test('POST /api/v1/contacts: arbitrary bodies and content types', async (t) => {
    const property = fc.asyncProperty(
      authorization(keys),
      contentType(),
      createBody(inputs),
      async (header, type, generated) => {
        const payload = wire(generated)
        const x = await exchange(
          'POST /contacts',
          'POST',
          LIST,
          { authorization: header, 'content-type': type },
          payload,
        )
        if (!x) return
        const created = x.res.statusCode === 201 ? (x.body as Contact) : undefined
        try {
          checkCreate(x, header, type, payload)
        } finally {
          // Keep the database small: what the run created goes again (after the checks saw it).
          if (created && UUID.test(created.id)) await prisma.contact.deleteMany({ where: { id: created.id } })
        }
      },
    )
    await holds(t, 'POST /api/v1/contacts', property, runs(1.5))
  })

  function checkCreate(x: Exchange, header: string | undefined, type: string | undefined, payload: string) {
    const auth = authOutcome(header, keyInfos, 'create')
    if (auth) return expectOutcome(x, auth)
    const requester = keyOf(header, keyInfos)
    if (!requester) throw new Error('authorized without a key')
    const parsed = parseStep(type, payload, { bodyLimit: config.BODY_LIMIT, tags: new Set() })
    if (parsed.stage === 'parse') return expectOutcome(x, parsed.expectation)
    const ctx = { bodyLimit: config.BODY_LIMIT, tags: tagsOf.get(requester.tenantId) ?? new Set<string>() }
    const verdicts = createVerdicts(parsed.value, ctx)
    const validation = bodyValidation(verdicts, [
      { status: 201 },
      { status: 409, code: 'conflict' },
      { status: 400, code: 'unknown_tag' },
    ])
    const sent = parsed.value as Record<string, unknown>
    if (validation) {
      expectOutcome(x, validation)
      // Where the README leaves acceptance open, what is accepted must still be handled as below.
      if (x.res.statusCode === 400) return
    }
    if (verdicts.unknownTags.length > 0) {
      return expectOutcome(x, {
        outcomes: [{ status: 400, code: 'unknown_tag' }],
        unknownTags: verdicts.unknownTags,
        why: `unknown tags ${verdicts.unknownTags.join(', ')}`,
      })
    }
    const email = String(sent.email)
    const existing = contactsOf(x.before, requester.tenantId).find(
      (c) => c.email?.toLowerCase() === email.toLowerCase(),
    )
    if (existing) {
      expectOutcome(x, only(`email of ${existing.id}`, { status: 409, code: 'conflict' }))
      const named = (x.body as ErrorBody).error.existing
      if (!same(named, { id: existing.id, status: existing.emailStatus })) {
        throw new Error(`${x.where}: conflict names ${JSON.stringify(named)}, not ${existing.id}`)
      }
      return
    }
    expectOutcome(x, only('valid new contact', { status: 201 }))
    const contact = x.body as Contact
    const wanted = {
      email,
      firstName: sent.firstName ?? null,
      lastName: sent.lastName ?? null,
      phone: sent.phone ?? null,
      emailStatus: 'active',
      stage: 'lead',
      source: 'api',
      consentType: sent.consentType ?? 'unknown',
      tags: [...new Set((sent.tags as string[] | undefined) ?? [])].sort(),
      archivedAt: null,
    }
    for (const [field, value] of Object.entries(wanted)) {
      if (!same(contact[field as keyof Contact], value)) {
        throw new Error(
          `${x.where}: ${field} is ${JSON.stringify(contact[field as keyof Contact])}, sent ${JSON.stringify(value)}`,
        )
      }
    }
    if (contact.acquiredAt !== contact.createdAt) throw new Error(`${x.where}: acquiredAt is not createdAt`)
    if (x.res.headers.location !== `${LIST}/${contact.id}`)
      throw new Error(`${x.where}: Location ${x.res.headers.location}`)
    if (!same(changedIds(x.before, x.after), [contact.id])) throw new Error(`${x.where}: more than the new row changed`)
    if (!same(shown(x.after, contact.id), contact)) throw new Error(`${x.where}: stored row differs from the response`)
  }

  // -------------------------------------------------------------------------------------------------------------
  // PATCH /api/v1/contacts/:id

  await t.test('PATCH /api/v1/contacts/:id: arbitrary ids, bodies and content types', async (t) => {
    const property = fc.asyncProperty(
      authorization(keys),
      pathId(mainIds, otherIds),
      contentType(),
      updateBody(config.BODY_LIMIT),
      async (header, segment, type, generated) => {
        const payload = wire(generated)
        const url = `${LIST}/${segment}`
        const x = await exchange(
          'PATCH /contacts/:id',
          'PATCH',
          url,
          { authorization: header, 'content-type': type },
          payload,
        )
        if (!x) return
        checkUpdate(x, header, segment, type, payload)
      },
    )
    await holds(t, 'PATCH /api/v1/contacts/:id', property, runs(1.5))
  })

  function checkUpdate(
    x: Exchange,
    header: string | undefined,
    segment: string,
    type: string | undefined,
    payload: string,
  ) {
    const requester = keyOf(header, keyInfos)
    const { cls, id } = classifyId(segment, x.before, requester?.tenantId)
    const notFound = { status: 404, code: 'not_found' } as const
    const auth = authOutcome(header, keyInfos, 'update')
    if (auth) return expectOutcome(x, cls === 'not-uuid' ? union(auth, notFound) : auth)
    const parsed = parseStep(type, payload, { bodyLimit: config.BODY_LIMIT, tags: new Set() })
    if (parsed.stage === 'parse') {
      return expectOutcome(x, cls === 'not-uuid' ? union(parsed.expectation, notFound) : parsed.expectation)
    }
    if (cls === 'not-uuid' || cls === 'urn-other') return expectOutcome(x, only(`${cls} id`, notFound))
    const success = cls === 'own' ? { status: 200 } : notFound
    const validation = bodyValidation(updateVerdicts(parsed.value), [success])
    if (cls === 'urn-own') {
      expectOutcome(x, validation ? union(validation, notFound) : only('urn: form of an own id', notFound, success))
    } else if (validation) {
      expectOutcome(x, validation)
    } else {
      expectOutcome(x, only(`valid patch of an ${cls} id`, success))
    }
    if (x.res.statusCode !== 200 || id === undefined) return
    const patch = parsed.value as Record<string, unknown>
    const before = shown(x.before, id)
    const contact = x.body as Contact
    if (!before) throw new Error(`${x.where}: 200 for an id that was not stored`)
    const wanted = { ...before, ...patch, updatedAt: contact.updatedAt }
    if (!same(contact, wanted)) throw new Error(`${x.where}: ${x.res.body} instead of ${JSON.stringify(wanted)}`)
    const empty = Object.keys(patch).length === 0
    if (empty ? contact.updatedAt !== before.updatedAt : contact.updatedAt < before.updatedAt) {
      throw new Error(`${x.where}: updatedAt ${before.updatedAt} -> ${contact.updatedAt}`)
    }
    const changed = changedIds(x.before, x.after)
    if (!same(changed, empty ? [] : [id])) throw new Error(`${x.where}: changed ${changed.join(', ')}`)
    if (!same(shown(x.after, id), contact)) throw new Error(`${x.where}: stored row differs from the response`)
  }

  // -------------------------------------------------------------------------------------------------------------
  // Chaos: no structure at all; only the invariants every response must satisfy

  await t.test('any method, path, query, header and body: only the universal invariants', async (t) => {
    const property = fc.asyncProperty(
      fc.constantFrom('GET', 'GET', 'POST', 'PATCH', 'PUT', 'DELETE'),
      rawPathSuffix(mainIds),
      rawQuery(),
      authorization(keys),
      fc.option(contentType(), { freq: 4 }),
      rawBody(inputs),
      extraHeaders(),
      async (method, suffix, query, header, type, payload, extra) => {
        const route = /^\/?$/.test(suffix) ? '/contacts' : /^\/[^/]+\/?$/.test(suffix) ? '/contacts/:id' : 'other'
        const headers = { ...extra, authorization: header, 'content-type': type ?? undefined }
        const x = await exchange(`chaos ${method} ${route}`, method, `${LIST}${suffix}${query}`, headers, payload)
        if (!x) return
        // Methods and paths with no route are 404 not_found whatever they carry (README "Errors").
        const noRoute =
          method === 'PUT' ||
          method === 'DELETE' ||
          (method === 'POST' && /^\/[^/.%]+$/.test(suffix)) ||
          (method === 'PATCH' && /^\/?$/.test(suffix))
        if (noRoute && (x.res.statusCode !== 404 || !x.res.body.includes('"not_found"'))) {
          throw new Error(`${x.where}: no such route, but ${x.res.statusCode} ${x.res.body}`)
        }
        if (x.res.statusCode === 201) {
          const contact = x.body as Contact
          await prisma.contact.deleteMany({ where: { id: contact.id } })
          if (method !== 'POST' || !same(changedIds(x.before, x.after), [contact.id])) {
            throw new Error(`${x.where}: 201 changed ${changedIds(x.before, x.after).join(', ')}`)
          }
        } else if (x.res.statusCode === 200 && method !== 'GET') {
          const contact = x.body as Contact
          const changed = changedIds(x.before, x.after)
          if (method !== 'PATCH' || changed.some((id) => id !== contact.id)) {
            throw new Error(`${x.where}: ${method} 200 changed ${changed.join(', ')}`)
          }
        }
      },
    )
    await holds(t, 'chaos', property, runs(1.5))
  })

  t.doesNotThrow(() => assertNoPollution(pollution), 'no prototype gained a property')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype.polluted is not set')
  const end = await snapshot(prisma)
  for (const tenantId of [main.tenantId, other.tenantId]) {
    t.same(
      contactsOf(end, tenantId).map((c) => c.id),
      contactsOf(seeded, tenantId).map((c) => c.id),
      'each tenant holds exactly its seeded contacts (created ones were removed, none moved or vanished)',
    )
  }
  stats.report(t, 'hostile-input')
})
