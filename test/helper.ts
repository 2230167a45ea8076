// build(): the app on a fresh, migrated database, closed when the test ends, with every answer it gives checked
// against the committed OpenAPI document (test/contract.ts). Fixtures create tenants and keys straight through
// Prisma, as the admin CLI does.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { createApiKey } from '../src/admin/api-keys.ts'
import { type BuildOptions, buildApp } from '../src/app.ts'
import type { Scope } from '../src/auth/api-key.ts'
import { type Config, loadConfig } from '../src/config/config.ts'
import type { Role, TenantStatus } from '../src/generated/prisma/enums.ts'
import { contractViolations } from './contract.ts'
import { createTestDatabase, type TestDatabase } from './database.ts'

export interface TestContext {
  teardown(fn: () => unknown): void
  fail(message: string): unknown
}

/** The webhook secrets' key of test apps: 32 bytes in base64. */
export const TEST_WEBHOOKS_KEY = Buffer.alloc(32, 7).toString('base64')

export interface Built {
  app: FastifyInstance
  db: TestDatabase
  config: Config
}

/** The configuration of an app under test: `env` over the tests' defaults; a variable given as '' is left unset. */
export function testConfig(env: Record<string, string> = {}): Config {
  const merged: Record<string, string> = {
    LOG_LEVEL: 'silent',
    DEMO_ON_EMPTY: 'false',
    NODE_ENV: 'test',
    METRICS_PORT: '0',
    // A fixed key for webhook secrets, and no deliverer polling in tests that do not ask for one.
    WEBHOOKS_SECRET_KEY: TEST_WEBHOOKS_KEY,
    WEBHOOKS_ENABLED: 'false',
    ...env,
  }
  return loadConfig(Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== '')))
}

export async function build(
  t: TestContext,
  env: Record<string, string> = {},
  logStream?: { write(line: string): void },
  options: Pick<BuildOptions, 'features'> = {},
): Promise<Built> {
  const config = testConfig(env)
  const db = await createTestDatabase({
    poolSize: config.DATABASE_POOL_SIZE,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
  })
  // Closed even when the app fails to build (a test expecting a refused start would otherwise hang on it).
  t.teardown(() => db.close())
  const app = await buildApp(config, { database: db.database, logStream, ...options })
  t.teardown(() => app.close())
  // Root onSend hooks run in order: this one sees the headers every other hook has set.
  app.addHook('onSend', async (request, reply, payload) => {
    const exchange = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      payload,
      // Fastify's 404/405 handler has no route URL: null, off the document.
      route: request.routeOptions.url ?? null,
    }
    const problems = await contractViolations({ ...exchange, headers: reply.getHeaders() })
    if (problems.length > 0) {
      t.fail(`${request.method} ${request.url} → ${reply.statusCode} breaks openapi.json: ${problems.join('; ')}`)
    }
  })
  await app.ready()
  return { app, db, config }
}

export interface TenantFixture {
  tenantId: string
  key: string
}

export async function createTenantWithKey(
  app: FastifyInstance,
  options: { name?: string; role?: Role; scopes?: Scope[]; status?: TenantStatus; tags?: string[] } = {},
): Promise<TenantFixture> {
  const prisma = app.db.prisma
  const tenant = await prisma.tenant.create({
    data: { name: options.name ?? 'Acme', status: options.status ?? 'active', eventFeed: { create: {} } },
  })
  if (options.tags?.length) {
    await prisma.tag.createMany({ data: options.tags.map((name) => ({ tenantId: tenant.id, name })) })
  }
  const issued = await createApiKey(prisma, {
    tenantId: tenant.id,
    role: options.role ?? 'editor',
    scopes: options.scopes ?? ['contacts:read', 'contacts:write'],
  })
  return { tenantId: tenant.id, key: issued.key }
}

export async function addKey(app: FastifyInstance, tenantId: string, role: Role, scopes: Scope[]): Promise<string> {
  return (await createApiKey(app.db.prisma, { tenantId, role, scopes })).key
}

/** app.inject with the key as a Bearer token. */
export function request(
  app: FastifyInstance,
  key: string,
  options: InjectOptions & { method: InjectOptions['method']; url: string },
): Promise<LightMyRequestResponse> {
  return app.inject({ ...options, headers: { authorization: `Bearer ${key}`, ...options.headers } })
}

/** Defines, in the tenant, the fields of its own that the document's examples give values of (`livello`, `compleanno`). */
export async function defineExampleFields(app: FastifyInstance, tenantId: string): Promise<void> {
  await app.db.query(
    '',
    `INSERT INTO custom_fields (tenant_id, name, type, options) VALUES
       ($1, 'livello', 'enum', '{bronzo,argento,oro}'), ($1, 'compleanno', 'date', NULL)`,
    [tenantId],
  )
}
