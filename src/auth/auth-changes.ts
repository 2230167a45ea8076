// Key revocations and tenant status changes announced by the admin CLI on the database (NOTIFY): every instance
// on that database forgets its cached key resolutions at once, instead of within AUTH_CACHE_TTL_MS.
import fp from 'fastify-plugin'
import { AUTH_CHANGES_CHANNEL } from '../admin/announce.js'

export default fp(
  async function authChanges(fastify) {
    const unsubscribe = await fastify.db.listen(
      AUTH_CHANGES_CHANNEL,
      () => fastify.apiKeys.invalidateAll(),
      (state) =>
        state === 'lost'
          ? fastify.log.warn('auth-change notifications: connection lost, reconnecting (cached keys expire meanwhile)')
          : fastify.log.info('auth-change notifications: listening again'),
    )
    fastify.addHook('onClose', () => unsubscribe())
  },
  { name: 'auth-changes', dependencies: ['database', 'api-keys'] },
)
