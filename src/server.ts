// Starts rubrica: reads the configuration, builds the app, listens, makes the first start's demo organisation,
// and closes gracefully on signals. A start that fails prints one line saying why and what to do, and exits 1.
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { type Config, loadConfig } from './config/config.js'
import { describeStartupFailure } from './config/startup-failure.js'

let config: Config | undefined
let app: FastifyInstance | undefined
try {
  config = loadConfig()
  app = await buildApp(config)
  const running = app
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err) running.log.error({ err }, 'closing after an unexpected error')
    else running.log.info({ signal }, 'closing')
    await running.close()
  })
  await app.listen({ host: config.HOST, port: config.PORT })
  await introduce(app, config)
} catch (error) {
  process.stderr.write(`rubrica: could not start: ${describeStartupFailure(error, config)}\n`)
  // Releases what the start took (the embedded database's lock, connections) before exiting.
  await app?.close().catch(() => {})
  process.exit(1)
}

/** The first start's demo key, printed once; or, later, how to make a key when that one was never used. */
async function introduce(app: FastifyInstance, config: Config): Promise<void> {
  const bound = app.server.address()
  const port = typeof bound === 'object' && bound !== null ? bound.port : config.PORT
  const address = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`
  const demo = config.DEMO_ON_EMPTY ? await app.demo.createIfEmpty() : null
  if (demo) {
    // The key is not stored anywhere in clear: this is the only time it is shown.
    process.stdout.write(
      `\nEmpty database: created the demo organisation (${demo.tenantId}).\n` +
        `API key (shown only now): ${demo.key}\n\n` +
        `Try it:\n  curl -H 'Authorization: Bearer ${demo.key}' ${address}/api/v1/contacts\n\n`,
    )
    return
  }
  const unused = await app.demo.unusedKey()
  if (unused) {
    const stopped =
      app.db.kind === 'pglite' ? ' (with the server stopped: the embedded database admits one process)' : ''
    process.stdout.write(
      `The demo key (…${unused.hint}) was shown on an earlier start and has never been used. If it is lost, make ` +
        `another${stopped}: npx rubrica key create --tenant ${unused.tenantId} --role admin ` +
        '--scopes contacts:read,contacts:write\n',
    )
  }
}
