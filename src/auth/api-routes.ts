// Every route under /api/v1 must be guarded by the authorization plugin, wherever it is registered: a route
// added from another plugin with an /api/v1 prefix, or inside the /api/v1 scope before its hooks, would skip
// authentication and authorization. This plugin, registered on the root before any route, notes each such route;
// the authorization plugin marks the routes it guards; the start fails if one is left unmarked.
import type { RouteOptions } from 'fastify'
import fp from 'fastify-plugin'

export const API_PREFIX = '/api/v1'

export interface ApiRoutes {
  /** Called by the authorization plugin for each route it has checked and guards. */
  guard(route: RouteOptions): void
}

declare module 'fastify' {
  interface FastifyInstance {
    apiRoutes: ApiRoutes
  }
}

const isApiRoute = (url: string) => url === API_PREFIX || url.startsWith(`${API_PREFIX}/`)

export default fp(
  async function apiRoutes(fastify) {
    const unguarded = new Set<RouteOptions>()
    fastify.decorate('apiRoutes', { guard: (route: RouteOptions) => unguarded.delete(route) } satisfies ApiRoutes)
    // Root onRoute hooks run before the scope's, for the same route object: noted here, marked there.
    fastify.addHook('onRoute', (route) => {
      if (isApiRoute(route.url)) unguarded.add(route)
    })
    fastify.addHook('onReady', async () => {
      const names = [...unguarded].map((route) => `${route.method} ${route.url}`)
      if (names.length > 0) {
        throw new Error(
          `Routes under ${API_PREFIX} outside the authenticated scope (register them in src/api.ts, after its ` +
            `authorization plugin): ${names.join(', ')}.`,
        )
      }
    })
  },
  { name: 'api-routes' },
)
