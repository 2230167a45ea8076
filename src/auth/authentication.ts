// Resolves the Bearer API key of each request into request.auth. It refuses nothing itself, except a client
// address that has used up its budget of refused requests: a key that needs a database lookup goes through the
// rate limiter's keyLookupBudget (src/rate-limit/plugin.ts), which counts it against its address
// first. The rate limiter then counts the request (per tenant, or per address when not authenticated), and
// authorization refuses what must be refused.
import fp from 'fastify-plugin'
import { type ApiError, errors } from '../errors/catalogue.js'
import { isRepeated } from '../http-headers.js'
import { BEARER, hashApiKey, KEY_PATTERN } from './api-key.js'
import type { ResolvedKey } from './key-repository.js'

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
    fastify.addHook('onRequest', async function resolveApiKey(request, reply) {
      // Node keeps the first of repeated Authorization headers: two credentials are ambiguous, never resolved,
      // even when the first is empty.
      if (isRepeated(request.raw.rawHeaders, 'authorization')) {
        request.authError = errors.invalidKeyFormat()
        return
      }
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
      const keyHash = hashApiKey(key)
      const cached = fastify.apiKeys.cached(keyHash)
      const resolved =
        cached !== undefined
          ? cached
          : await fastify.keyLookupBudget.lookup(request, reply, () => fastify.apiKeys.resolve(keyHash))
      if (resolved === null) request.authError = errors.invalidKey()
      else if (resolved.tenantStatus === 'closed') request.authError = errors.invalidOrRevoked()
      else request.auth = resolved
    })
  },
  { name: 'authentication', dependencies: ['api-keys', 'rate-limit'] },
)
