import { readFile } from 'node:fs/promises'
import t from 'tap'
import { parse } from 'yaml'
import { build } from '../helper.ts'

interface Operation {
  operationId: string
  security: Record<string, string[]>[]
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }>; headers?: object }>
  parameters?: { in: string; name: string; required: boolean }[]
}

t.test('the served document is OpenAPI 3.1 from the route schemas, and the committed copy is current', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1' })
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
  t.same(Object.keys(served.components.schemas).sort(), [
    'Contact',
    'ContactCreate',
    'ContactList',
    'ContactUpdate',
    'Error',
  ])
  t.equal(served.components.securitySchemes.apiKey.scheme, 'bearer')

  const operations: Record<string, Operation> = {}
  for (const methods of Object.values(served.paths as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(methods)) operations[operation.operationId] = operation
  }
  t.same(Object.keys(operations).sort(), ['createContact', 'getContact', 'listContacts', 'updateContact'])
  const expected: Record<string, [string, string[]]> = {
    listContacts: ['contacts:read', ['200', '400', '401', '403', '429', '500']],
    getContact: ['contacts:read', ['200', '401', '403', '404', '429', '500']],
    createContact: ['contacts:write', ['201', '400', '401', '403', '409', '413', '429', '500']],
    updateContact: ['contacts:write', ['200', '400', '401', '403', '404', '413', '429', '500']],
  }
  for (const [id, [scope, statuses]] of Object.entries(expected)) {
    const operation = operations[id] as Operation
    t.same(operation.security, [{ apiKey: [scope] }], `${id} requires ${scope}`)
    t.same(Object.keys(operation.responses).sort(), statuses, `${id} documents every status`)
    for (const [status, response] of Object.entries(operation.responses)) {
      t.ok(response.headers && 'X-RateLimit-Limit' in response.headers, `${id} ${status} has rate-limit headers`)
      if (Number(status) >= 400) {
        t.equal(response.content?.['application/json']?.schema.$ref, '#/components/schemas/Error', `${id} ${status}`)
      }
    }
  }
  t.ok('Retry-After' in (operations.listContacts?.responses['429']?.headers ?? {}), '429 documents Retry-After')
  const query = operations.listContacts?.parameters ?? []
  t.ok(
    query.filter((p) => p.in === 'query').every((p) => p.required === false),
    'query parameters, defaults included, are optional',
  )

  for (let i = 0; i < 3; i++) {
    const again = await app.inject({ method: 'GET', url: '/openapi.json' })
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
