// What other processes announce on the database (channel.ts), heard by every instance at once: a key
// revoked or a tenant's status or limit changed (by the admin CLI) drops the cached key resolutions, instead of
// within AUTH_CACHE_TTL_MS; an erasure in a tenant (by another instance, or the CLI) makes this instance check the
// tenant's creates against its erased addresses at once, instead of within ERASURES_CACHE_MS; a change of a
// tenant's own fields drops the validators compiled for them, instead of within their CACHE_MS. Announcements sent
// while the subscription is down are lost, so each (re)start of it forgets both.
import fp from 'fastify-plugin'
import { CHANGES_CHANNEL, erasingTenantOf, fieldsTenantOf } from './channel.js'

export default fp(
  async function announcements(fastify) {
    const unsubscribe = await fastify.db.listen(
      CHANGES_CHANNEL,
      (announcement) => {
        const erasing = announcement === undefined ? null : erasingTenantOf(announcement)
        if (erasing !== null) {
          fastify.erasedEmails.erasing(erasing)
          return
        }
        const redefined = announcement === undefined ? null : fieldsTenantOf(announcement)
        if (redefined !== null) {
          fastify.customFieldRegistry.forget(redefined)
          return
        }
        fastify.apiKeys.invalidateAll()
        if (announcement === undefined) {
          fastify.erasedEmails.forgetAll()
          fastify.customFieldRegistry.forgetAll()
        }
      },
      // The log lines operators know (docs/operations.md), from when keys were all it carried.
      (state) =>
        state === 'lost'
          ? fastify.log.warn(
              'auth-change notifications: connection lost, reconnecting (cached keys and erasures expire meanwhile)',
            )
          : fastify.log.info('auth-change notifications: listening again'),
    )
    fastify.addHook('onClose', () => unsubscribe())
  },
  { name: 'announcements', dependencies: ['database', 'api-keys', 'erased-emails', 'custom-fields'] },
)
