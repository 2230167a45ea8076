// What each endpoint must have answered in a hostile-input case, beyond the universal invariants `exchange`
// checks: the status and code the oracle (./oracle.ts) allows for exactly what was sent, and for successes the
// contact or page itself, compared with the database before and after.
import { isDeepStrictEqual as same } from 'node:util'
import { cursorBound } from '../../src/contacts/sql.ts'
import type { GeneratedQuery } from './hostile.ts'
import type { Exchange, HostileFixture, Method } from './hostile-fixture.ts'
import {
  authOutcome,
  bodyValidation,
  createVerdicts,
  type Expectation,
  keyOf,
  type ListQuery,
  only,
  PLAIN_UUID,
  parseStep,
  queryExpectation,
  union,
  updateVerdicts,
} from './oracle.ts'
import {
  type Contact,
  type ContactPage,
  changedIds,
  type ErrorBody,
  fail,
  isRecord,
  LIST,
  rowToContact,
  type Snapshot,
} from './support.ts'

/** Throws unless the response is one of the expected outcomes, with the message naming what it must name. */
export function expectOutcome(x: Exchange, expectation: Expectation): void {
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

export const contactsOf = (s: Snapshot, tenantId: string) => s.contacts.filter((c) => c.tenantId === tenantId)

/** A stored contact's createdAt to the microsecond, as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
const createdOf = (s: Snapshot, id: string) => s.created.get(id) ?? `no createdAt for ${id}`

/** The stored contact `id` as the API must show it, if the snapshot holds it. */
function shown(fx: HostileFixture, s: Snapshot, id: string): Contact | undefined {
  const row = s.contacts.find((c) => c.id === id)
  return row ? rowToContact(row, s.links, fx.tagNames) : undefined
}

/** The key's tenant, for a request the oracle let through authentication. */
function requesterOf(fx: HostileFixture, header: string | undefined) {
  return keyOf(header, fx.keyInfos) ?? fail('authorized without a key')
}

// ---------------------------------------------------------------------------------------------------------------
// Path ids

const UNDECODABLE = { status: 400, code: 'bad_request' } as const

type IdClass = 'own' | 'absent' | 'urn-own' | 'urn-other' | 'not-uuid' | 'undecodable'

/** What a path segment names for the tenant: its own contact, no contact, either in urn:uuid: form, or no id. */
export function classifyId(segment: string, s: Snapshot, tenantId: string | undefined): { cls: IdClass; id?: string } {
  let decoded: string
  try {
    decoded = decodeURIComponent(segment)
  } catch {
    return { cls: 'undecodable' }
  }
  const mine = (id: string) => tenantId !== undefined && contactsOf(s, tenantId).some((c) => c.id === id)
  const lower = decoded.toLowerCase()
  if (PLAIN_UUID.test(lower)) return mine(lower) ? { cls: 'own', id: lower } : { cls: 'absent' }
  const urn = /^urn:uuid:(.*)$/i.exec(decoded)?.[1]?.toLowerCase()
  if (urn !== undefined && PLAIN_UUID.test(urn)) {
    return mine(urn) ? { cls: 'urn-own', id: urn } : { cls: 'urn-other' }
  }
  return { cls: 'not-uuid' }
}

// ---------------------------------------------------------------------------------------------------------------
// GET /api/v1/contacts

/** The page docs/api.md promises for `q`, computed from the snapshot. */
export function expectedPage(fx: HostileFixture, s: Snapshot, tenantId: string, q: ListQuery): ContactPage {
  const rows = contactsOf(s, tenantId)
    .filter((c) => q.includeArchived || c.archivedAt === null)
    .filter((c) => q.stage === undefined || c.stage === q.stage)
    .filter((c) => q.emailStatus === undefined || c.emailStatus === q.emailStatus)
    .filter((c) => q.cursor === undefined || createdOf(s, c.id) < cursorBound(q.cursor))
    .sort((a, b) => (createdOf(s, a.id) < createdOf(s, b.id) ? 1 : -1))
  const page = rows.slice(0, q.limit)
  const last = page.at(-1)
  return {
    data: page.map((row) => rowToContact(row, s.links, fx.tagNames)),
    // The cursor drops microseconds that are all zeros.
    next: rows.length > q.limit && last ? createdOf(s, last.id).replace(/000Z$/, 'Z') : null,
  }
}

/** Whether every part of a raw query decodes as percent-encoded UTF-8 (one that does not is 400 bad_request). */
function decodes(raw: string): boolean {
  try {
    for (const part of raw.split(/[&=]/)) decodeURIComponent(part)
    return true
  } catch {
    return false
  }
}

export function checkList(fx: HostileFixture, x: Exchange, header: string | undefined, query: GeneratedQuery) {
  if (!decodes(query.raw)) {
    return expectOutcome(x, { outcomes: [{ status: 400, code: 'bad_request' }], why: 'an undecodable query' })
  }
  const auth = authOutcome(header, fx.keyInfos, 'list')
  if (auth) return expectOutcome(x, auth)
  const { expectation, query: parsed } = queryExpectation(query.params, query.garbage)
  const requester = requesterOf(fx, header)
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
  const wanted = expectedPage(fx, x.before, requester.tenantId, parsed)
  if (!same(x.body, wanted)) {
    throw new Error(`${x.where}: page ${JSON.stringify(x.body)} instead of ${JSON.stringify(wanted)}`)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// GET /api/v1/contacts/:id

export function checkGet(fx: HostileFixture, x: Exchange, header: string | undefined, segment: string) {
  const requester = keyOf(header, fx.keyInfos)
  const { cls, id } = classifyId(segment, x.before, requester?.tenantId)
  // A path that cannot be decoded is refused before routing, whatever else the request carries.
  if (cls === 'undecodable') return expectOutcome(x, only('undecodable path', UNDECODABLE))
  const auth = authOutcome(header, fx.keyInfos, 'get')
  if (auth) return expectOutcome(x, cls === 'not-uuid' ? union(auth, { status: 404, code: 'not_found' }) : auth)
  if (cls === 'own') expectOutcome(x, only('own contact', { status: 200 }))
  else if (cls === 'urn-own') expectOutcome(x, only('urn: form of an own id', { status: 200 }, { status: 404 }))
  else expectOutcome(x, only(`${cls} id`, { status: 404, code: 'not_found' }))
  if (x.res.statusCode === 200 && id !== undefined && !same(x.body, shown(fx, x.before, id))) {
    throw new Error(`${x.where}: ${x.res.body} is not the stored contact ${JSON.stringify(shown(fx, x.before, id))}`)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// POST /api/v1/contacts

export function checkCreate(
  fx: HostileFixture,
  x: Exchange,
  header: string | undefined,
  type: string | undefined,
  payload: string,
) {
  const auth = authOutcome(header, fx.keyInfos, 'create')
  if (auth) return expectOutcome(x, auth)
  const requester = requesterOf(fx, header)
  const parsed = parseStep(type, payload, { bodyLimit: fx.config.BODY_LIMIT, tags: new Set() })
  if (parsed.stage === 'parse') return expectOutcome(x, parsed.expectation)
  const ctx = { bodyLimit: fx.config.BODY_LIMIT, tags: fx.tagsOf.get(requester.tenantId) ?? new Set<string>() }
  const verdicts = createVerdicts(parsed.value, ctx)
  const validation = bodyValidation(verdicts, [
    { status: 201 },
    { status: 409, code: 'conflict' },
    { status: 400, code: 'unknown_tag' },
  ])
  const sent = parsed.value as Record<string, unknown>
  if (validation) {
    expectOutcome(x, validation)
    // Where docs/api.md leaves acceptance open, what is accepted must still be handled as below.
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
  const existing = contactsOf(x.before, requester.tenantId).find((c) => c.email?.toLowerCase() === email.toLowerCase())
  if (existing) {
    expectOutcome(x, only(`email of ${existing.id}`, { status: 409, code: 'conflict' }))
    const named = (x.body as ErrorBody).error.existing
    if (!same(named, { id: existing.id, status: existing.emailStatus })) {
      throw new Error(`${x.where}: conflict names ${JSON.stringify(named)}, not ${existing.id}`)
    }
    return
  }
  expectOutcome(x, only('valid new contact', { status: 201 }))
  expectCreated(fx, x, email, sent)
}

/** A 201: the contact echoes what was sent, with the documented defaults, and is exactly the one row added. */
function expectCreated(fx: HostileFixture, x: Exchange, email: string, sent: Record<string, unknown>): void {
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
  if (x.res.headers.location !== `${LIST}/${contact.id}`) {
    throw new Error(`${x.where}: Location ${x.res.headers.location}`)
  }
  if (!same(changedIds(x.before, x.after), [contact.id])) throw new Error(`${x.where}: more than the new row changed`)
  if (!same(shown(fx, x.after, contact.id), contact))
    throw new Error(`${x.where}: stored row differs from the response`)
}

// ---------------------------------------------------------------------------------------------------------------
// PATCH /api/v1/contacts/:id

export function checkUpdate(
  fx: HostileFixture,
  x: Exchange,
  header: string | undefined,
  segment: string,
  type: string | undefined,
  payload: string,
) {
  const requester = keyOf(header, fx.keyInfos)
  const { cls, id } = classifyId(segment, x.before, requester?.tenantId)
  if (cls === 'undecodable') return expectOutcome(x, only('undecodable path', UNDECODABLE))
  const notFound = { status: 404, code: 'not_found' } as const
  const auth = authOutcome(header, fx.keyInfos, 'update')
  if (auth) return expectOutcome(x, cls === 'not-uuid' ? union(auth, notFound) : auth)
  const parsed = parseStep(type, payload, { bodyLimit: fx.config.BODY_LIMIT, tags: new Set() })
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
  expectPatched(fx, x, id, parsed.value as Record<string, unknown>)
}

/**
 * A 200 PATCH: the stored contact with exactly the patch applied, and only that row changed; none when the patch
 * changes nothing (`{}`, or the values the contact already has), which leaves updatedAt as it was.
 */
function expectPatched(fx: HostileFixture, x: Exchange, id: string, patch: Record<string, unknown>): void {
  const before = shown(fx, x.before, id)
  const contact = x.body as Contact
  if (!before) throw new Error(`${x.where}: 200 for an id that was not stored`)
  const wanted = { ...before, ...patch, updatedAt: contact.updatedAt }
  if (!same(contact, wanted)) throw new Error(`${x.where}: ${x.res.body} instead of ${JSON.stringify(wanted)}`)
  const empty = same({ ...contact, updatedAt: before.updatedAt }, before)
  if (empty ? contact.updatedAt !== before.updatedAt : contact.updatedAt < before.updatedAt) {
    throw new Error(`${x.where}: updatedAt ${before.updatedAt} -> ${contact.updatedAt}`)
  }
  const changed = changedIds(x.before, x.after)
  if (!same(changed, empty ? [] : [id])) throw new Error(`${x.where}: changed ${changed.join(', ')}`)
  if (!same(shown(fx, x.after, id), contact)) throw new Error(`${x.where}: stored row differs from the response`)
}

// ---------------------------------------------------------------------------------------------------------------
// Chaos: any method and path

/**
 * A method a path does not have is 405 method_not_allowed on the two paths of contacts, whatever it carries, and
 * 404 not_found elsewhere (docs/api.md "Errors"); a 201 or a 200 that is not a GET changed exactly the contact it
 * shows, through the route that may. A DELETE that reaches a contact's erasure is refused: no key of the fixture
 * holds contacts:erase.
 */
export function checkChaos(x: Exchange, method: Method, suffix: string): void {
  const list = /^\/?$/.test(suffix)
  const item = /^\/[^/.%]+\/?$/.test(suffix)
  const noRoute =
    method === 'PUT' || (method === 'DELETE' && list) || (method === 'POST' && item) || (method === 'PATCH' && list)
  // Any other DELETE may reach the erasure's route (an id, or a path the router normalises onto one).
  if (method === 'DELETE' && !list && x.res.statusCode < 400) {
    throw new Error(`${x.where}: an erasure without the scope answered ${x.res.statusCode}`)
  }
  // On the two paths of contacts the answer is 405; elsewhere the router may normalise the path (dots, escapes,
  // empty segments) onto one of them or onto none, or refuse an escape it cannot decode: 405, 404 or 400, and
  // either way no operation ran.
  const answered = (status: number, code: string) => x.res.statusCode === status && x.res.body.includes(`"${code}"`)
  const ok =
    list || item
      ? answered(405, 'method_not_allowed')
      : answered(405, 'method_not_allowed') || answered(404, 'not_found') || answered(400, 'bad_request')
  if (noRoute && !ok) throw new Error(`${x.where}: no such operation, but ${x.res.statusCode} ${x.res.body}`)
  if (x.res.statusCode === 201) {
    const contact = x.body as Contact
    if (method !== 'POST' || !same(changedIds(x.before, x.after), [contact.id])) {
      throw new Error(`${x.where}: 201 changed ${changedIds(x.before, x.after).join(', ')}`)
    }
  }
  if (x.res.statusCode === 200 && method !== 'GET') {
    const contact = x.body as Contact
    const changed = changedIds(x.before, x.after)
    if (method !== 'PATCH' || changed.some((id) => id !== contact.id)) {
      throw new Error(`${x.where}: ${method} 200 changed ${changed.join(', ')}`)
    }
  }
}
