// The SQL of the benchmarks' ceiling (bench/baseline.ts). Its statements are written for it and not shared with
// src/contacts, so that rubrica is measured against an independent implementation of the same answers; only a
// Contact's select list is rubrica's (from the Contact's declaration), so that both answer the same fields. Every
// statement returns rows that are Contacts as they are: columns named as the fields, in the schema's order,
// timestamps formatted by PostgreSQL, tags in code-point order; the server sends them without touching them.
import { selectContact } from '../src/contacts/sql.ts'
import type { ListQuery, NewContact, PatchField } from './baseline-input.ts'

/** A named statement without its values: pg prepares it once per connection. */
export interface Prepared {
  name: string
  text: string
}

/**
 * A Contact's select list from the `contacts` row `c` (its tags are a column of the row): the columns are those the
 * Contact's declaration names (src/contacts/model.ts), so that a field added there is answered by both servers;
 * the statements around it are the baseline's own. `returning`: in a RETURNING list (timestamps through iso_utc).
 */
const contactOf = (c: string, returning?: boolean): string => selectContact(c, returning)

/** A Contact from the `contacts` row `c`. */
const CONTACT = contactOf('c')
/** The same in a RETURNING list: Citus allows only immutable functions there (iso_utc is). */
const RETURNED = contactOf('c', true)

/** $1 tenant id, $2 contact id. */
export const GET: Prepared = {
  name: 'baseline_get',
  text: `SELECT ${CONTACT} FROM contacts c WHERE c.tenant_id = $1 AND c.id = $2`,
}

/**
 * A page and one row more (which says whether another page follows), with a literal LIMIT so that PostgreSQL
 * plans for the rows it reads: a range scan of the index that matches the filters, from the cursor. Only the
 * predicates the filters need. $1 tenant id, then the values of `params` in order.
 */
export function listStatement(query: ListQuery): Prepared & { params: string[] } {
  const conditions = ['c.tenant_id = $1']
  const params: string[] = []
  const flags: string[] = []
  const filter = (flag: string, condition: (param: string) => string, value: string | undefined) => {
    if (value === undefined) return
    params.push(value)
    conditions.push(condition(`$${params.length + 1}`))
    flags.push(flag)
  }
  // The cursor goes to PostgreSQL as text: it is read to the microsecond createdAt is stored with.
  filter('cursor', (p) => `c.created_at < ${p}::timestamptz`, query.cursor)
  filter('status', (p) => `c.email_status = ${p}::email_status`, query.emailStatus)
  filter('stage', (p) => `c.stage = ${p}::stage`, query.stage)
  if (!query.includeArchived) {
    conditions.push('c.archived_at IS NULL')
    flags.push('live')
  }
  const rows = query.limit + 1
  // The API's cursor: createdAt to the microsecond (three zeros dropped), as `next`.
  const cursor = `regexp_replace(to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '000Z$', 'Z')`
  const text = `SELECT ${CONTACT}, ${cursor} AS cursor FROM contacts c WHERE ${conditions.join(' AND ')}
    ORDER BY c.created_at DESC LIMIT ${rows}`
  return { name: `baseline_list_${rows}_${flags.join('_') || 'all'}`, text, params }
}

/**
 * A contact with its tags in one statement and one round trip. It returns no row when the email is taken
 * (CREATE_REFUSED then finds it); an unknown tag fails it (SQLSTATE RB001, the contacts trigger).
 */
export const CREATE: Prepared = {
  name: 'baseline_create',
  text: `INSERT INTO contacts AS c (id, tenant_id, email, phone, first_name, last_name, consent_type, source, tags)
    VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, 'api', $7::text[])
    ON CONFLICT DO NOTHING
    RETURNING ${RETURNED}`,
}

/** CREATE's values after the tenant id: the contact's, with the API's defaults. */
export const createValues = (contact: NewContact): unknown[] => [
  contact.email,
  contact.phone ?? null,
  contact.firstName ?? null,
  contact.lastName ?? null,
  contact.consentType ?? 'unknown',
  contact.tags,
]

/** Why CREATE inserted nothing: the tags that exist, and the contact that has the email. $2 email, $3 tags. */
export const CREATE_REFUSED: Prepared = {
  name: 'baseline_create_refused',
  text: `SELECT ARRAY(SELECT name FROM tags WHERE tenant_id = $1 AND name = ANY($3::text[])) AS known,
      c.id, c.email_status AS status
    FROM (SELECT 1) AS one LEFT JOIN contacts c ON c.tenant_id = $1 AND c.email_key = lower($2)`,
}

/** Each field a PATCH sets: its column and the cast of its value. */
const SET: Record<PatchField, string> = {
  firstName: 'first_name = $',
  lastName: 'last_name = $',
  emailStatus: 'email_status = $::email_status',
  stage: 'stage = $::stage',
  consentType: 'consent_type = $',
}

const updates = new Map<string, Prepared>()

/**
 * One UPDATE … RETURNING the contact with its tags, per combination of fields (in the order parsePatch gives):
 * the answer is the state this PATCH wrote. $1 tenant id, $2 contact id, then the fields' values.
 */
export function updateStatement(fields: readonly PatchField[]): Prepared {
  const name = `baseline_update_${fields.join('_')}`
  let statement = updates.get(name)
  if (statement === undefined) {
    const sets = fields.map((field, i) => SET[field].replace('$', () => `$${i + 3}`))
    const text = `UPDATE contacts c SET ${sets.join(', ')}, updated_at = GREATEST(now(), c.updated_at)
      WHERE c.tenant_id = $1 AND c.id = $2 RETURNING ${RETURNED}`
    statement = { name, text }
    updates.set(name, statement)
  }
  return statement
}
