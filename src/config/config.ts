// Configuration from environment variables, validated once at start: a wrong value stops the start with a
// message that names the variable. Every variable is documented in docs/operations.md (a test checks the table).
import { isIP } from 'node:net'
import { type Static, Type } from '@sinclair/typebox'
import { envSchema } from 'env-schema'
import { StringEnum } from '../schemas/string-enum.js'
import { OperatorError } from './operator-error.js'

export const ConfigSchema = Type.Object({
  NODE_ENV: StringEnum(['development', 'production', 'test'], { default: 'development' }),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  LOG_LEVEL: StringEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  /** postgres://… selects PostgreSQL; unset selects the embedded PGlite database in DATA_DIR. */
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_SIZE: Type.Integer({ default: 4, minimum: 1, maximum: 100 }),
  DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  MIGRATE_ON_START: Type.Boolean({ default: false }),
  /** Seed the demo tenant and key when the database has no tenant at all. */
  DEMO_ON_EMPTY: Type.Boolean({ default: true }),
  RATE_LIMIT_MAX: Type.Integer({ default: 60, minimum: 1 }),
  /** Length of the rate-limit window in milliseconds. */
  RATE_LIMIT_WINDOW: Type.Integer({ default: 60000, minimum: 1000 }),
  /** How long a resolved API key is trusted before it is read again (revocations take effect within it). */
  AUTH_CACHE_TTL_MS: Type.Integer({ default: 5000, minimum: 0, maximum: 5000 }),
  BODY_LIMIT: Type.Integer({ default: 65536, minimum: 1024 }),
  /** How long a search's count (`count: true`) may take; past it the page is answered without `total`. */
  SEARCH_COUNT_TIMEOUT_MS: Type.Integer({ default: 1000, minimum: 10, maximum: 60_000 }),
  /**
   * Batch imports an instance writes at once (on PostgreSQL at most DATABASE_POOL_SIZE - 1), and how many of the
   * largest it holds at once, received or waiting: their bodies may total this many times the batch body limit.
   */
  BATCH_CONCURRENCY: Type.Integer({ default: 2, minimum: 1, maximum: 64 }),
  /** Where clients reach the service (https://…): the OpenAPI document's server. Unset: no server is named. */
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$' })),
  /** redis://… shares the rate-limit counters between instances; unset: each process counts on its own. */
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** Prometheus metrics are served on this separate port (0: any free port), on METRICS_HOST. */
  METRICS_PORT: Type.Integer({ default: 9464, minimum: 0, maximum: 65535 }),
  METRICS_HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  METRICS_ENABLED: Type.Boolean({ default: false }),
  /**
   * Which proxies to trust for the client address (X-Forwarded-For): "false", "true", a hop count, or a
   * comma-separated list of addresses and CIDR ranges.
   */
  TRUST_PROXY: Type.String({ default: 'false', pattern: '^(true|false|\\d+|[0-9a-fA-F.:/, ]+)$' }),
  /** Whole request must arrive within this time (slow clients are cut off). */
  REQUEST_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 1000 }),
  /** Request headers must arrive within this time (slowloris). */
  HEADERS_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 1000 }),
  /** Idle keep-alive connections are closed after this time; keep it above the load balancer's. */
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 72_000, minimum: 1000 }),
  /** On SIGTERM/SIGINT, in-flight requests get this long to finish before the process exits anyway. */
  SHUTDOWN_GRACE_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  /** Events are kept this many days after they occurred, then purged (a position before them is 410). */
  EVENTS_RETENTION_DAYS: Type.Integer({ default: 30, minimum: 1, maximum: 3650 }),
  /** This instance delivers webhooks (every instance takes part unless this is false). */
  WEBHOOKS_ENABLED: Type.Boolean({ default: true }),
  /** A delivery attempt that has no answer within this time fails (and is retried). */
  WEBHOOKS_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100, maximum: 120_000 }),
  /** Seconds to wait before each retry of a failed delivery; after the last, it is given up. */
  WEBHOOKS_RETRY_SCHEDULE: Type.String({
    default: '5,300,1800,7200,18000,36000,36000',
    pattern: '^[0-9]{1,6}(,[0-9]{1,6}){0,19}$',
  }),
  /** Development and tests only: webhooks may use http:// and any address, loopback and private ones included. */
  WEBHOOKS_ALLOW_INSECURE: Type.Boolean({ default: false }),
  /** 32 random bytes in base64 (openssl rand -base64 32): seals webhook secrets. A secret: never logged. */
  WEBHOOKS_SECRET_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' })),
  /** Fail a database connection attempt after this time, so that requests get a 503 instead of hanging. */
  DATABASE_CONNECT_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 100 }),
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends OperatorError {}

