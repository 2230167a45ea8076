// Builds the rubrica application: serviceApp is the app as a Fastify plugin, buildApp wraps it in a server with
// rubrica's server options. src/server.ts, the tests, the fault tests and scripts/openapi-write.ts all call
// buildApp, so there is one assembly of the app.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, Server } from 'node:http'
import Fastify, { type FastifyHttpOptions, type FastifyInstance, type FastifyPluginAsync, LogController } from 'fastify'
import fp from 'fastify-plugin'
import announcements from './announcements/plugin.js'
import apiV1 from './api.js'
import { API_PREFIX } from './api-prefix.js'
import apiRoutes from './auth/api-routes.js'
import { apiKeysRepository } from './auth/key-repository.js'
import { type Config, trustProxy } from './config/config.js'
import { secretKeyPlugin } from './config/secret-key.js'
import type { Database } from './db/database.js'
import database from './db/plugin.js'
import demo from './demo/plugin.js'
import errorEnvelope from './errors/envelope.js'
import protocolErrors, { clientErrorHandler, frameworkErrors } from './errors/protocol-errors.js'
import { errorDetailsPlugin, errorSchemasPlugin } from './errors/schemas.js'
import { type FeatureOptions, features } from './features.js'
import health from './health/routes.js'
import { parseQuery } from './http-query.js'
import idempotency from './idempotency/plugin.js'
import openapiDocument from './openapi/routes.js'
import openapiSections from './openapi/sections.js'
import jsonBody from './plugins/app/json-body.js'
import metrics from './plugins/app/metrics.js'
import redis from './plugins/app/redis.js'
import requestLog from './plugins/app/request-log.js'
import responseHeaders from './plugins/app/response-headers.js'
import shutdown from './plugins/app/shutdown.js'
import validation from './plugins/app/validation.js'
import sensible from './plugins/external/sensible.js'
import swagger from './plugins/external/swagger.js'
import swaggerUi from './plugins/external/swagger-ui.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

export interface AppOptions {
  config: Config
  /** An open, migrated database to use instead of opening one from the configuration (tests). */
  database?: Database
  /** What every feature's plugin receives (tests stub how webhook hosts resolve: only loopback is reached). */
  features?: FeatureOptions
}

/**
 * The app, assembled in layers: the guard that notes every route under /api/v1; the core (@fastify/sensible,
 * validation and parsing, response headers, logs, the database and what lives on it, what features add to the
 * document and the error envelope); the features, each one plugin that adds its schemas, tags, repository and
 * routes; Redis, metrics and errors; the OpenAPI document; then the routes: health, the document's, and the
 * /api/v1 scope with the routes the features added. Plugins declare their dependencies, so a layer out of order
 * stops the start.
 */
export default async function serviceApp(fastify: FastifyInstance, options: AppOptions) {
  fastify.decorate('config', options.config)
  const registerAll = async (plugins: readonly FastifyPluginAsync[]) => {
    for (const plugin of plugins) await fastify.register(plugin)
  }
  // First, so that it sees every route: it stops the start if one under /api/v1 escapes authorization.
  await fastify.register(apiRoutes)
  await fastify.register(sensible)
  await registerAll([validation, jsonBody, responseHeaders, shutdown, requestLog])
  await fastify.register(database, { database: options.database })
  await registerAll([secretKeyPlugin, apiKeysRepository, idempotency, demo, openapiSections, errorDetailsPlugin])
  // The features (src/features.ts), in the order of the document's tags, schemas and paths.
  for (const feature of features) await fastify.register(feature, options.features ?? {})
  await registerAll([announcements, redis, metrics])
  await registerAll([errorSchemasPlugin, errorEnvelope, protocolErrors])
  // Registered before the routes, so that it sees them all.
  await registerAll([swagger, swaggerUi])
  await registerAll([health, openapiDocument])
  await fastify.register(apiV1, { prefix: API_PREFIX })
}

export interface BuildOptions {
  /** An open, migrated database (tests and tools); otherwise the configuration's database is opened. */
  database?: Database
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: { write(line: string): void }
  /** What every feature's plugin receives (tests: stubs of how webhook hosts resolve). */
  features?: FeatureOptions
}

/** The app in a server with rubrica's options, registered but not yet ready nor listening. */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(config, options.logStream))
  // Node keeps only the first 1,000 headers by default and drops the rest unseen, a second Authorization among
  // them; the header block's size (16 KiB) still bounds how many there can be.
  app.server.maxHeadersCount = 0
  await app.register(fp(serviceApp), { config, database: options.database, features: options.features })
  return app
}

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/
/** Something shaped like an API key, anywhere in a value. */
const KEY_LIKE = /svc_[0-9a-f]{48}/i

/**
 * The caller's X-Request-Id when it is a plain token (it ends up in logs) and holds nothing shaped like an API
 * key (a caller's mistake must not put a key in the logs); otherwise a new UUID.
 */
function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) && !KEY_LIKE.test(given) ? given : randomUUID()
}

function serverOptions(config: Config, logStream?: { write(line: string): void }): FastifyHttpOptions<Server> {
  return {
    logger: {
      level: config.LOG_LEVEL,
      ...(logStream && { stream: logStream }),
      // Keys are secrets: should a header ever be logged, the Authorization one is censored.
      redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
      // pino-pretty is a development dependency: pretty lines only in development, on a terminal.
      ...(!logStream && config.NODE_ENV === 'development' && process.stdout.isTTY
        ? { transport: { target: 'pino-pretty' } }
        : {}),
    },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.BODY_LIMIT,
    requestIdHeader: false,
    genReqId: requestId,
    trustProxy: trustProxy(config),
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    // Node checks the headers and request timeouts only every connectionsCheckingInterval (30 s by default):
    // checking every second cuts a slowloris connection off close to HEADERS_TIMEOUT_MS.
    // Host is checked by the protocol-errors plugin, so that its absence gets the envelope, not Node's bare 400.
    http: { headersTimeout: config.HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000, requireHostHeader: false },
    frameworkErrors,
    clientErrorHandler,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    // An id of any length is routed (and answered 404 after authentication and counting, like any other id that
    // names no contact): a URL is bounded by the header block's 16 KiB anyway.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16_384, querystringParser: parseQuery },
    // HEAD is not part of the API: it is refused with 405 like any other method a path lacks (only the health
    // probes answer it, for load balancers that probe with HEAD).
    exposeHeadRoutes: false,
    // Replaced by the envelope-shaped 503 of the shutdown plugin.
    return503OnClosing: false,
    // A first start creates and migrates the embedded database, which can take longer than Fastify's 10 s default.
    pluginTimeout: 120_000,
  }
}
