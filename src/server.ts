// Starts rubrica: reads the configuration, builds the app, listens, and closes gracefully on signals.
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { type Config, loadConfig } from './config.js'

let config: Config
try {
  config = loadConfig()
} catch (error) {
  console.error(`Invalid configuration: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
}

const app = await buildApp(config)

closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'closing after an unexpected error')
  else app.log.info({ signal }, 'closing')
  await app.close()
})

try {
  await app.listen({ host: config.HOST, port: config.PORT })
} catch (error) {
  app.log.fatal({ err: error }, 'could not start')
  process.exit(1)
}

if (app.demo) {
  const bound = app.server.address()
  const port = typeof bound === 'object' && bound !== null ? bound.port : config.PORT
  const address = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`
  // Printed once, on the start that created the demo: the key is not stored anywhere in clear.
  process.stdout.write(
    `\nEmpty database: created the demo organisation (${app.demo.tenantId}).\n` +
      `API key (shown only now): ${app.demo.key}\n\n` +
      `Try it:\n  curl -H 'Authorization: Bearer ${app.demo.key}' ${address}/api/v1/contacts\n\n`,
  )
}
