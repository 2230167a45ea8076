// Builds the rubrica application as a Fastify plugin; src/server.ts starts it, tests build it in process.
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'
import type { Database } from './db/database.js'
import database from './plugins/app/database.js'
import errorEnvelope from './plugins/app/error-envelope.js'
import validation from './plugins/app/validation.js'
import sensible from './plugins/external/sensible.js'
import swagger from './plugins/external/swagger.js'
import swaggerUi from './plugins/external/swagger-ui.js'
import apiV1 from './routes/api/v1/index.js'
import openapiDocument from './routes/openapi.js'
import { sharedSchemas } from './schemas/index.js'

export interface AppOptions {
  config: Config
  /** An open, migrated database to use instead of opening one from the configuration (tests). */
  database?: Database
}

export default async function serviceApp(fastify: FastifyInstance, options: AppOptions) {
  fastify.decorate('config', options.config)
  await fastify.register(sensible)
  await fastify.register(validation)
  await fastify.register(errorEnvelope)
  for (const schema of sharedSchemas) fastify.addSchema(schema)
  fastify.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  await fastify.register(database, { database: options.database })
  // Registered before the routes, so that it sees them all.
  await fastify.register(swagger)
  await fastify.register(swaggerUi)
  await fastify.register(openapiDocument)
  await fastify.register(apiV1, { prefix: '/api/v1' })
}

/** Server-level options shared by src/server.ts and the tests' build() helper. */
export function serverOptions(config: Config, logStream?: { write(line: string): void }): FastifyServerOptions {
  return {
    logger: {
      level: config.LOG_LEVEL,
      ...(logStream && { stream: logStream }),
      // Keys are secrets: the Authorization header never reaches a log line.
      redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
      ...(config.NODE_ENV === 'development' && process.stdout.isTTY ? { transport: { target: 'pino-pretty' } } : {}),
    },
    bodyLimit: config.BODY_LIMIT,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    routerOptions: { ignoreTrailingSlash: true },
  }
}
