// Resolves presented API keys by their SHA-256. Resolutions are cached for at most AUTH_CACHE_TTL_MS
// (5 s at most), so a busy key costs no database round trip per request, while a revoked key or a suspended
// or closed organisation is refused within that time on every instance.
import { LRUCache } from 'lru-cache'
import type { PrismaClient } from '../generated/prisma/client.js'
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

/** lastUsedAt is bookkeeping for operators: written at most this often per key, off the request's path. */
const LAST_USED_GRANULARITY_MS = 60_000

export class ApiKeyRepository {
  private readonly cache: LRUCache<string, Resolution> | null

  constructor(
    private readonly prisma: PrismaClient,
    cacheTtlMs: number,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {
    this.cache = cacheTtlMs > 0 ? new LRUCache({ max: 10_000, ttl: cacheTtlMs }) : null
  }

  async resolve(keyHash: string): Promise<ResolvedKey | null> {
    const cached = this.cache?.get(keyHash)
    if (cached) return cached.key
    const row = await this.prisma.apiKey.findUnique({
      where: { keyHash },
      select: {
        id: true,
        tenantId: true,
        role: true,
        scopes: true,
        revokedAt: true,
        lastUsedAt: true,
        tenant: { select: { status: true } },
      },
    })
    const key =
      row && row.revokedAt === null
        ? { keyId: row.id, tenantId: row.tenantId, tenantStatus: row.tenant.status, role: row.role, scopes: row.scopes }
        : null
    this.cache?.set(keyHash, { key })
    if (row && key && (row.lastUsedAt === null || Date.now() - row.lastUsedAt.getTime() > LAST_USED_GRANULARITY_MS)) {
      this.prisma.apiKey
        .update({ where: { id: row.id }, data: { lastUsedAt: new Date() } })
        .catch(this.onBackgroundError)
    }
    return key
  }

  /** Forget cached resolutions, e.g. when another process announces a revocation. */
  invalidateAll(): void {
    this.cache?.clear()
  }
}
