// JSON bodies are refused before they are parsed when they nest deeper than MAX_JSON_DEPTH or hold more than
// MAX_JSON_CONTAINERS objects and lists (src/plugins/app/json-shape.ts), on every route; the scan counts only
// brackets and braces outside strings; docs/api.md states both limits.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { jsonShapeExcess, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH } from '../../../src/plugins/app/json-shape.ts'
import { build, createTenantWithKey, request } from '../../helper.ts'

const scan = (text: string) => jsonShapeExcess(Buffer.from(text))
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`

t.test('the scan counts levels and containers outside strings only', async (t) => {
  t.equal(scan(nested(MAX_JSON_DEPTH)), undefined, `${MAX_JSON_DEPTH} levels`)
  t.equal(scan(nested(MAX_JSON_DEPTH + 1)), 'depth', 'one more')
  t.equal(scan(`{"a":${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`), 'depth', 'objects too')
  t.equal(scan(`[${'{},'.repeat(MAX_JSON_CONTAINERS - 2)}{}]`), undefined, `${MAX_JSON_CONTAINERS} containers`)
  t.equal(scan(`[${'[],'.repeat(MAX_JSON_CONTAINERS - 1)}[]]`), 'containers', 'one more')
  // Levels close again: many shallow containers in a row are counted, not nested.
  t.equal(scan(`[${nested(MAX_JSON_DEPTH - 1).repeat(100)}]`), undefined)
  const inString = `"${'['.repeat(1000)}{{{"`
  t.equal(scan(`{"a":${inString}}`), undefined, 'brackets in a string are text')
  t.equal(scan(`["\\"${'['.repeat(100)}"]`), undefined, 'an escaped quote does not end the string')
  t.equal(scan(`["\\\\",${nested(MAX_JSON_DEPTH)}]`), 'depth', 'an escaped backslash does, before the quote')
  t.equal(scan(`["${'é😀'.repeat(50)}",${nested(MAX_JSON_DEPTH)}]`), 'depth', 'multi-byte text is skipped whole')
  t.equal(scan(`"${'['.repeat(100)}`), undefined, 'a string left open runs to the end')
  t.equal(scan(`${']'.repeat(10)}${nested(MAX_JSON_DEPTH)}`), undefined, 'closing brackets first do not count')
})

t.test('every JSON route refuses such bodies with 400 invalid_body, in Italian, before parsing them', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const post = (payload: string) =>
    request(app, key, {
      method: 'POST',
      url: '/api/v1/contacts',
      payload,
      headers: { 'content-type': 'application/json' },
    })
  const deep = await post(`{"email":"a@example.it","firstName":${nested(MAX_JSON_DEPTH)}}`)
  t.equal(deep.statusCode, 400)
  t.same(deep.json(), {
    error: {
      code: 'invalid_body',
      message: `Il JSON del corpo annida oggetti e liste su più di ${MAX_JSON_DEPTH} livelli, il massimo consentito.`,
    },
  })
  const many = await post(`{"email":"a@example.it","tags":[${'[],'.repeat(MAX_JSON_CONTAINERS)}[]]}`)
  t.equal(many.statusCode, 400)
  t.same(many.json(), {
    error: {
      code: 'invalid_body',
      message: `Il JSON del corpo contiene più di ${MAX_JSON_CONTAINERS} oggetti e liste, il massimo consentito.`,
    },
  })
  const within = await post(`{"email":"a@example.it","firstName":${nested(MAX_JSON_DEPTH - 1)}}`)
  t.match(
    within.json().error,
    { code: 'invalid_body', message: /"firstName"/ },
    'within the limits, validation names the field',
  )
  t.equal(await app.db.prisma.contact.count({ where: { tenantId } }), 0, 'nothing was written')
})

t.test('docs/api.md states both limits', async (t) => {
  const page = readFileSync('docs/api.md', 'utf8').replace(/\s+/g, ' ')
  t.match(
    page,
    `at most ${MAX_JSON_DEPTH} levels of objects and lists, and ${MAX_JSON_CONTAINERS.toLocaleString('en')} of them`,
  )
  t.match(
    page,
    `deeper than ${MAX_JSON_DEPTH} levels, or holds more than ${MAX_JSON_CONTAINERS.toLocaleString('en')} of them`,
  )
})
