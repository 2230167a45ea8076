// Resolves presented API keys by their SHA-256. Resolutions are cached for at most AUTH_CACHE_TTL_MS
// (5 s at most), so a busy key costs no database round trip per request, while a revoked key or a suspended
// or closed organisation is refused within that time on every instance.
// Both statements are prepared and go below Prisma: authentication is on every request's path, and a server
// that only reads never has to load Prisma's query compiler.
import fp from 'fastify-plugin'
import { LRUCache } from 'lru-cache'
import type { Database } from '../db/database.js'
import type { Role, TenantStatus } from '../generated/prisma/enums.js'

export interface ResolvedKey {
  keyId: string
  tenantId: string
  tenantStatus: TenantStatus
  role: Role
  scopes: readonly string[]
  /** The tenant's own rate limit per window; null: the service's. */
  rateLimitMax: number | null
}

interface KeyRow {
  id: string
  tenantId: string
  tenantStatus: TenantStatus
  role: Role
  scopes: string[] | null
  rateLimitMax: number | null
  revokedAt: Date | null
  lastUsedAt: Date | null
}

export const RESOLVE_SQL = `SELECT k.id, k.tenant_id AS "tenantId", t.status AS "tenantStatus", k.role, k.scopes,
  t.rate_limit_max AS "rateLimitMax", k.revoked_at AS "revokedAt", k.last_used_at AS "lastUsedAt"
  FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = $1`
export const TOUCH_SQL = 'UPDATE api_keys SET last_used_at = now() WHERE tenant_id = $1 AND id = $2'

/** lastUsedAt is bookkeeping for operators: written at most this often per key, off the request's path. */
const LAST_USED_GRANULARITY_MS = 60_000

/** An unknown or revoked key, remembered as such so that its retries stay cheap. */
const REFUSED = false

export class ApiKeyRepository {
  // Known keys and refused ones are cached apart: a flood of random keys can only push out other refused keys,
  // never a key in use (which would send its every request to the database).
  private readonly known: LRUCache<string, ResolvedKey> | null
  private readonly refused: LRUCache<string, typeof REFUSED> | null

  constructor(
    private readonly db: Database,
    cacheTtlMs: number,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {
    this.known = cacheTtlMs > 0 ? new LRUCache({ max: 10_000, ttl: cacheTtlMs }) : null
    this.refused = cacheTtlMs > 0 ? new LRUCache({ max: 10_000, ttl: cacheTtlMs }) : null
  }

  /** What the cache knows of a key, without any database work: the key, null if refused, undefined if unknown. */
  cached(keyHash: string): ResolvedKey | null | undefined {
    const known = this.known?.get(keyHash)
    if (known) return known
    return this.refused?.has(keyHash) ? null : undefined
  }

  async resolve(keyHash: string): Promise<ResolvedKey | null> {
    const cached = this.cached(keyHash)
    if (cached !== undefined) return cached
    const [row] = await this.db.query<KeyRow>('api_keys_resolve', RESOLVE_SQL, [keyHash])
    const key =
      row && row.revokedAt === null
        ? {
            keyId: row.id,
            tenantId: row.tenantId,
            tenantStatus: row.tenantStatus,
            role: row.role,
            // NOT NULL since the migration api_key_scopes_not_null; a missing list, or what SQL by hand put in it
            // that is not a scope name (NULL elements, a nested array), is no scope all the same.
            scopes: (row.scopes ?? []).filter((scope): scope is string => typeof scope === 'string'),
            rateLimitMax: row.rateLimitMax,
          }
        : null
    if (key) this.known?.set(keyHash, key)
    else this.refused?.set(keyHash, REFUSED)
    if (row && key && (row.lastUsedAt === null || Date.now() - row.lastUsedAt.getTime() > LAST_USED_GRANULARITY_MS)) {
      this.db.query('api_keys_touch', TOUCH_SQL, [row.tenantId, row.id]).catch(this.onBackgroundError)
    }
    return key
  }

  /** Forget cached resolutions, e.g. when another process announces a revocation. */
  invalidateAll(): void {
    this.known?.clear()
    this.refused?.clear()
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyRepository
  }
}

/** The key repository on the app, for authentication and for the auth-change listener. */
export const apiKeysRepository = fp(
  async function apiKeys(fastify) {
    fastify.decorate(
      'apiKeys',
      new ApiKeyRepository(fastify.db, fastify.config.AUTH_CACHE_TTL_MS, (error) =>
        fastify.log.warn({ err: error }, 'could not record API key use'),
      ),
    )
  },
  { name: 'api-keys', dependencies: ['database'] },
)
