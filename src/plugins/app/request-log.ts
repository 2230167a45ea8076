// Every response carries its request id, and every request leaves one log line with what operators search by.
// Headers are never logged, so neither is any key.
import fp from 'fastify-plugin'

/** The levels at which the `info` request line is written. */
const LOGS_INFO = new Set(['trace', 'debug', 'info'])

export default fp(
  async function requestLog(fastify) {
    // Callback-style hooks: on every request, a promise per hook is measurable CPU (docs/performance.md).
    fastify.addHook('onSend', (request, reply, payload, done) => {
      reply.header('x-request-id', request.id)
      done(null, payload)
    })
    fastify.addHook('onResponse', (request, reply, done) => {
      if (!LOGS_INFO.has(request.log.level)) return done()
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
      done()
    })
  },
  { name: 'request-log' },
)
