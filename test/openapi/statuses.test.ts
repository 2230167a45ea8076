// Every operation documents exactly the error codes, and so the statuses, its route can answer with: derived here
// from what the route is (its config and schema, read from the routes the app registers) and from what it does to
// requests sent to it, never from the document; then compared with openapi.json per operation, both ways. The
// statuses of the codes come from the error catalogue. A code only a feature's own logic produces (a conflict, a
// limit) cannot be seen in a route's shape: those few are listed below with what produces them.
import { readFile } from 'node:fs/promises'
import Fastify, { type FastifyInstance, type FastifySchema, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import t from 'tap'
import { API_PREFIX } from '../../src/api-prefix.ts'
import serviceApp from '../../src/app.ts'
import { SCOPES } from '../../src/auth/api-key.ts'
import { CATALOGUE, ERROR_CODES, type ErrorCode } from '../../src/errors/catalogue.ts'
import { createTestDatabase } from '../database.ts'
import { addKey, createTenantWithKey, request, testConfig } from '../helper.ts'

/** The codes whose status is `status`, in the catalogue. */
const codesOfStatus = (status: number) => ERROR_CODES.filter((code) => CATALOGUE[code].status === status)

/** What a route can be refused or fail with, by what it is. */
interface Rule {
  /** Why the route can answer with these codes. */
  why: string
  applies: (route: ApiRoute) => boolean
  codes: readonly ErrorCode[]
}

interface ApiRoute {
  method: string
  url: string
  schema: FastifySchema
  config: { scopes?: readonly string[]; access?: string }
  /** What an answer to a request without a key showed: authenticated, and counted by the rate limiter. */
  authenticated: boolean
  rateLimited: boolean
}

/** Whether the route's headers schema (a TypeBox object) names `name`. */
const takesHeader = (route: ApiRoute, name: string) =>
  Object.keys((route.schema.headers as { properties?: object } | undefined)?.properties ?? {}).includes(name)

const RULES: readonly Rule[] = [
  {
    why: 'any request: malformed HTTP, a method the path lacks, too slow, a bad Expect, too many headers',
    applies: () => true,
    codes: ['bad_request', 'method_not_allowed', 'request_timeout', 'expectation_failed', 'headers_too_large'],
  },
  {
    why: 'any route: an unforeseen failure, the database unreachable or the server stopping',
    applies: () => true,
    codes: ['internal', 'service_unavailable'],
  },
  { why: 'authenticated', applies: (route) => route.authenticated, codes: codesOfStatus(401) },
  {
    why: 'scopes and an access in its config',
    applies: (route) => (route.config.scopes?.length ?? 0) > 0 && route.config.access !== undefined,
    codes: codesOfStatus(403),
  },
  { why: 'rate limited', applies: (route) => route.rateLimited, codes: codesOfStatus(429) },
  { why: 'a query schema', applies: (route) => route.schema.querystring !== undefined, codes: ['invalid_query'] },
  {
    why: 'a body',
    applies: (route) => route.schema.body !== undefined,
    codes: ['invalid_body', ...codesOfStatus(413), ...codesOfStatus(415)],
  },
  { why: 'an id in its path', applies: (route) => route.schema.params !== undefined, codes: ['not_found'] },
  { why: 'If-Match', applies: (route) => takesHeader(route, 'if-match'), codes: ['precondition_failed'] },
  {
    why: 'Idempotency-Key',
    applies: (route) => takesHeader(route, 'idempotency-key'),
    codes: ['invalid_header', 'idempotency_key_in_use', 'idempotency_key_reused'],
  },
]

/** What only a route's own logic produces, by route: each with the code that produces it. */
const FEATURE_CODES: Record<string, readonly ErrorCode[]> = {
  // The tags named must exist (contacts/routes.ts), the email must be new (conflict) and not erased.
  // Values of the tenant's own fields must be of fields it defines (contacts/custom-fields/registry.ts).
  [`POST ${API_PREFIX}/contacts`]: ['unknown_tag', 'unknown_field', 'conflict', 'contact_erased'],
  [`PATCH ${API_PREFIX}/contacts/:id`]: ['unknown_field'],
  // A name taken, or a 101st field (custom-fields/repository.ts); a change stored values would break.
  [`POST ${API_PREFIX}/fields`]: ['field_exists', 'limit_reached'],
  [`PATCH ${API_PREFIX}/fields/:name`]: ['field_in_use'],
  // A tenant holds at most 20 webhooks (webhooks/repository.ts).
  [`POST ${API_PREFIX}/webhooks`]: ['limit_reached'],
  // A position older than the retention (events/repository.ts).
  [`GET ${API_PREFIX}/events`]: ['cursor_expired'],
  // The instance holds as many batches as BATCH_CONCURRENCY lets it (contacts/batch/routes.ts).
  // A value the contacts trigger refused whole (a field deleted while the batch ran).
  [`POST ${API_PREFIX}/contacts/batch`]: ['server_busy', 'unknown_field'],
  // Each instance runs as many searches at once as its pool lets it, two of one tenant (contacts/search/admission.ts).
  [`GET ${API_PREFIX}/contacts`]: ['server_busy'],
  [`POST ${API_PREFIX}/contacts/search`]: ['server_busy'],
}

/** The codes and statuses `route` must document: the success its response schema declares, 304 with If-None-Match. */
function mustDocument(route: ApiRoute): { codes: ErrorCode[]; statuses: string[] } {
  const fromRules = RULES.filter((rule) => rule.applies(route)).flatMap((rule) => rule.codes)
  const codes = [...new Set([...fromRules, ...(FEATURE_CODES[`${route.method} ${route.url}`] ?? [])])]
  const successes = Object.keys((route.schema.response as object | undefined) ?? {}).filter((status) =>
    /^2\d\d$/.test(status),
  )
  const notModified = takesHeader(route, 'if-none-match') ? ['304'] : []
  const failures = codes.map((code) => String(CATALOGUE[code].status))
  return { codes: codes.sort(), statuses: [...new Set([...successes, ...notModified, ...failures])].sort() }
}

interface DocumentedOperation {
  operationId: string
  responses: Record<string, { content?: Record<string, { examples?: Record<string, unknown> }> }>
}

/** The codes and statuses the document gives an operation: an error response's examples are named by code. */
function documented(operation: DocumentedOperation): { codes: string[]; statuses: string[] } {
  const responses = Object.entries(operation.responses)
  const codes = responses
    .filter(([status]) => Number(status) >= 400)
    .flatMap(([, response]) => Object.keys(response.content?.['application/json']?.examples ?? {}))
  return { codes: codes.sort(), statuses: responses.map(([status]) => status).sort() }
}

/** The differences between what must be documented and what is, both ways: empty when they are the same. */
function differences(expected: readonly string[], actual: readonly string[]): string[] {
  return [
    ...expected.filter((item) => !actual.includes(item)).map((item) => `missing ${item}`),
    ...actual.filter((item) => !expected.includes(item)).map((item) => `not produced ${item}`),
  ]
}

const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}')