/** What a variable accepts, in words, from its schema (patterns say it themselves in ALLOWED_TEXT). */
function allowedValues(name: string): string {
  const schema = (ConfigSchema.properties as Record<string, Record<string, unknown>>)[name] ?? {}
  if (ALLOWED_TEXT[name]) return ALLOWED_TEXT[name]
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(', ')}`
  if (schema.type === 'boolean') return 'true or false'
  if (schema.type === 'integer') {
    const { minimum, maximum } = schema
    return maximum === undefined
      ? `a whole number of at least ${minimum}`
      : `a whole number from ${minimum} to ${maximum}`
  }
  return 'a non-empty value'
}

const ALLOWED_TEXT: Record<string, string> = {
  DATABASE_URL: 'a postgres:// or postgresql:// URL (unset: the embedded database in DATA_DIR)',
  REDIS_URL: 'a redis:// or rediss:// URL (unset: rate limits per instance)',
  PUBLIC_URL: 'an http:// or https:// URL without query or fragment, e.g. https://api.example.it',
  TRUST_PROXY: 'true, false, a number of proxies, or a comma-separated list of addresses and CIDR ranges',
  WEBHOOKS_RETRY_SCHEDULE: 'whole numbers of seconds separated by commas, e.g. 5,300,1800 (at most 20)',
  WEBHOOKS_SECRET_KEY: '32 bytes in base64, as `openssl rand -base64 32` prints them',
}

/**
 * A value with anything that may be a password masked (`user:secret@host`, even in a value that is not a
 * well-formed URL): values are echoed in error messages, and URLs carry passwords.
 */
export function withoutPassword(value: string): string {
  return value.replace(/:[^:@/\s]*@/g, ':***@')
}

/** Variables whose value is a secret: an error names them, never echoes them. */
const SECRETS = new Set(['WEBHOOKS_SECRET_KEY'])

const invalid = (name: string, value: string | undefined) =>
  new ConfigError(
    `${name}: ${SECRETS.has(name) ? 'the value given' : JSON.stringify(withoutPassword(value ?? ''))} is not valid; ` +
      `expected ${allowedValues(name)}.`,
  )

/** An IPv4 or IPv6 address, optionally with a CIDR prefix length that fits it. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, extra] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || extra !== undefined) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}

/** What the schema cannot say: numbers spelled as plain digits, URLs that parse, proxies that are addresses. */
function checkSpelling(env: NodeJS.ProcessEnv): void {
  for (const [name, schema] of Object.entries(ConfigSchema.properties as Record<string, { type?: string }>)) {
    const value = env[name]
    if (value === undefined) continue
    // Ajv's coercion would read 3e4 or 0x10 as numbers.
    if (schema.type === 'integer' && !/^\d+$/.test(value)) throw invalid(name, value)
    if (name.endsWith('_URL') && !URL.canParse(value)) throw invalid(name, value)
  }
  const proxies = env.TRUST_PROXY?.trim()
  if (proxies && !/^(true|false|\d+)$/.test(proxies)) {
    const entries = proxies.split(',').map((entry) => entry.trim())
    if (!entries.every(isAddressOrRange)) throw invalid('TRUST_PROXY', env.TRUST_PROXY)
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  let config: Config
  try {
    // Only the given environment is read (env: false), so tests and the CLI can hand in their own.
    config = envSchema<Config>({ schema: ConfigSchema, data: env, env: false, dotenv: false })
  } catch (error) {
    const first = (error as { errors?: { instancePath?: string }[] }).errors?.[0]
    const name = first?.instancePath?.replace(/^\//, '')
    if (!name) throw error
    throw invalid(name, env[name])
  }
  checkSpelling(env)
  if (config.METRICS_ENABLED && config.METRICS_PORT !== 0 && config.METRICS_PORT === config.PORT) {
    throw new ConfigError(`METRICS_PORT: ${config.METRICS_PORT} is PORT as well; expected another port for metrics.`)
  }
  return config
}

/** TRUST_PROXY as Fastify's trustProxy option. */
export function trustProxy(
  config: Pick<Config, 'TRUST_PROXY'>,
): boolean | string[] | ((address: string, hop: number) => boolean) {
  const value = config.TRUST_PROXY.trim()
  if (value === 'true' || value === 'false') return value === 'true'
  if (/^\d+$/.test(value)) {
    // Trust that many proxies in front of the service: the client is the address the outermost one saw.
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
}
