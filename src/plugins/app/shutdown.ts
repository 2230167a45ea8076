// While the server shuts down, requests already being handled finish; new ones get a 503 in the usual envelope
// (with Connection: close), so that a load balancer retries them elsewhere. The error is answered by the
// error-envelope plugin, whichever order the two are registered in: handlers are chosen per request.
import fp from 'fastify-plugin'
import { errors } from '../../errors/catalogue.js'

export default fp(
  async function shutdown(fastify) {
    let shuttingDown = false
    fastify.addHook('preClose', async () => {
      shuttingDown = true
    })
    fastify.addHook('onRequest', (_request, _reply, done) => {
      done(shuttingDown ? errors.serviceUnavailable() : undefined)
    })
  },
  { name: 'shutdown' },
)
