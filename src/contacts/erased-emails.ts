// Email addresses erased at their person's request, which a create may not bring back. The database holds only
// their keyed hash (erased_emails): HMAC-SHA256 of the lower-cased address under a key derived from the instance's
// secrets key, so that the table tells nothing of an address to whoever lacks the key, and a guess cannot be
// checked against it without the key either. Creates check a tenant's erased addresses only when the tenant has
// some: which tenants have, each instance remembers for a few seconds, and learns at once from an erasure of its
// own or from the announcement of another instance's (src/announcements/plugin.ts).
import { createHmac } from 'node:crypto'
import fp from 'fastify-plugin'
import { LRUCache } from 'lru-cache'
import { derivedKey } from '../config/secret-key.js'
import type { Query } from '../db/database.js'

/** How long an instance trusts what it read of a tenant's erasures: the bound on a missed announcement. */
export const ERASURES_CACHE_MS = 5000

export const HAS_ERASED_SQL = 'SELECT EXISTS (SELECT 1 FROM erased_emails WHERE tenant_id = $1) AS erased'
export const ERASED_AMONG_SQL = `SELECT email_hash AS hash FROM erased_emails
  WHERE tenant_id = $1 AND email_hash = ANY($2::bpchar[])`

export class ErasedEmails {
  private readonly hashKey: Buffer | null
  /** Per tenant: whether it has erased addresses, as last read or learnt. */
  private readonly guardedTenants = new LRUCache<string, boolean>({ max: 10_000, ttl: ERASURES_CACHE_MS })
  constructor(secretKey: Buffer | null) {
    this.hashKey = secretKey === null ? null : derivedKey(secretKey, 'erased emails')
  }

  /** Whether this instance can hash addresses (it has the secrets key): without, it can neither erase nor check. */
  get available(): boolean {
    return this.hashKey !== null
  }

  /** The keyed hash of an address, as erased_emails holds it (hex); null without the key. */
  hash(email: string): string | null {
    if (this.hashKey === null) return null
    return createHmac('sha256', this.hashKey).update(email.toLowerCase()).digest('hex')
  }

  /**
   * Whether the tenant's creates must check its erased addresses: it has some, or had a moment ago. Read through
   * `query` (a transaction's, when the caller is in one), at most once per ERASURES_CACHE_MS and tenant.
   */
  async guarded(query: Query, tenantId: string): Promise<boolean> {
    const known = this.guardedTenants.get(tenantId)
    if (known !== undefined) return known
    const erased = await this.hasAny(query, tenantId)
    this.guardedTenants.set(tenantId, erased)
    return erased
  }

  /** Whether the tenant has erased addresses, read now. */
  async hasAny(query: Query, tenantId: string): Promise<boolean> {
    const [row] = await query<{ erased: boolean }>('erased_emails_any', HAS_ERASED_SQL, [tenantId])
    return row?.erased === true
  }

  /** The tenant erases a contact (here or on another instance): its batches check from now on. */
  erasing(tenantId: string): void {
    this.guardedTenants.set(tenantId, true)
  }

  /** Forgets what was read: announcements may have been missed (the subscription started over). */
  forgetAll(): void {
    this.guardedTenants.clear()
  }

  /** Which of the hashes `hashes` are erased addresses of the tenant. */
  async erasedAmong(query: Query, tenantId: string, hashes: readonly string[]): Promise<Set<string>> {
    if (hashes.length === 0) return new Set()
    const rows = await query<{ hash: string }>('erased_emails_among', ERASED_AMONG_SQL, [tenantId, hashes])
    return new Set(rows.map((row) => row.hash))
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    erasedEmails: ErasedEmails
  }
}

/** The erased addresses on the app, for the creates (contacts, batch) and the erasures. */
export const erasedEmailsPlugin = fp(
  async function erasedEmails(fastify) {
    fastify.decorate('erasedEmails', new ErasedEmails(fastify.secretKey))
  },
  { name: 'erased-emails', dependencies: ['secret-key'] },
)
