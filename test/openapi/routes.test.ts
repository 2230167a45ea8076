import { readFile } from 'node:fs/promises'
import t from 'tap'
import { parse } from 'yaml'
import { SCOPES } from '../../src/auth/api-key.ts'
import { build } from '../helper.ts'

interface Operation {
  operationId: string
  security: Record<string, string[]>[]
  responses: Record<
    string,
    { content?: Record<string, { schema: { $ref?: string }; examples?: object }>; headers?: object }
  >
  parameters?: { in: string; name: string; required: boolean }[]
}

t.test('the served document is OpenAPI 3.1 from the route schemas, and the committed copy is current', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  const served = res.json()
  const committed = JSON.parse(await readFile('openapi.json', 'utf8'))
  t.same(served, committed, 'openapi.json is current (if not: npm run openapi:write, then commit it)')

  const yaml = await app.inject({ method: 'GET', url: '/openapi.yaml' })
  t.equal(yaml.statusCode, 200)
  t.match(yaml.headers['content-type'], /yaml/)
  t.same(parse(yaml.body), served, 'YAML and JSON say the same')

  t.equal(served.openapi, '3.1.0')
  t.equal(served.info.version, JSON.parse(await readFile('package.json', 'utf8')).version, 'version of package.json')
  t.ok(served.info.license?.name && served.info.contact?.email, 'license and contact')
  t.match(served.info.description, /60 richieste ogni 60 secondi/, 'the rate limit of the configuration')
  t.notOk('servers' in served, 'no relative server: clients set their base URL (or PUBLIC_URL names it)')
  // The components are the schemas the features registered, and every one of them is referred to.
  const registered = Object.keys(app.getSchemas())
  t.same(Object.keys(served.components.schemas), registered, 'one component per registered schema, in their order')
  const text = JSON.stringify(served)
  for (const name of registered) {
    t.ok(text.includes(`"#/components/schemas/${name}"`), `${name} is referred to`)
  }
  for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
    t.ok(registered.includes(name as string), `${name}: a reference to a component that exists`)
  }
  t.equal(served.components.securitySchemes.apiKey.scheme, 'bearer')
  const delivery = served.webhooks.contactEvent.post
  t.equal(
    delivery.requestBody.content['application/json'].schema.$ref,
    '#/components/schemas/Event',
    'a delivery is an Event',
  )
  t.same(
    delivery.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required]),
    [
      ['webhook-id', 'header', true],
      ['webhook-timestamp', 'header', true],
      ['webhook-signature', 'header', true],
    ],
    'signed as Standard Webhooks says',
  )

  const operations: Record<string, Operation> = {}
  for (const methods of Object.values(served.paths as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(methods)) operations[operation.operationId] = operation
  }
  t.ok(Object.keys(operations).length >= 13, 'every operation has an id of its own')
  t.ok(
    Object.keys(served.paths).every((path) => path.startsWith('/api/v1/')),
    'the document lists the API alone (health, the document and the reference page are hidden)',
  )
  const everywhere = ['400', '401', '403', '405', '408', '417', '429', '431', '500', '503']
  for (const [id, operation] of Object.entries(operations)) {
    const scopes = operation.security[0]?.apiKey ?? []
    t.ok(
      scopes.length > 0 && scopes.every((scope) => (SCOPES as readonly string[]).includes(scope)),
      `${id} requires ${scopes.join(' and ')}`,
    )
    const statuses = Object.keys(operation.responses)
    t.same(
      everywhere.filter((status) => !statuses.includes(status)),
      [],
      `${id} documents what every operation can answer`,
    )
    t.ok(
      statuses.some((status) => /^[23]/.test(status)),
      `${id} documents its success`,
    )
    for (const [status, response] of Object.entries(operation.responses)) {
      const headers = (response.headers ?? {}) as Record<string, { required?: boolean }>
      for (const name of ['X-Request-Id', 'Cache-Control', 'X-Content-Type-Options']) {
        t.equal(headers[name]?.required, true, `${id} ${status}: ${name} is required`)
      }
      if (Number(status) >= 400) {
        const media = response.content?.['application/json']
        t.equal(media?.schema.$ref, '#/components/schemas/ErrorResponse', `${id} ${status}: the envelope`)
        t.ok(Object.keys(media?.examples ?? {}).length > 0, `${id} ${status}: an example of each code`)
      }
    }
  }
  // What sends or shows contacts' data through webhooks needs contacts:read as well.
  for (const id of ['createWebhook', 'listWebhookDeliveries']) {
    t.same(operations[id]?.security, [{ apiKey: ['webhooks:manage', 'contacts:read'] }], `${id}: both scopes`)
  }
  const created = operations.createContact?.responses['201']?.headers as Record<string, { required?: boolean }>
  t.equal(created.Location?.required, true, '201 documents Location as always sent')
  t.equal(created.ETag?.required, true, '201 documents the ETag as always sent')
  t.notOk(created['Idempotent-Replayed']?.required, 'Idempotent-Replayed only on replays')
  const refused = operations.listContacts?.responses['429']?.headers as Record<string, { required?: boolean }>
  t.equal(refused['Retry-After']?.required, true, '429 documents Retry-After as always sent')
  const query = operations.listContacts?.parameters ?? []
  t.ok(
    query.filter((p) => p.in === 'query').every((p) => p.required === false),
    'query parameters, defaults included, are optional',
  )
  for (const name of ['cursor', 'email']) {
    const narrowing = query.find((p) => p.name === name) as { example?: unknown; schema?: { examples?: unknown } }
    t.notOk(narrowing.example ?? narrowing.schema?.examples, `no example ${name} for a reference page to fill in`)
  }
  const existing = served.components.schemas.ExistingContact.properties.status
  t.same(existing, { $ref: '#/components/schemas/EmailStatus' }, "the conflict's status is an EmailStatus")

  const limited = await build(t, {
    RATE_LIMIT_MAX: '1',
    RATE_LIMIT_WINDOW: '30000',
    PUBLIC_URL: 'https://api.example.it',
  })
  const configured = (await limited.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  t.match(configured.info.description, /1 richieste ogni 30 secondi/, 'the description follows the configuration')
  t.same(configured.servers, [{ url: 'https://api.example.it', description: 'rubrica' }], 'PUBLIC_URL names the server')
  for (let i = 0; i < 3; i++) {
    const again = await limited.app.inject({ method: 'GET', url: '/openapi.json' })
    t.equal(again.statusCode, 200, 'the document is not rate limited')
    t.notOk(again.headers['x-ratelimit-limit'])
  }
})

t.test('the reference page is served without a key and without outside resources', async (t) => {
  const { app } = await build(t)
  const page = await app.inject({ method: 'GET', url: '/docs' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /html/)
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)
  t.ok(assets.length > 0)
  for (const asset of assets) {
    t.notMatch(asset, /^(https?:)?\/\//, `${asset} is local`)
    const res = await app.inject({ method: 'GET', url: new URL(asset, 'http://local/docs/').pathname })
    t.equal(res.statusCode, 200, `${asset} is served`)
  }
})
