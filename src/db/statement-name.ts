// Names of prepared statements. PostgreSQL cuts a name at 63 bytes, and a name already prepared on a connection
// with other text is an error (42P05): a name made of the statement's own text, hashed, can never be shared by
// two different statements, however many shapes a builder makes.
import { createHash } from 'node:crypto'

/** `<prefix>_<16 hex of the SQL's SHA-1>`; the prefix only helps a reader of pg_prepared_statements. */
export function statementName(prefix: string, sql: string): string {
  return `${prefix}_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`
}

/** PostgreSQL's limit on identifiers, prepared statements' names included (NAMEDATALEN - 1). */
export const MAX_NAME_BYTES = 63
