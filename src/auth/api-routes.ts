// Every route under /api/v1 must be guarded by the authorization plugin, wherever it is registered: a route
// added from another plugin with an /api/v1 prefix, or inside the /api/v1 scope before its hooks, would skip
// authentication and authorization. This plugin, registered on the root before any route, notes each such route;
// the authorization plugin marks the routes it guards; the start fails if one is left unmarked. Features hand
// their routes here too (add), and src/api.ts registers them inside the scope, after its guards.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { API_PREFIX } from '../api-prefix.js'

/** A feature's routes and where they go below the API prefix. */
export interface FeatureRoutes {
  routes: FastifyPluginAsyncTypebox
  prefix: string
}

export interface ApiRoutes {
  /** Called by the authorization plugin for each route it has checked and guards. */
  guard(route: RouteOptions): void
  /** A feature's routes, to be registered in the /api/v1 scope under `prefix` (`/contacts`). */
  add(routes: FastifyPluginAsyncTypebox, options: { prefix: string }): void
  /**
   * The routes added, those under the same first prefix segment together, in the order that segment first came:
   * the document lists paths as routes are registered, so a feature adding to another's prefix lands beside it.
   */
  added(): FeatureRoutes[]
}

declare module 'fastify' {
  interface FastifyInstance {
    apiRoutes: ApiRoutes
  }
}

const firstSegment = (prefix: string) => prefix.split('/')[1] ?? ''

const isApiRoute = (url: string) => url === API_PREFIX || url.startsWith(`${API_PREFIX}/`)

export default fp(
  async function apiRoutes(fastify) {
    const unguarded = new Set<RouteOptions>()
    const features: FeatureRoutes[] = []
    fastify.decorate('apiRoutes', {
      guard: (route: RouteOptions) => unguarded.delete(route),
      add: (routes, { prefix }) => {
        features.push({ routes, prefix })
      },
      added: () => {
        const segments = [...new Set(features.map(({ prefix }) => firstSegment(prefix)))]
        return segments.flatMap((segment) => features.filter(({ prefix }) => firstSegment(prefix) === segment))
      },
    } satisfies ApiRoutes)
    // Root onRoute hooks run before the scope's, for the same route object: noted here, marked there.
    fastify.addHook('onRoute', (route) => {
      if (isApiRoute(route.url)) unguarded.add(route)
    })
    fastify.addHook('onReady', async () => {
      const names = [...unguarded].map((route) => `${route.method} ${route.url}`)
      if (names.length > 0) {
        throw new Error(
          `Routes under ${API_PREFIX} outside the authenticated scope (add them with ` +
            `fastify.apiRoutes.add, which src/api.ts registers after its authorization plugin): ${names.join(', ')}.`,
        )
      }
    })
  },
  { name: 'api-routes' },
)
