// Regression: two findings of Schemathesis on the batch import's round (issue #29), about rules stated twice.
// - The list's `email` filter was said to refuse addresses the document allows. Its rule was a second use of the
//   POST's, without the POST's minLength: the document stated two rules. Now one rule (EmailInput) is the email
//   of a POST, a batch item and the filter, and the server answers the filter as it answers a POST.
// - The batch was said to accept an Idempotency-Key that breaks the document's pattern, where POST /contacts
//   refuses it. Both routes declare the header once (idempotencyHeaders) and refuse the same keys; what the batch
//   "accepted" was a key sent with white space around it, which HTTP takes off before any route sees the value
//   (RFC 9110, 5.5; Node's parser does so): `k ` is the key `k`, on POST /contacts as on the batch, and the
//   document says so.
// Without the change, the first test fails on the filter's minLength; the others guard the equalities found true.
import type { AddressInfo } from 'node:net'
import net from 'node:net'
import t from 'tap'
import { build, createTenantWithKey, request } from '../helper.ts'

const LIST = '/api/v1/contacts'
const BATCH = '/api/v1/contacts/batch'

interface Schema {
  format?: string
  pattern?: string
  minLength?: number
  maxLength?: number
}
interface Parameter {
  in: string
  name: string
  schema: Schema
}
interface Document {
  paths: Record<string, Record<string, { parameters?: Parameter[] }>>
  components: { schemas: Record<string, { properties: Record<string, Schema> }> }
}

const rule = ({ format, pattern, minLength, maxLength }: Schema) => ({ format, pattern, minLength, maxLength })
const parameter = (document: Document, path: string, method: string, name: string) =>
  document.paths[path]?.[method]?.parameters?.find((p) => p.name === name)?.schema ?? {}

/** A whole HTTP exchange over a socket, so that the request is parsed as any client's is: status and body. */
function exchange(port: number, text: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // Written, not ended: a client that half-closes may be taken for one that hung up. The server closes.
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text))
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      resolve({ status: Number(raw.split(' ', 2)[1]), body: raw.slice(raw.indexOf('\r\n\r\n') + 4) })
    })
  })
}

t.test('the email filter states and applies the rule of a POST email', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const { key } = await createTenantWithKey(app)
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as Document
  const create = rule(document.components.schemas.ContactCreate?.properties.email ?? {})
  t.ok(create.pattern && create.format === 'email', 'POST states a pattern beside format: email')
  t.same(rule(parameter(document, LIST, 'get', 'email')), create, 'the filter states the same rule')
  t.same(rule(document.components.schemas.BatchItem?.properties.email ?? {}), create, 'and so does a batch item')

  const pattern = new RegExp(create.pattern ?? '', 'u')
  const local64 = 'a'.repeat(64)
  const label63 = 'b'.repeat(63)
  const addresses = [
    'anna.rossi@example.it',
    "o'brien+news@example.co.uk",
    "!#$%&'*+/=?^_`{|}~-@example.it",
    'A.B@EXAMPLE.IT',
    `${local64}@example.it`,
    `${local64}a@example.it`,
    `x@${label63}.it`,
    `x@${label63}b.it`,
    `${'c'.repeat(60)}@${[label63, label63, label63].join('.')}.it`,
    'v@io',
    'user@localhost',
    '"a b"@example.it',
    'v@[127.0.0.1]',
    'a..b@example.it',
    '.a@example.it',
    'a@example.it\n',
    ' a@example.it',
    'a@-example.it',
    'a@example.it.',
    'à@example.it',
    'a@b.c',
  ]
  for (const [i, address] of addresses.entries()) {
    const documented = pattern.test(address) && address.length >= 3 && address.length <= 254
    // Encoded as the document's form style has it (a space as %20; a "+" unencoded is a plus in an email).
    const filtered = await request(app, key, { method: 'GET', url: `${LIST}?email=${encodeURIComponent(address)}` })
    const created = await request(app, key, {
      method: 'POST',
      url: LIST,
      payload: { email: address, firstName: `n${i}` },
    })
    t.same(
      [filtered.statusCode, created.statusCode],
      documented ? [200, 201] : [400, 400],
      `${JSON.stringify(address)} (${address.length} characters) is ${documented ? 'taken' : 'refused'} by both`,
    )
  }
})

t.test('the batch and POST /contacts declare Idempotency-Key once and refuse the same keys', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  // A tenant per route, so that each key is new on both (keys are per tenant).
  const single = await createTenantWithKey(app, { name: 'single' })
  const batch = await createTenantWithKey(app, { name: 'batch' })
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as Document
  const onCreate = parameter(document, LIST, 'post', 'idempotency-key')
  t.ok(onCreate.pattern, 'POST /contacts states the pattern')
  t.same(parameter(document, BATCH, 'post', 'idempotency-key'), onCreate, 'the batch states the same')
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port

  const post = (apiKey: string, path: string, idempotencyKey: string, body: unknown) => {
    const json = JSON.stringify(body)
    return exchange(
      port,
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
        `Idempotency-Key: ${idempotencyKey}\r\nConnection: close\r\n\r\n${json}`,
    )
  }
  // Taken, or the code of the refusal (DEL does not even pass Node's HTTP parser: bad_request).
  const verdict = (answer: { status: number; body: string }) =>
    answer.status === 400 ? (JSON.parse(answer.body) as { error: { code: string } }).error.code : 'taken'
  const keys = ['k', 'a b', '~!', 'x'.repeat(255), 'x'.repeat(256), 'è', 'a\u00a0b', 'a\tb', 'a\u007fb']
  const verdicts: string[] = []
  for (const [i, value] of keys.entries()) {
    const onPost = await post(single.key, LIST, value, { email: `k${i}@example.it` })
    const onBatch = await post(batch.key, BATCH, value, { contacts: [{ email: `b${i}@example.it` }] })
    t.equal(verdict(onBatch), verdict(onPost), `${JSON.stringify(value)}: the same verdict on both routes`)
    verdicts.push(verdict(onPost))
    t.ok(
      [onPost.status, onBatch.status].every((status) => status >= 200),
      'both answered',
    )
  }
  const taken = Array<string>(4).fill('taken')
  const refused = Array<string>(4).fill('invalid_header')
  t.same(verdicts, [...taken, ...refused, 'bad_request'], 'the keys the pattern refuses are refused')

  // White space around a key is not part of it: ` spaced ` is `spaced`, a replay.
  const first = await post(batch.key, BATCH, 'spaced ', { contacts: [{ email: 'spaced@example.it' }] })
  const again = await post(batch.key, BATCH, '  spaced', { contacts: [{ email: 'spaced@example.it' }] })
  t.same([first.status, again.status], [200, 200])
  t.equal(again.body, first.body, 'the same key: the first answer again')
  const reused = await post(batch.key, BATCH, 'spaced\t', { contacts: [{ email: 'other@example.it' }] })
  t.equal(reused.status, 422, 'and with another body, the key is reused')
})
