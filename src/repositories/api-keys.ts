// Resolves presented API keys by their SHA-256. Resolutions are cached for at most AUTH_CACHE_TTL_MS
// (5 s at most), so a busy key costs no database round trip per request, while a revoked key or a suspended
// or closed organisation is refused within that time on every instance.
// Both statements are prepared and go below Prisma: authentication is on every request's path, and a server
// that only reads never has to load Prisma's query compiler.
import { LRUCache } from 'lru-cache'
import type { Database } from '../db/database.js'
import type { Role, TenantStatus } from '../generated/prisma/enums.js'

export interface ResolvedKey {
  keyId: string
  tenantId: string
  tenantStatus: TenantStatus
  role: Role
  scopes: readonly string[]
}

/** Cached outcome of a lookup: unknown and revoked keys are cached too (as null), so retries stay cheap. */
type Resolution = { key: ResolvedKey | null }

interface KeyRow {
  id: string
  tenantId: string
  tenantStatus: TenantStatus
  role: Role
  scopes: string[]
  revokedAt: Date | null
  lastUsedAt: Date | null
}

const RESOLVE_SQL = `SELECT k.id, k.tenant_id AS "tenantId", t.status AS "tenantStatus", k.role, k.scopes,
  k.revoked_at AS "revokedAt", k.last_used_at AS "lastUsedAt"
  FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = $1`
const TOUCH_SQL = 'UPDATE api_keys SET last_used_at = now() WHERE id = $1'

/** lastUsedAt is bookkeeping for operators: written at most this often per key, off the request's path. */
const LAST_USED_GRANULARITY_MS = 60_000

export class ApiKeyRepository {
  private readonly cache: LRUCache<string, Resolution> | null

  constructor(
    private readonly db: Database,
    cacheTtlMs: number,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {
    this.cache = cacheTtlMs > 0 ? new LRUCache({ max: 10_000, ttl: cacheTtlMs }) : null
  }

  async resolve(keyHash: string): Promise<ResolvedKey | null> {
    const cached = this.cache?.get(keyHash)
    if (cached) return cached.key
    const [row] = await this.db.query<KeyRow>('api_keys_resolve', RESOLVE_SQL, [keyHash])
    const key =
      row && row.revokedAt === null
        ? { keyId: row.id, tenantId: row.tenantId, tenantStatus: row.tenantStatus, role: row.role, scopes: row.scopes }
        : null
    this.cache?.set(keyHash, { key })
    if (row && key && (row.lastUsedAt === null || Date.now() - row.lastUsedAt.getTime() > LAST_USED_GRANULARITY_MS)) {
      this.db.query('api_keys_touch', TOUCH_SQL, [row.id]).catch(this.onBackgroundError)
    }
    return key
  }

  /** Forget cached resolutions, e.g. when another process announces a revocation. */
  invalidateAll(): void {
    this.cache?.clear()
  }
}
