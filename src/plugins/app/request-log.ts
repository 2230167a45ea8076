// Every response carries its request id, and every request leaves one log line with what operators search by.
// Headers are never logged, so neither is any key.
import fp from 'fastify-plugin'

export default fp(
  async function requestLog(fastify) {
    fastify.addHook('onSend', async (request, reply) => {
      reply.header('x-request-id', request.id)
    })
    fastify.addHook('onResponse', async (request, reply) => {
      request.log.info(
        {
          method: request.method,
          route: request.routeOptions.url ?? null,
          status: reply.statusCode,
          durationMs: Math.round(reply.elapsedTime * 100) / 100,
          tenantId: request.auth?.tenantId ?? null,
        },
        'request',
      )
    })
  },
  { name: 'request-log' },
)
