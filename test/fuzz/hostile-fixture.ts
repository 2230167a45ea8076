// What the hostile-input properties (hostile-input.test.ts) attack, built once per run: one app with the tenant
// under attack, another tenant whose contacts must stay invisible, a suspended and a closed one, keys of every role
// and scope combination (and a revoked one), a few seeded contacts. And `exchange`, the one request each case
// makes, with the invariants every response must satisfy whatever was sent.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { hashApiKey, type Scope } from '../../src/auth/api-key.ts'
import type { Config } from '../../src/config/config.ts'
import { addKey, build, createTenantWithKey, request, type TenantFixture } from '../helper.ts'
import type { AuthKeys, BodyInputs } from './hostile.ts'
import { type KeyInfo, keyOf } from './oracle.ts'
import { Stats } from './run.ts'
import {
  assertNoPollution,
  type Contact,
  type ContactPage,
  changedIds,
  checkResponse,
  describe,
  LIST,
  LOWERCASE_UUID,
  type NotFoundReference,
  prototypeFingerprint,
  referenceNotFound,
  type Snapshot,
  snapshot,
} from './support.ts'

const RW: Scope[] = ['contacts:read', 'contacts:write']
export const MAIN_TAGS = ['vip', 'newsletter', 'clienti-2026', 'ü-tag', '😀']
export const OTHER_TAGS = ['vip', 'segreto']

export interface HostileFixture {
  app: FastifyInstance
  config: Config
  stats: Stats
  /** The shared prototypes before the first request (prototypeFingerprint). */
  pollution: string
  main: TenantFixture
  other: TenantFixture
  keys: AuthKeys
  /** What the oracle knows of each key (by the key as issued, lower case). */
  keyInfos: Map<string, KeyInfo>
  /** Each tenant's tag names. */
  tagsOf: Map<string, Set<string>>
  tagNames: Map<string, string>
  /** The database after seeding: every case starts from it (created contacts are removed again). */
  seeded: Snapshot
  mainIds: string[]
  otherIds: string[]
  createdAts: string[]
  inputs: BodyInputs
  notFound: NotFoundReference
}

export async function createFixture(t: Test): Promise<HostileFixture> {
  const pollution = prototypeFingerprint()
  const { app, config } = await build(t, { RATE_LIMIT_MAX: '1000000000' })
  const { keys, keyInfos, main, other } = await issueKeys(app)
  await seedContacts(t, app, keys.admin, main.tenantId, other.tenantId)
  const seeded = await snapshot(app.db.prisma)
  const idsOf = (tenantId: string) => seeded.contacts.filter((c) => c.tenantId === tenantId).map((c) => c.id)
  const emails = [...seeded.contacts.flatMap((c) => (c.email ? [c.email] : [])), 'nuovo@x.io', 'Nuovo@Example.IT']
  const notFound = await referenceNotFound(app, keys.admin)
  t.equal(notFound.status, 404)
  return {
    app,
    config,
    stats: new Stats(),
    pollution,
    main,
    other,
    keys,
    keyInfos,
    tagsOf: new Map([
      [main.tenantId, new Set(MAIN_TAGS)],
      [other.tenantId, new Set(OTHER_TAGS)],
    ]),
    tagNames: new Map((await app.db.prisma.tag.findMany()).map((tag) => [tag.id, tag.name])),
    seeded,
    mainIds: idsOf(main.tenantId),
    otherIds: idsOf(other.tenantId),
    createdAts: seeded.contacts.map((c) => c.createdAt.toISOString()),
    inputs: { emails, ownTags: MAIN_TAGS, foreignTags: OTHER_TAGS, bodyLimit: config.BODY_LIMIT },
    notFound,
  }
}

/** The four tenants and their keys, with what the oracle must know of each key. */
async function issueKeys(app: FastifyInstance) {
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
  const revokedAt = new Date()
  await app.db.prisma.apiKey.updateMany({ where: { keyHash: hashApiKey(keys.revoked) }, data: { revokedAt } })
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
  return { keys, keyInfos, main, other }
}

