// Prometheus metrics on their own port (METRICS_HOST:METRICS_PORT, path /metrics), off the public API:
// request counts and latency per route and status, rate-limit refusals, database pool usage, process metrics.
// Off unless METRICS_ENABLED=true (two instances on one host would otherwise both claim the port); when off,
// nothing is measured and prom-client is not even loaded. When on and the port is taken, the start fails.
import { createServer, type Server } from 'node:http'
import fp from 'fastify-plugin'
import { OperatorError } from '../../config/operator-error.js'
import type { Database } from '../../db/database.js'

export interface Metrics {
  /** Counts a 429, by what was counted: the tenant or the client address. */
  countRateLimitRefusal(by: 'tenant' | 'address'): void
  /** Where the metrics server listens, once started; null when metrics are disabled. */
  address(): string | null
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

type PromClient = typeof import('prom-client')
type Registry = InstanceType<PromClient['Registry']>

/** The service's instruments in `registry`: request durations, rate-limit refusals, the pool's connections. */
function instruments(prom: PromClient, registry: Registry, db: Database) {
  prom.collectDefaultMetrics({ register: registry, prefix: 'rubrica_' })
  const requestDuration = new prom.Histogram({
    name: 'rubrica_http_request_duration_seconds',
    help: 'Time to answer requests, by method, route and status (its _count is the request count)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  })
  const rateLimitRefusals = new prom.Counter({
    name: 'rubrica_rate_limit_refusals_total',
    help: 'Requests refused with 429, by what was counted: tenant or client address',
    labelNames: ['by'] as const,
    registers: [registry],
  })
  new prom.Gauge({
    name: 'rubrica_db_pool_connections',
    help: 'PostgreSQL pool connections by state (absent on the embedded database)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = db.poolStats()
      if (!stats) return
      this.set({ state: 'total' }, stats.total)
      this.set({ state: 'idle' }, stats.idle)
      this.set({ state: 'waiting' }, stats.waiting)
    },
  })
  return { requestDuration, rateLimitRefusals }
}

/** The metrics server, listening on host:port; a port in use stops the start with one line. */
async function listen(registry: Registry, host: string, port: number): Promise<Server> {
  const server = createServer(async (req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(port, host, resolve)
  }).catch((error: NodeJS.ErrnoException) => {
    const why = error.code === 'EADDRINUSE' ? 'is already in use' : `cannot be used (${error.code})`
    throw new OperatorError(
      `metrics port ${port} on ${host} ${why}: set METRICS_PORT to a free port, or METRICS_ENABLED=false.`,
    )
  })
  return server
}

export default fp(
  async function metrics(fastify) {
    const { METRICS_ENABLED: enabled, METRICS_HOST: host, METRICS_PORT: port } = fastify.config
    if (!enabled) {
      fastify.decorate('metrics', { countRateLimitRefusal() {}, address: () => null })
      return
    }
    const prom = await import('prom-client')
    const registry = new prom.Registry()
    const { requestDuration, rateLimitRefusals } = instruments(prom, registry, fastify.db)

    // A callback hook, as request-log's: a promise per request is measurable CPU (docs/performance.md).
    fastify.addHook('onResponse', (request, reply, done) => {
      // Unknown URLs share one label, so that scanners cannot grow the series without bound.
      const route = request.routeOptions.url ?? 'unknown'
      requestDuration.observe(
        { method: request.method, route, status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      )
      done()
    })

    let server: Server | null = null
    fastify.decorate('metrics', {
      countRateLimitRefusal: (by) => rateLimitRefusals.inc({ by }),
      address() {
        const bound = server?.address()
        return bound && typeof bound === 'object' ? `http://${host}:${bound.port}/metrics` : null
      },
    })
    // When the app is ready, before the API listens: a port in use then stops the start with one line.
    fastify.addHook('onReady', async () => {
      server = await listen(registry, host, port)
      fastify.log.info({ metrics: fastify.metrics.address() }, 'metrics listening')
    })
    fastify.addHook('onClose', async () => {
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
    })
  },
  { name: 'metrics', dependencies: ['database'] },
)
