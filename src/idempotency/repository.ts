// The answers of POSTs sent with an Idempotency-Key, kept 24 hours per tenant (table idempotency_keys). Each use
// of a key runs in one transaction that holds an advisory lock on the key: the first request executes and
// stores its answer in that transaction, so its answer and its contact commit or vanish together (a crash
// leaves nothing, and the retry executes); a retry while it runs cannot take the lock and is told so at once.
import type { Query } from '../db/database.js'

/** How long a key and its answer are kept. */
export const RETENTION = '24 hours'

/**
 * The largest answer a key may keep (body and headers), unless the route says otherwise. A 201's contact is
 * bounded by the field limits (LIMITS, 100 tags of 64 characters at most: about 27 KB at worst, a test builds it;
 * a typical contact is under 1 KB); an answer past its bound is a bug, refused rather than stored. The batch
 * import's answer holds up to 1,000 contacts and has a bound of its own (BATCH_ANSWER_BYTES).
 */
export const MAX_STORED_ANSWER_BYTES = 32 * 1024

export interface StoredAnswer {
  status: number
  headers: Record<string, string>
  body: string
  /** The contacts the answer holds: an erasure of one of them drops the answer (an index finds it). */
  contactIds: readonly string[]
}

interface Row {
  requestHash: string
  status: number
  headers: string
  body: string
  contactIds: string[]
}

export const LOCK_SQL = 'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked'
export const FIND_SQL = `SELECT request_hash AS "requestHash", status, headers, body, contact_ids::text[] AS "contactIds"
  FROM idempotency_keys
  WHERE tenant_id = $1 AND key = $2 AND created_at >= now() - interval '${RETENTION}'`
// An expired answer under the same key is replaced.
export const STORE_SQL = `INSERT INTO idempotency_keys (tenant_id, key, request_hash, status, headers, body, contact_ids)
  VALUES ($1, $2, $3, $4, $5, $6, $7::uuid[])
  ON CONFLICT (tenant_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status,
    headers = EXCLUDED.headers, body = EXCLUDED.body, contact_ids = EXCLUDED.contact_ids, created_at = EXCLUDED.created_at`
/** One tenant's expired keys ($1), at most $2 of them. */
export const PURGE_SQL = `WITH doomed AS (
    DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key IN (
      SELECT key FROM idempotency_keys WHERE tenant_id = $1 AND created_at < now() - interval '${RETENTION}' LIMIT $2)
    RETURNING 1)
  SELECT count(*)::int AS deleted FROM doomed`

/** Statements on a transaction's `query` (src/db/database.ts, Database.transaction). */
export const idempotencyKeys = {
  /** Whether this transaction now holds the key (false: another request with it is running). */
  async lock(query: Query, tenantId: string, key: string): Promise<boolean> {
    const [row] = await query<{ locked: boolean }>('idempotency_lock', LOCK_SQL, [
      `rubrica.idempotency:${tenantId}:${key}`,
    ])
    return row?.locked === true
  },

  async find(
    query: Query,
    tenantId: string,
    key: string,
  ): Promise<{ requestHash: string; answer: StoredAnswer } | null> {
    const [row] = await query<Row>('idempotency_find', FIND_SQL, [tenantId, key])
    if (!row) return null
    const headers = JSON.parse(row.headers) as Record<string, string>
    const answer = { status: row.status, headers, body: row.body, contactIds: row.contactIds }
    return { requestHash: row.requestHash.trim(), answer }
  },

  async store(
    query: Query,
    tenantId: string,
    key: string,
    requestHash: string,
    answer: StoredAnswer,
    maxBytes = MAX_STORED_ANSWER_BYTES,
  ): Promise<void> {
    const headers = JSON.stringify(answer.headers)
    const size = Buffer.byteLength(headers) + Buffer.byteLength(answer.body)
    if (size > maxBytes) throw new Error(`an answer of ${size} bytes is too large to keep`)
    const params = [tenantId, key, requestHash, answer.status, headers, answer.body, answer.contactIds]
    await query('idempotency_store', STORE_SQL, params)
  },
}
