// The contract check of test/helper.ts is not vacuous: answers that break the document are reported.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { contractViolations } from '../contract.ts'

const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as {
  components: { schemas: { Contact: { examples: unknown[] } } }
}

const ID = '8b4f3f2e-3f7c-4d0e-9a55-2f2b8d1c9e10'
const headers = {
  'x-request-id': 'r1',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-ratelimit-limit': 60,
  'x-ratelimit-remaining': 59,
  'x-ratelimit-reset': 60,
}
const error = (code: string) => JSON.stringify({ error: { code, message: 'x' } })
/** A Contact as the document describes it: its own example, with the id the exchanges below use. */
const contact = { ...(document.components.schemas.Contact.examples[0] as object), id: ID }

t.test('conforming answers pass, broken ones are reported', async (t) => {
  const unauthorized = { method: 'GET', url: '/api/v1/contacts', status: 401, headers, payload: error('invalid_key') }
  /** A 200 of GET /contacts/{id} with `body`. */
  const gotContact = (body: object) => ({
    ...unauthorized,
    status: 200,
    headers: { ...headers, etag: '"1"' },
    url: `/api/v1/contacts/${ID}`,
    payload: JSON.stringify(body),
  })
  t.same(await contractViolations(unauthorized), [], 'a documented 401')
  const cases: [string, Parameters<typeof contractViolations>[0], RegExp][] = [
    ['an undocumented status', { ...unauthorized, status: 418 }, /status 418 is not documented for listContacts/],
    ['a missing header', { ...unauthorized, headers: { 'x-request-id': 'r1' } }, /headers: Cache-Control is required/],
    ['an unknown code', { ...unauthorized, payload: error('teapot') }, /body: \/error\/code/],
    [
      'a body outside the schema',
      { ...unauthorized, status: 200, url: `/api/v1/contacts/${ID}`, payload: '{"id":"x"}' },
      /body: /,
    ],
    [
      'a bad format',
      {
        ...unauthorized,
        status: 409,
        method: 'POST',
        payload: '{"error":{"code":"conflict","message":"x","existing":{"id":"x","status":"active"}}}',
      },
      /format "uuid"/,
    ],
    [
      // The check reads the body as sent, not as the route's serializer would have made it: a field too many
      // (a column leaking into an answer) must be reported.
      'a field the document does not have',
      gotContact({ ...contact, version: 3 }),
      /must NOT have additional properties/,
    ],
    [
      'a list entry with a field the document does not have',
      { ...unauthorized, status: 200, payload: JSON.stringify({ data: [{ ...contact, version: 3 }], next: null }) },
      /must NOT have additional properties/,
    ],
    ['no operation, not 404/405', { ...unauthorized, method: 'PUT', status: 200 }, /status 200 for no operation/],
    [
      'a 405 without Allow',
      { ...unauthorized, method: 'PUT', status: 405, payload: error('method_not_allowed') },
      /without Allow/,
    ],
    ['not JSON', { ...unauthorized, payload: 'oops' }, /not JSON/],
  ]
  for (const [what, exchange, expected] of cases)
    t.match((await contractViolations(exchange)).join(' | '), expected, what)
  t.same(await contractViolations(gotContact(contact)), [], 'the same Contact without the extra field passes')
  t.same(
    await contractViolations({ ...unauthorized, url: '/health', status: 200, payload: '{}' }),
    [],
    'not in the document',
  )
})
