// Names of prepared statements. PostgreSQL cuts a name at 63 bytes, and a name already prepared on a connection
// with other text is an error (42P05): a name made of the statement's own text, hashed, can never be shared by
// two different statements, however many shapes a builder makes.
import { createHash } from 'node:crypto'

/** `<prefix>_<16 hex of the SQL's SHA-1>`; the prefix only helps a reader of pg_prepared_statements. */
export function statementName(prefix: string, sql: string): string {
  return `${prefix}_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`
}

/**
 * The name of a statement planned anew, with its values, at each execution (sent unnamed): for a lookup by email,
 * whose best index PostgreSQL tells apart from the others only by the table's size. A plan cached while a table
 * held a few contacts (the unique (tenant_id, email_key) and the primary key cost the same then) goes on reading
 * every contact of the tenant through the other index once there are thousands, until an ANALYZE replaces it:
 * autovacuum runs one late, or never where it is off.
 */
export const REPLANNED = ''

/** PostgreSQL's limit on identifiers, prepared statements' names included (NAMEDATALEN - 1). */
export const MAX_NAME_BYTES = 63