t.test('each operation documents exactly the codes and statuses its route can answer with', async (t) => {
  const config = testConfig()
  const db = await createTestDatabase({ poolSize: config.DATABASE_POOL_SIZE })
  t.teardown(() => db.close())
  // The app as buildApp assembles it, with a hook first that sees every route it registers.
  const app = Fastify({ exposeHeadRoutes: false })
  t.teardown(() => app.close())
  const registered: RouteOptions[] = []
  app.addHook('onRoute', (route) => {
    registered.push(route)
  })
  await app.register(fp(serviceApp), { config, database: db.database })
  await app.ready()
  // A feature's route '/' below its prefix ends with a slash, which the server's router ignores.
  const apiRoutes = registered
    .filter(({ url }) => url.startsWith(`${API_PREFIX}/`))
    .map((route) => ({ ...route, url: route.url.replace(/(.)\/$/, '$1') }))
  t.ok(apiRoutes.length >= 13, `${apiRoutes.length} routes under ${API_PREFIX}`)

  const document = JSON.parse(await readFile('openapi.json', 'utf8'))
  const operations = document.paths as Record<string, Record<string, DocumentedOperation>>
  const { tenantId } = await createTenantWithKey(app)
  const everything = await addKey(app, tenantId, 'admin', [...SCOPES])
  const routed = new Set<string>()
  for (const route of apiRoutes) {
    const method = String(route.method)
    const name = `${method} ${route.url}`
    const operation = operations[openApiPath(route.url)]?.[method.toLowerCase()]
    if (!t.ok(operation, `${name} is documented`) || !operation) continue
    routed.add(operation.operationId)
    const url = route.url.replace(/:\w+/g, '0b9c3f1e-5d2a-4c8b-9e7f-1a2b3c4d5e6f')
    // What the route does to a request without a key, and to one whose key lacks a scope it needs.
    const anonymous = await app.inject({ method: route.method as 'GET', url })
    const scopes = (route.config?.scopes ?? []) as readonly string[]
    const lacking = await request(app, await keyWithout(app, tenantId, scopes), { method: route.method as 'GET', url })
    const lacked = lacking.json().error?.code
    t.equal(lacking.statusCode, 403, `${name}: a key without ${scopes.join(' and ')} is refused (${lacked})`)
    // A method the path lacks; and, where a read is cheap, an id that names nothing.
    const otherMethod = await app.inject({ method: 'PUT', url })
    t.equal(otherMethod.statusCode, 405, `${name}: PUT is refused with 405`)
    if (method === 'GET' && route.schema?.params) {
      const unknown = await request(app, everything, { method: 'GET', url })
      t.equal(unknown.statusCode, 404, `${name}: an id that names nothing is 404`)
    }
    const answered: ApiRoute = {
      method,
      url: route.url,
      schema: route.schema ?? {},
      config: route.config ?? {},
      authenticated: anonymous.statusCode === 401,
      rateLimited: anonymous.headers['x-ratelimit-limit'] !== undefined,
    }
    t.ok(answered.authenticated && answered.rateLimited, `${name}: authenticated and rate limited`)
    const expected = mustDocument(answered)
    const actual = documented(operation)
    t.same(differences(expected.codes, actual.codes), [], `${operation.operationId}: exactly these codes`)
    t.same(differences(expected.statuses, actual.statuses), [], `${operation.operationId}: exactly these statuses`)
  }
  const ids = Object.values(operations).flatMap((methods) => Object.values(methods).map((op) => op.operationId))
  t.same(
    ids.filter((id) => !routed.has(id)),
    [],
    'every documented operation is a route of the app',
  )
  for (const route of Object.keys(FEATURE_CODES)) {
    t.ok(
      apiRoutes.some(({ method, url }) => `${method} ${url}` === route),
      `${route}: a route`,
    )
  }
})

