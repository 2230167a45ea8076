// Refuses, in the order the API promises: not authenticated (401), organisation suspended, scope missing,
// role insufficient (403). Every route of the scope declares what it needs in its config, once: the scopes a key
// must all hold (one, or more where a route reaches what several guard) and whether it reads, writes or manages.
// A route without them, with an empty list or unknown ones, stops the start instead of being open to every key,
// and the OpenAPI `security` of each route is derived from the same config.
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { type ApiError, errors } from '../errors/catalogue.js'
import type { Role } from '../generated/prisma/enums.js'
import { isScope, SCOPES, type Scope } from './api-key.js'

export const ACCESSES = ['read', 'write', 'manage', 'privacy'] as const
export type Access = (typeof ACCESSES)[number]

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scopes a key must all hold to call the route (at least one; required on every /api/v1 route). */
    scopes?: readonly Scope[]
    /** What kind of access the route is: roles are granted some of them (required on every /api/v1 route). */
    access?: Access
  }
}

/**
 * admin may also manage the integration (webhooks) and answer a person's requests about their data (erasure,
 * export: `privacy`); editor may read and write; viewer may only read.
 */
export const ROLE_ACCESS: Record<Role, readonly Access[]> = {
  admin: ['read', 'write', 'manage', 'privacy'],
  editor: ['read', 'write'],
  viewer: ['read'],
}

const isAccess = (value: unknown): value is Access => (ACCESSES as readonly unknown[]).includes(value)
const areScopes = (value: unknown): value is readonly Scope[] =>
  Array.isArray(value) && value.length > 0 && value.every((scope) => typeof scope === 'string' && isScope(scope))

export default fp(
  async function authorization(fastify) {
    fastify.addHook('onRoute', function requireAccessRules(route) {
      const { scopes, access } = route.config ?? {}
      if (!areScopes(scopes) || !isAccess(access)) {
        throw new Error(
          `Route ${route.method} ${route.url} must declare config.scopes (one or more of ${SCOPES.join(', ')}) ` +
            `and config.access (${ACCESSES.join(', ')}); it has scopes ${JSON.stringify(scopes)} and access ${String(access)}.`,
        )
      }
      // One requirement object listing every scope: in OpenAPI, all of them are needed together.
      route.schema = { ...route.schema, security: [{ apiKey: [...scopes] }] }
      fastify.apiRoutes.guard(route)
    })

    // preParsing: after authentication and rate limiting, before the body is read.
    // Callback style: no promise per request for a check that never waits.
    fastify.addHook('preParsing', function authorize(request, _reply, payload, done) {
      done(refusalOf(request), payload)
    })
  },
  { name: 'authorization', dependencies: ['api-routes', 'authentication', 'rate-limit'] },
)

/** The tenant a route runs for: the authorization hook has refused every request without a resolved key. */
export function tenantOf(request: FastifyRequest): string {
  if (request.auth === null) throw errors.missingAuthorization()
  return request.auth.tenantId
}

/** Why the request may not run its route, or undefined when it may. */
function refusalOf(request: FastifyRequest): ApiError | undefined {
  if (request.authError) return request.authError
  const auth = request.auth
  if (auth === null) return errors.missingAuthorization()
  if (auth.tenantStatus === 'suspended') return errors.tenantSuspended()
  const { scopes, access } = request.routeOptions.config
  // Both are present: requireAccessRules refused every route without them (and an empty list).
  if (scopes === undefined || scopes.length === 0 || !scopes.every((scope) => auth.scopes.includes(scope))) {
    return errors.insufficientScope(scopes ?? [], auth.scopes)
  }
  if (access === undefined || !ROLE_ACCESS[auth.role].includes(access)) return errors.insufficientRole(auth.role)
  return undefined
}
