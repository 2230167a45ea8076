// One definition of how a Contact (src/schemas/contacts.ts) is stored: each field's column in `contacts`.
// The select list of every statement that returns contacts derives from CONTACT_COLUMNS and the schema, so
// adding a field means adding it to the schema, the Prisma model (and its migration) and this map.
import { type Contact, ContactSchema } from '../schemas/contacts.js'

/** The fields stored in `contacts` itself; `tags` come from `contact_tags`. */
export type StoredField = Exclude<keyof Contact, 'tags'>

export const CONTACT_COLUMNS = {
  id: 'id',
  email: 'email',
  firstName: 'first_name',
  lastName: 'last_name',
  phone: 'phone',
  emailStatus: 'email_status',
  stage: 'stage',
  source: 'source',
  consentType: 'consent_type',
  archivedAt: 'archived_at',
  acquiredAt: 'acquired_at',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const satisfies Record<StoredField, string>

/** A Contact's fields in the schema's order, which answers keep (they are JSON.stringify'd rows). */
const CONTACT_FIELDS = Object.keys(ContactSchema.properties) as (keyof Contact)[]

/** Fields the schema declares as timestamps (format date-time), nullable or not. */
const TIMESTAMP_FIELDS = new Set(
  CONTACT_FIELDS.filter((field) => (ContactSchema.properties[field] as { format?: string }).format === 'date-time'),
)

/** The API's timestamp format, produced by PostgreSQL: ISO 8601 in UTC with milliseconds and Z. */
const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`

/**
 * The select list of a Contact from `contacts` aliased `alias`, with `tags` from `tagsSql`: each column named
 * as its field, in the schema's order, timestamps already formatted, so that a row is a Contact as it is.
 */
export function contactSelectList(alias: string, tagsSql: string): string {
  return CONTACT_FIELDS.map((field) => {
    if (field === 'tags') return `${tagsSql} AS tags`
    const column = `${alias}.${CONTACT_COLUMNS[field]}`
    return TIMESTAMP_FIELDS.has(field)
      ? `to_char(${column} AT TIME ZONE 'UTC', ${ISO_UTC}) AS "${field}"`
      : `${column} AS "${field}"`
  }).join(', ')
}
