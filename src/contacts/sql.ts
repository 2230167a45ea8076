// The SQL of the contacts repository, built from how a Contact is stored (src/contacts/describe.ts): no list of
// columns is written here. Every statement is prepared by name (one per shape: combination of list filters, page
// size, fields of a PATCH), so PostgreSQL plans each shape once per connection; every request is one statement
// and one round trip, writes included. Rows come back as Contacts: columns named as fields, timestamps formatted
// by PostgreSQL, tags in code-point order.

import { isoUtc, isoUtcReturned } from '../db/iso-time.js'
import { statementName } from '../db/statement-name.js'
import { type ContactCreate, type ContactStorage, type ContactUpdate, contact } from './model.js'

export interface Statement {
  name: string
  sql: string
  params: unknown[]
}

/**
 * The instant a page starts before, to the microsecond that createdAt is stored with, as text for PostgreSQL (Date
 * keeps milliseconds only). A cursor finer than that (…00.1234565Z) comes after the microsecond it falls in, so
 * contacts of that microsecond are older and belong on the page: the bound is the next microsecond.
 */
export function cursorBound(cursor: string): string {
  const normalized = cursor.replace(' ', 'T')
  const fraction = /\.(\d+)/.exec(normalized)?.[1] ?? ''
  const seconds = new Date(normalized.replace(/\.\d+/, '')).getTime()
  let micros = Number(fraction.slice(0, 6).padEnd(6, '0'))
  if (/[1-9]/.test(fraction.slice(6))) micros += 1
  const millis = seconds + Math.floor(micros / 1000)
  const rest = String(micros % 1000).padStart(3, '0')
  return new Date(millis).toISOString().replace('Z', `${rest}Z`)
}

type SelectList = (alias: string, returning?: boolean) => string

/**
 * The select list of a Contact from `contacts` aliased `alias`: each column named as its field, in the answers'
 * order, timestamps already formatted, so that a row is a Contact as it is. A RETURNING list (`returning`) formats
 * them through isoUtcReturned, and reads each column as the statement wrote it.
 */
export function selectListOf(storage: ContactStorage): SelectList {
  return (alias, returning = false) =>
    storage.answer
      .map(({ field, stored }) => {
        const column = `${alias}.${stored.column}`
        if (stored.timestamp) return `${(returning ? isoUtcReturned : isoUtc)(column)} AS "${field}"`
        return stored.select && !returning ? `${stored.select(column)} AS "${field}"` : `${column} AS "${field}"`
      })
      .join(', ')
}

/**
 * Statements of one shape (a combination of filters, a page size, the fields of a PATCH), each built once: its
 * text, and a name derived from that text, so that two shapes can never share a name (statementName).
 */
function statementCache() {
  const shapes = new Map<string, { name: string; sql: string }>()
  return (shape: string, prefix: string, build: () => string) => {
    let statement = shapes.get(shape)
    if (!statement) {
      const sql = build()
      statement = { name: statementName(prefix, sql), sql }
      shapes.set(shape, statement)
    }
    return statement
  }
}

/**
 * A contact in one statement, on one node: an INSERT … SELECT from the tenant's row in event_feeds (which every
 * tenant that has written has: Citus then runs it on one node), its tags in its row. Nothing is inserted when the
 * email's keyed hash (`$hash`; null without the instance's secrets key: any) is an address the tenant erased, when
 * a contact has the email as this statement begins, or when a unique key is taken (the email, or, rarely, the
 * instant createdAt took, which another insert of the tenant took first: the caller retries). Erased addresses and
 * the email are read in the statement's snapshot, in the one statement that inserts, so that no erasure, on this
 * instance or another, lets the address back: one committed before it began is seen; one still running then is
 * seen through its contact, which still exists for it. A tag the tenant does not have fails the statement
 * (SQLSTATE RB001, the contacts trigger). Its values: $1 the tenant id, then the body's fields in storage.create's
 * order (or what is stored when one is absent), the new contact's id and the hash.
 */
