// Resolves the Bearer API key of each request into request.auth. It does not refuse anything itself: the
// rate limiter runs next and counts refused requests per client address, then authorization refuses.
import fp from 'fastify-plugin'
import { BEARER, hashApiKey, KEY_PATTERN } from '../../api-key.js'
import { type ApiError, errors } from '../../errors.js'
import type { ResolvedKey } from '../../repositories/api-keys.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The key's tenant, role and scopes; null until resolved, and when the request is not authenticated. */
    auth: ResolvedKey | null
    /** Why the request is not authenticated, refused by the authorization hook after rate limiting. */
    authError: ApiError | null
  }
}

export default fp(
  async function authentication(fastify) {
    fastify.decorateRequest('auth', null)
    fastify.decorateRequest('authError', null)
    fastify.addHook('onRequest', async function resolveApiKey(request) {
      const header = request.headers.authorization
      if (header === undefined || header.trim() === '') {
        request.authError = errors.missingAuthorization()
        return
      }
      const key = BEARER.exec(header)?.[1]
      if (key === undefined || !KEY_PATTERN.test(key)) {
        request.authError = errors.invalidKeyFormat()
        return
      }
      const resolved = await fastify.apiKeys.resolve(hashApiKey(key))
      if (resolved === null) request.authError = errors.invalidKey()
      else if (resolved.tenantStatus === 'closed') request.authError = errors.invalidOrRevoked()
      else request.auth = resolved
    })
  },
  { name: 'authentication', dependencies: ['repositories'] },
)