/** Three contacts through the API, the rest straight into the database (shared instants, archived, no email). */
async function seedContacts(t: Test, app: FastifyInstance, adminKey: string, mainId: string, otherId: string) {
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
    const res = await request(app, adminKey, { method: 'POST', url: LIST, payload })
    t.equal(res.statusCode, 201, `fixture ${payload.email}`)
  }
  const instant = new Date('2026-05-01T12:00:00.000Z')
  const later = new Date('2026-05-02T08:00:00.000Z')
  await app.db.prisma.contact.createMany({
    data: [
      { tenantId: mainId, email: 'dario@x.io', stage: 'customer', emailStatus: 'bounced', createdAt: instant },
      { tenantId: mainId, email: 'eva@x.io', stage: 'prospect', createdAt: instant },
      { tenantId: mainId, email: null, phone: '123456', firstName: 'Senza', createdAt: instant },
      { tenantId: mainId, email: 'archived@x.io', archivedAt: later, createdAt: later },
      { tenantId: mainId, email: 'Shared@Both.io', createdAt: later },
      { tenantId: mainId, email: 'f@x.io', emailStatus: 'pending_review', stage: 'ex_customer' },
      { tenantId: mainId, email: 'g@x.io', emailStatus: 'suppressed' },
      { tenantId: otherId, email: 'shared@both.io', createdAt: instant },
      { tenantId: otherId, email: 'solo-altro@x.io', stage: 'customer', createdAt: instant },
      { tenantId: otherId, email: 'anna.rossi@example.it' },
      { tenantId: otherId, email: 'archiviato@altro.it', archivedAt: later },
    ],
  })
}

// ---------------------------------------------------------------------------------------------------------------
// One exchange and the invariants every response must satisfy

export interface Exchange {
  before: Snapshot
  after: Snapshot
  res: LightMyRequestResponse
  body: unknown
  where: string
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/**
 * Sends one request, between two snapshots of the database, and checks what holds for any input: checkResponse;
 * every 404 is the reference 404; a refusal or a GET changes nothing; a 2xx carries the rate-limit headers, comes
 * from a valid key and shows only that key's tenant's contacts; no prototype is polluted. null when
 * light-my-request refused to send the request at all.
 */
export async function exchange(
  fx: HostileFixture,
  endpoint: string,
  method: Method,
  url: string,
  headers: Record<string, string | undefined>,
  payload: string | undefined,
): Promise<Exchange | null> {
  const sent = Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined))
  const where = describe(method, url, sent, payload)
  const before = await snapshot(fx.app.db.prisma)
  let res: LightMyRequestResponse
  try {
    res = await fx.app.inject({ method, url, headers: sent, ...(payload !== undefined && { payload }) })
  } catch (error) {
    // light-my-request refuses some URLs and headers before anything reaches the server: not a server case.
    fx.stats.count(endpoint, 'not sent')
    if (String(error).includes('Invalid') || String(error).includes('ERR_')) return null
    throw error
  }
  fx.stats.count(endpoint, res.statusCode)
  const after = await snapshot(fx.app.db.prisma)
  const shape = res.statusCode < 300 && /^\s*\{\s*"data"/.test(res.body) ? 'page' : 'contact'
  const body = checkResponse(res, shape, where)
  if (res.statusCode === 404 && (res.body !== fx.notFound.body || res.headers['content-type'] !== fx.notFound.type)) {
    throw new Error(`${where}: 404 differs from the reference 404: ${res.body}`)
  }
  const success = res.statusCode >= 200 && res.statusCode < 300
  if ((!success || method === 'GET') && after.text !== before.text) {
    throw new Error(`${where}: ${res.statusCode} changed the database (${changedIds(before, after).join(', ')})`)
  }
  const x = { before, after, res, body, where }
  if (success)
    checkSuccess(fx, x, sent.authorization, shape === 'page' ? (body as ContactPage).data : [body as Contact])
  assertNoPollution(fx.pollution)
  return x
}

/** A 2xx carries the rate-limit headers, comes from a valid key and `shown` holds only that key's tenant's contacts. */
function checkSuccess(fx: HostileFixture, x: Exchange, authorization: string | undefined, shown: Contact[]): void {
  const { before, after, res, where } = x
  if (res.headers['x-ratelimit-limit'] === undefined) throw new Error(`${where}: no X-RateLimit-Limit on a 2xx`)
  // Whatever the route, a 2xx shows only contacts of the key's tenant.
  const requester = keyOf(authorization, fx.keyInfos)
  if (!requester) throw new Error(`${where}: ${res.statusCode} without a valid key`)
  const mine = new Set(
    [...before.contacts, ...after.contacts].filter((c) => c.tenantId === requester.tenantId).map((c) => c.id),
  )
  const foreign = shown.filter((c) => !mine.has(c.id))
  if (foreign.length > 0) throw new Error(`${where}: shows contacts of another tenant: ${JSON.stringify(foreign)}`)
}

/** Keeps the database at its seed: a contact the case created goes again (once the checks have seen it). */
export async function removeCreated(fx: HostileFixture, x: Exchange): Promise<void> {
  const created = x.res.statusCode === 201 ? (x.body as Contact) : undefined
  if (created && LOWERCASE_UUID.test(created.id))
    await fx.app.db.prisma.contact.deleteMany({ where: { id: created.id } })
}