function createStatement(storage: ContactStorage, selectList: SelectList) {
  const bodyFields = storage.create.flatMap(({ from }) => ('body' in from ? [from] : []))
  let next = 1
  const values = storage.create.map(({ stored, from }) =>
    'body' in from ? `$${++next}${stored.cast}` : `'${from.value.replaceAll("'", "''")}'${stored.cast}`,
  )
  const columns = storage.create.map(({ stored }) => stored.column).join(', ')
  const email = `$${2 + bodyFields.findIndex(({ body }) => body === 'email')}`
  const id = `$${bodyFields.length + 2}`
  const hash = `$${bodyFields.length + 3}`
  return {
    CREATE_SQL: `INSERT INTO contacts AS c (id, tenant_id, ${columns})
  SELECT ${id}::uuid, a.tenant_id, ${values.join(', ')}
  FROM event_feeds a
  WHERE a.tenant_id = $1
    AND NOT EXISTS (SELECT 1 FROM erased_emails x
      WHERE x.tenant_id = $1 AND (${hash}::bpchar IS NULL OR x.email_hash = ${hash}::bpchar))
    AND NOT EXISTS (SELECT 1 FROM contacts e WHERE e.tenant_id = $1 AND e.email_key = lower(${email}::text))
  ON CONFLICT DO NOTHING
  RETURNING ${selectList('c', true)}, c.version`,
    createParams(tenantId: string, input: ContactCreate, contactId: string, emailHash: string | null): unknown[] {
      return [
        tenantId,
        ...bodyFields.map(({ body, absent }) => input[body as keyof ContactCreate] ?? absent),
        contactId,
        emailHash,
      ]
    },
  }
}

/**
 * One UPDATE … RETURNING per combination of fields: the answer is the state this PATCH wrote even when others
 * write at once. With `versions` (If-Match) it applies only to a contact that still has one of them. A contact
 * that already has every value sent is not written (the row constructor has a constant, so that one field
 * compares as a row too). The answer is the row written, tags included: an UPDATE that waited for another
 * transaction's lock writes over, and answers, that transaction's version, so its ETag and its body always match.
 */
function updateStatementOf(storage: ContactStorage, readColumns: string) {
  const shaped = statementCache()
  return (tenantId: string, id: string, patch: ContactUpdate, versions?: number[]): Statement => {
    const params: unknown[] = [tenantId, id]
    const fields = Object.keys(storage.update).filter((field) => field in patch)
    const columns: string[] = []
    const values: string[] = []
    for (const field of fields) {
      params.push(patch[field as keyof ContactUpdate])
      const stored = storage.update[field] as ContactStorage['update'][string]
      columns.push(stored.column)
      const value = `$${params.length}${stored.cast}`
      // An object's members merge into the stored one; a member given null goes.
      values.push(stored.merges ? `jsonb_strip_nulls(c.${stored.column} || ${value})` : value)
    }
    const sets = columns.map((column, i) => `${column} = ${values[i]}`)
    // A PATCH that would change nothing writes nothing: no new version, no updatedAt, no event.
    let condition = `c.tenant_id = $1 AND c.id = $2 AND (${columns.map((column) => `c.${column}`).join(', ')}, 0)
      IS DISTINCT FROM (${values.join(', ')}, 0)`
    if (versions) {
      params.push(versions)
      condition += ` AND c.version = ANY($${params.length}::int[])`
    }
    const statement = shaped(
      `${fields.join(',')}:${versions ? 'if' : ''}`,
      'contacts_update',
      () => `UPDATE contacts c SET ${sets.join(', ')}, updated_at = GREATEST(now(), c.updated_at)
    WHERE ${condition} RETURNING ${readColumns}`,
    )
    return { ...statement, params }
  }
}

/** The statements of contacts stored as `storage` says. */
export function contactStatements(storage: ContactStorage) {
  const selectList = selectListOf(storage)
  // The version rides along: it is the contact's ETag (the serializer leaves it out of the answer).
  const readColumns = `${selectList('c')}, c.version`
  const returnedColumns = `${selectList('c', true)}, c.version`
  return {
    GET_SQL: `SELECT ${readColumns} FROM contacts c WHERE c.tenant_id = $1 AND c.id = $2`,
    BY_EMAIL_KEY_SQL:
      'SELECT id, email_status AS "status" FROM contacts WHERE tenant_id = $1 AND email_key = lower($2)',
    // The names of $2 the tenant has no tag of, as the contacts trigger lists them (for a create that wrote nothing).
    UNKNOWN_TAGS_SQL: `SELECT ARRAY(SELECT DISTINCT u COLLATE "C" FROM unnest($2::text[]) u
      WHERE NOT EXISTS (SELECT 1 FROM tags t WHERE t.tenant_id = $1 AND t.name = u) ORDER BY 1) AS names`,
    ...createStatement(storage, selectList),
    updateStatement: updateStatementOf(storage, returnedColumns),
  }
}

export const statements = contactStatements(contact.storage)

/** The select list of a Contact, for other features' statements that answer contacts (the event feed). */
export const selectContact = selectListOf(contact.storage)
