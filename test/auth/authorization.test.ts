// Routes fail closed: a route of the authorized scope without known scopes and access stops the start, the
// OpenAPI security of every operation is derived from its config, and a wrong registration order fails at boot.
import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import t from 'tap'
import apiRoutes from '../../src/auth/api-routes.ts'
import authorization from '../../src/auth/authorization.ts'
import { build } from '../helper.ts'

/** Stand-ins for the plugins authorization depends on: only their names matter to the dependency check. */
const authentication = fp(async () => {}, { name: 'authentication' })
const rateLimit = fp(async () => {}, { name: 'rate-limit' })

/** An app whose routes, added by `routes` after authorization, are checked as /api/v1's are. */
function scopeWith(routes: (app: FastifyInstance) => void) {
  const app = Fastify()
  app.register(apiRoutes)
  app.register(authentication)
  app.register(rateLimit)
  app.register(authorization)
  app.register(async (scope) => routes(scope))
  return app
}

t.test('a route without scopes and an access stops the start', async (t) => {
  const app = scopeWith((app) => app.get('/open', async () => 'anyone'))
  await t.rejects(
    async () => app.ready().then(() => undefined),
    /Route GET \/open must declare config\.scopes .* and config\.access/,
  )
})

t.test('an unknown scope or access stops the start', async (t) => {
  for (const config of [
    { scopes: ['contacts:delete'], access: 'write' },
    { scopes: ['contacts:read', 'contacts:delete'], access: 'read' },
    { scopes: ['contacts:read'], access: 'admin' },
    { scopes: ['contacts:read'] },
    { access: 'read' },
    // An empty list would let every key through; a bare string is not a list (nor is the old `scope`).
    { scopes: [], access: 'read' },
    { scopes: 'contacts:read', access: 'read' },
    { scope: 'contacts:read', access: 'read' },
  ]) {
    const app = scopeWith((app) => app.post('/x', { config: config as object }, async () => 'x'))
    await t.rejects(
      async () => app.ready().then(() => undefined),
      /must declare config\.scopes/,
      JSON.stringify(config),
    )
  }
})

t.test('a declared route starts, and its OpenAPI security is its scope', async (t) => {
  const app = scopeWith((app) =>
    app.get('/ok', { config: { scopes: ['contacts:read'], access: 'read' } }, async (request) => request.routeOptions),
  )
  await t.resolves(async () => app.ready().then(() => undefined))
  t.teardown(() => app.close())
})

t.test('authorization registered before rate limiting stops the start', async (t) => {
  const app = Fastify()
  app.register(apiRoutes)
  app.register(authentication)
  app.register(authorization)
  app.register(rateLimit)
  await t.rejects(async () => app.ready().then(() => undefined), /rate-limit/)
})

t.test('every operation of the document requires the scopes its route declares, all of them', async (t) => {
  const { app } = await build(t)
  const document = app.swagger() as { paths: Record<string, Record<string, { security?: unknown }>> }
  const contactEvents = ['webhooks:manage', 'contacts:read']
  const wanted: Record<string, string[]> = {
    'get /api/v1/contacts': ['contacts:read'],
    'get /api/v1/contacts/{id}': ['contacts:read'],
    'post /api/v1/contacts': ['contacts:write'],
    'post /api/v1/contacts/batch': ['contacts:write'],
    'post /api/v1/contacts/search': ['contacts:read'],
    'patch /api/v1/contacts/{id}': ['contacts:write'],
    'delete /api/v1/contacts/{id}': ['contacts:erase'],
    'get /api/v1/contacts/{id}/export': ['contacts:read'],
    'get /api/v1/events': ['contacts:read'],
    'post /api/v1/webhooks': contactEvents,
    'get /api/v1/webhooks': ['webhooks:manage'],
    'get /api/v1/webhooks/{id}': ['webhooks:manage'],
    'delete /api/v1/webhooks/{id}': ['webhooks:manage'],
    'get /api/v1/webhooks/{id}/deliveries': contactEvents,
    'post /api/v1/fields': ['fields:manage'],
    'get /api/v1/fields': ['contacts:read'],
    'get /api/v1/fields/{name}': ['contacts:read'],
    'patch /api/v1/fields/{name}': ['fields:manage'],
    'delete /api/v1/fields/{name}': ['fields:manage'],
    'get /api/v1/openapi.json': ['contacts:read'],
  }
  const found: Record<string, unknown> = {}
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) found[`${method} ${path}`] = operation.security
  }
  // One requirement object listing every scope: in OpenAPI, all of them are needed together.
  t.same(found, Object.fromEntries(Object.entries(wanted).map(([op, scopes]) => [op, [{ apiKey: scopes }]])))
})

t.test('a route under /api/v1 that authorization does not guard stops the start', async (t) => {
  const read = { scopes: ['contacts:read'], access: 'read' } as const
  const guardedScope = async (scope: FastifyInstance) => {
    await scope.register(authentication)
    await scope.register(rateLimit)
    await scope.register(authorization)
    scope.get('/contacts', { config: read }, async () => 'guarded')
  }
  const outside = Fastify()
  outside.register(apiRoutes)
  outside.register(guardedScope, { prefix: '/api/v1' })
  // Found by an outsider: registered from another plugin with the /api/v1 prefix, a route skipped every check.
  outside.register(async (other) => other.get('/tags', { config: read }, async () => 'open'), { prefix: '/api/v1' })
  await t.rejects(
    async () => outside.ready().then(() => undefined),
    /Routes under \/api\/v1 outside the authenticated scope.*GET \/api\/v1\/tags/,
  )

  const early = Fastify()
  early.register(apiRoutes)
  early.register(
    async (scope) => {
      scope.get('/early', { config: read }, async () => 'before the hooks')
      await guardedScope(scope)
    },
    { prefix: '/api/v1' },
  )
  await t.rejects(
    async () => early.ready().then(() => undefined),
    /GET \/api\/v1\/early/,
    'a route of the scope added before authorization',
  )

  const fine = Fastify()
  fine.register(apiRoutes)
  fine.register(guardedScope, { prefix: '/api/v1' })
  await fine.ready()
  t.ok(fine.hasRoute({ method: 'GET', url: '/api/v1/contacts' }), 'routes after authorization start')
  await Promise.all([outside.close(), early.close(), fine.close()])
})