/** A key of the tenant (admin, so that its role allows everything) holding every scope but those of `scopes`. */
function keyWithout(app: FastifyInstance, tenantId: string, scopes: readonly string[]): Promise<string> {
  return addKey(
    app,
    tenantId,
    'admin',
    SCOPES.filter((scope) => !scopes.includes(scope)),
  )
}

t.test(
  'the comparison fails on a status or a code missing, and on one documented that cannot be produced',
  async (t) => {
    const route: ApiRoute = {
      method: 'GET',
      url: `${API_PREFIX}/things/:id`,
      schema: { params: {}, querystring: {}, response: { 200: {} } },
      config: { scopes: ['contacts:read'], access: 'read' },
      authenticated: true,
      rateLimited: true,
    }
    const expected = mustDocument(route)
    t.ok(expected.codes.includes('not_found') && expected.statuses.includes('404'), 'an id in the path: 404')
    t.same(
      differences(
        expected.statuses,
        expected.statuses.filter((status) => status !== '404'),
      ),
      ['missing 404'],
    )
    t.same(differences(expected.statuses, [...expected.statuses, '409']), ['not produced 409'])
    t.same(
      differences(
        expected.codes,
        expected.codes.filter((code) => code !== 'insufficient_role'),
      ),
      ['missing insufficient_role'],
    )
    t.notOk(mustDocument({ ...route, rateLimited: false }).statuses.includes('429'), 'not rate limited: no 429')
    t.same(
      mustDocument({ ...route, schema: { ...route.schema, body: {} } }).statuses.filter((s) => /^41[35]$/.test(s)),
      ['413', '415'],
    )
  },
)
