// Refuses, in the order the API promises: not authenticated (401), organisation suspended, scope missing,
// role insufficient (403). Each route declares what it needs in its config.
import fp from 'fastify-plugin'
import type { Scope } from '../../api-key.js'
import { errors } from '../../errors.js'
import type { Role } from '../../generated/prisma/enums.js'

export type Access = 'read' | 'write'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key must hold to call the route. */
    scope?: Scope
    /** Whether the route reads or writes: roles are granted one or both. */
    access?: Access
  }
}

/** admin and editor may read and write; viewer may only read. */
export const ROLE_ACCESS: Record<Role, readonly Access[]> = {
  admin: ['read', 'write'],
  editor: ['read', 'write'],
  viewer: ['read'],
}

export default fp(
  async function authorization(fastify) {
    fastify.addHook('onRequest', async function authorize(request) {
      if (request.authError) throw request.authError
      const auth = request.auth
      if (auth === null) throw errors.missingAuthorization()
      if (auth.tenantStatus === 'suspended') throw errors.tenantSuspended()
      const { scope, access } = request.routeOptions.config
      if (scope !== undefined && !auth.scopes.includes(scope)) throw errors.insufficientScope(scope, auth.scopes)
      if (access !== undefined && !ROLE_ACCESS[auth.role].includes(access)) throw errors.insufficientRole(auth.role)
    })
  },
  { name: 'authorization', dependencies: ['authentication'] },
)
