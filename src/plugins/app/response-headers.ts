// Responses hold personal data: no intermediary or browser may store them, and browsers must not guess their
// type. Only the reference page's static files may be cached.
import fp from 'fastify-plugin'

export default fp(
  async function responseHeaders(fastify) {
    fastify.addHook('onRequest', (request, reply, done) => {
      reply.header('x-content-type-options', 'nosniff')
      if (!request.url.startsWith('/docs/static/')) reply.cacheControl('no-store')
      done()
    })
  },
  { name: 'response-headers', dependencies: ['@fastify/sensible'] },
)
