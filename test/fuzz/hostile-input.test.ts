// Property-based tests over the four endpoints with hostile input: arbitrary and malformed JSON bodies, raw query
// strings, path ids, Authorization headers and content types (generators in ./hostile.ts). For every response:
// never 5xx; a 2xx is exactly the documented shape, anything else the Italian error envelope with a documented
// code; the status is one docs/api.md allows for that input (./oracle.ts); a refused request changes nothing in
// the database; no contact of another tenant is ever shown; no prototype gets polluted.
// The fixture and the universal invariants are in ./hostile-fixture.ts, each endpoint's checks in ./hostile-checks.ts.
// FUZZ_SEED and FUZZ_RUNS set the seed and the number of cases (see docs/reliability.md).
import fc from 'fast-check'
import t, { type Test } from 'tap'
import {
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
import { checkChaos, checkCreate, checkGet, checkList, checkUpdate, contactsOf } from './hostile-checks.ts'
import { createFixture, exchange, type HostileFixture, removeCreated } from './hostile-fixture.ts'
import { commentRunParameters, holds, runs } from './run.ts'
import { assertNoPollution, LIST, snapshot } from './support.ts'

/** The text as the server receives it: sent as UTF-8, where a lone surrogate can only become U+FFFD. */
const wire = (text: string) => Buffer.from(text, 'utf8').toString('utf8')

t.test('hostile input never breaks the API, its envelope, the database or tenant isolation', async (t) => {
  commentRunParameters(t)
  const fx = await createFixture(t)
  await t.test('GET /api/v1/contacts: raw query strings', async (t) => {
    await holds(t, 'GET /api/v1/contacts', listProperty(fx), runs(1))
  })
  await t.test('GET /api/v1/contacts/:id: arbitrary ids', async (t) => {
    await holds(t, 'GET /api/v1/contacts/:id', getProperty(fx), runs(1))
  })
  await t.test('POST /api/v1/contacts: arbitrary bodies and content types', async (t) => {
    await holds(t, 'POST /api/v1/contacts', createProperty(fx), runs(1.5))
  })
  await t.test('PATCH /api/v1/contacts/:id: arbitrary ids, bodies and content types', async (t) => {
    await holds(t, 'PATCH /api/v1/contacts/:id', updateProperty(fx), runs(1.5))
  })
  await t.test('any method, path, query, header and body: only the universal invariants', async (t) => {
    await holds(t, 'chaos', chaosProperty(fx), runs(1.5))
  })
  await checkNothingLeaked(t, fx)
  fx.stats.report(t, 'hostile-input')
})

function listProperty(fx: HostileFixture) {
  return fc.asyncProperty(
    authorization(fx.keys),
    listQuery(fx.createdAts),
    fc.option(contentType(), { freq: 5 }),
    async (header, query, type) => {
      const url = query.raw === '' ? LIST : `${LIST}?${query.raw}`
      const headers = { authorization: header, 'content-type': type ?? undefined }
      const x = await exchange(fx, 'GET /contacts', 'GET', url, headers, undefined)
      if (x) checkList(fx, x, header, query)
    },
  )
}

function getProperty(fx: HostileFixture) {
  return fc.asyncProperty(authorization(fx.keys), pathId(fx.mainIds, fx.otherIds), async (header, segment) => {
    const x = await exchange(fx, 'GET /contacts/:id', 'GET', `${LIST}/${segment}`, { authorization: header }, undefined)
    if (x) checkGet(fx, x, header, segment)
  })
}

function createProperty(fx: HostileFixture) {
  return fc.asyncProperty(
    authorization(fx.keys),
    contentType(),
    createBody(fx.inputs),
    async (header, type, generated) => {
      const payload = wire(generated)
      const x = await exchange(
        fx,
        'POST /contacts',
        'POST',
        LIST,
        { authorization: header, 'content-type': type },
        payload,
      )
      if (!x) return
      try {
        checkCreate(fx, x, header, type, payload)
      } finally {
        await removeCreated(fx, x)
      }
    },
  )
}

function updateProperty(fx: HostileFixture) {
  return fc.asyncProperty(
    authorization(fx.keys),
    pathId(fx.mainIds, fx.otherIds),
    contentType(),
    updateBody(fx.config.BODY_LIMIT),
    async (header, segment, type, generated) => {
      const payload = wire(generated)
      const headers = { authorization: header, 'content-type': type }
      const x = await exchange(fx, 'PATCH /contacts/:id', 'PATCH', `${LIST}/${segment}`, headers, payload)
      if (x) checkUpdate(fx, x, header, segment, type, payload)
    },
  )
}

/** No structure at all: only the invariants every response must satisfy, and no route answers for another. */
function chaosProperty(fx: HostileFixture) {
  return fc.asyncProperty(
    fc.constantFrom('GET', 'GET', 'POST', 'PATCH', 'PUT', 'DELETE'),
    rawPathSuffix(fx.mainIds),
    rawQuery(),
    authorization(fx.keys),
    fc.option(contentType(), { freq: 4 }),
    rawBody(fx.inputs),
    extraHeaders(),
    async (method, suffix, query, header, type, payload, extra) => {
      const route = /^\/?$/.test(suffix) ? '/contacts' : /^\/[^/]+\/?$/.test(suffix) ? '/contacts/:id' : 'other'
      const headers = { ...extra, authorization: header, 'content-type': type ?? undefined }
      const x = await exchange(fx, `chaos ${method} ${route}`, method, `${LIST}${suffix}${query}`, headers, payload)
      if (!x) return
      try {
        checkChaos(x, method, suffix)
      } finally {
        await removeCreated(fx, x)
      }
    },
  )
}

/** After every property: the prototypes are intact and each tenant holds exactly its seeded contacts. */
async function checkNothingLeaked(t: Test, fx: HostileFixture) {
  t.doesNotThrow(() => assertNoPollution(fx.pollution), 'no prototype gained a property')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype.polluted is not set')
  const end = await snapshot(fx.app.db.prisma)
  for (const tenantId of [fx.main.tenantId, fx.other.tenantId]) {
    t.same(
      contactsOf(end, tenantId).map((c) => c.id),
      contactsOf(fx.seeded, tenantId).map((c) => c.id),
      'each tenant holds exactly its seeded contacts (created ones were removed, none moved or vanished)',
    )
  }
}
