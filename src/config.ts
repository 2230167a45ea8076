// Configuration from environment variables, validated once at start: a wrong value stops the start with a
// message that names the variable. Every variable is documented in the README.
import { type Static, Type } from '@sinclair/typebox'
import { envSchema } from 'env-schema'
import { StringEnum } from './schemas/string-enum.js'

const ConfigSchema = Type.Object({
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
})

export type Config = Static<typeof ConfigSchema>

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return envSchema<Config>({ schema: ConfigSchema, data: env, dotenv: false })
}
