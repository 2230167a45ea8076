// The answers of POSTs sent with an Idempotency-Key, kept 24 hours per tenant (table idempotency_keys). A claim
// is one statement: it inserts the key, or takes over one that expired or whose first request was abandoned.
// Prepared statements through the pool, like every other hot path.
import type { Database } from '../db/database.js'

/** How long a key and its answer are kept. */
export const RETENTION = '24 hours'
/** A first request still "in progress" after this long was abandoned (a crash): its key may be claimed again. */
const ABANDONED_AFTER = '60 seconds'

export interface StoredAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'in_progress'; sameRequest: boolean }
  | { kind: 'done'; sameRequest: boolean; answer: StoredAnswer }

const CLAIM_SQL = `INSERT INTO idempotency_keys (tenant_id, key, request_hash) VALUES ($1, $2, $3)
  ON CONFLICT (tenant_id, key) DO UPDATE
    SET request_hash = EXCLUDED.request_hash, status = NULL, headers = NULL, body = NULL, created_at = now()
    WHERE idempotency_keys.created_at < now() - interval '${RETENTION}'
       OR (idempotency_keys.status IS NULL AND idempotency_keys.created_at < now() - interval '${ABANDONED_AFTER}')
  RETURNING 1 AS claimed`
const READ_SQL = `SELECT request_hash AS "requestHash", status, headers, body FROM idempotency_keys
  WHERE tenant_id = $1 AND key = $2`
const COMPLETE_SQL =
  'UPDATE idempotency_keys SET status = $3, headers = $4, body = $5 WHERE tenant_id = $1 AND key = $2'
const RELEASE_SQL = 'DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2 AND status IS NULL'
const PURGE_SQL = `DELETE FROM idempotency_keys WHERE created_at < now() - interval '${RETENTION}'`

interface Row {
  requestHash: string
  status: number | null
  headers: string | null
  body: string | null
}

export class IdempotencyRepository {
  constructor(private readonly db: Database) {}

  /** Claims the key for a first execution, or tells what the first request with it left. */
  async claim(tenantId: string, key: string, requestHash: string): Promise<Claim> {
    const claimed = await this.db.query('idempotency_claim', CLAIM_SQL, [tenantId, key, requestHash])
    if (claimed.length > 0) return { kind: 'claimed' }
    const [row] = await this.db.query<Row>('idempotency_read', READ_SQL, [tenantId, key])
    // Gone between the two statements (purged, or released by a failed first request): claim again.
    if (!row) return this.claim(tenantId, key, requestHash)
    const sameRequest = row.requestHash.trim() === requestHash
    if (row.status === null) return { kind: 'in_progress', sameRequest }
    const answer = { status: row.status, headers: JSON.parse(row.headers ?? '{}'), body: row.body ?? '' }
    return { kind: 'done', sameRequest, answer }
  }

  async complete(tenantId: string, key: string, answer: StoredAnswer): Promise<void> {
    const params = [tenantId, key, answer.status, JSON.stringify(answer.headers), answer.body]
    await this.db.query('idempotency_complete', COMPLETE_SQL, params)
  }

  /** Gives a claim up (the first request failed on the server's side): a retry then executes again. */
  async release(tenantId: string, key: string): Promise<void> {
    await this.db.query('idempotency_release', RELEASE_SQL, [tenantId, key])
  }

  /** Deletes what is older than the retention; returns nothing of interest. */
  async purge(): Promise<void> {
    await this.db.query('idempotency_purge', PURGE_SQL, [])
  }
}
