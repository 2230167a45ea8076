// Starts rubrica: reads the configuration, builds the app, listens, and closes gracefully on signals.
import closeWithGrace from 'close-with-grace'
import Fastify from 'fastify'
import fp from 'fastify-plugin'
import serviceApp, { serverOptions } from './app.js'
import { loadConfig } from './config.js'

let config: ReturnType<typeof loadConfig>
try {
  config = loadConfig()
} catch (error) {
  console.error(`Configurazione non valida: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
}

const app = Fastify(serverOptions(config))
await app.register(fp(serviceApp), { config })

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
    `\nDatabase vuoto: creata l'organizzazione demo (${app.demo.tenantId}).\n` +
      `Chiave API (mostrata solo ora): ${app.demo.key}\n\n` +
      `Prova:\n  curl -H 'Authorization: Bearer ${app.demo.key}' ${address}/api/v1/contacts\n\n`,
  )
}
