// Data access for contacts. Every method takes the tenant id and filters by it: no query here can reach
// another tenant's rows, and handlers never touch Prisma directly.
// Reads are hand-written SQL run as prepared statements through the same pool (see Database.query): per request
// they cost one round trip and no ORM work. Writes go through Prisma with the fewest statements it can make:
// the written row comes back from the write itself (RETURNING), so a request never reads its contact again.
import type { Database } from '../db/database.js'
import { Prisma } from '../generated/prisma/client.js'
import type { EmailStatus } from '../generated/prisma/enums.js'
import type { Contact, ContactCreate, ContactList, ContactListQuery, ContactUpdate } from '../schemas/contacts.js'
import { CONTACT_SELECT, contactSelectList, toContact } from './contact-columns.js'

/** A contact's tag names in code-point order, completed by the contact's id: one definition for reads and PATCH. */
const TAG_NAMES_OF =
  'SELECT t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = {id} ORDER BY t.name COLLATE "C"'

// The version rides along: it is the contact's ETag, and serialisation leaves it out of the body.
const READ_COLUMNS = `${contactSelectList('c', `ARRAY(${TAG_NAMES_OF.replace('{id}', 'c.id')})`)}, c.version`
const GET_SQL = `SELECT ${READ_COLUMNS} FROM contacts c WHERE c.tenant_id = $1 AND c.id = $2`
const TAG_NAMES_SQL = TAG_NAMES_OF.replace('{id}', '$1')
/** In the order a contact shows its tags, so that a new contact's tags need no sorting. */
const TAGS_BY_NAME_SQL =
  'SELECT id, name FROM tags WHERE tenant_id = $1 AND name = ANY($2::text[]) ORDER BY name COLLATE "C"'
const BY_EMAIL_KEY_SQL = 'SELECT id, email_status AS "status" FROM contacts WHERE tenant_id = $1 AND email_key = $2'

/**
 * The instant a page starts before, for createdAt values that have millisecond precision. A cursor finer than
 * that (…00.1235Z) comes after the millisecond it falls in, so contacts of that millisecond (…00.123Z) are older
 * and belong on the page: the bound is the next millisecond. Date would simply cut the extra digits off.
 */
function cursorBound(cursor: string): Date {
  const instant = new Date(cursor.replace(' ', 'T'))
  const finer = /\.\d{3}(\d+)/.exec(cursor)?.[1]
  return finer !== undefined && /[1-9]/.test(finer) ? new Date(instant.getTime() + 1) : instant
}

/**
 * One statement per combination of filters, each with only the predicates it needs, so that every prepared
 * plan is an index range scan on the matching (tenant, …, created_at) index starting at the cursor.
 */
function listStatement(query: ContactListQuery): { name: string; sql: string; params: unknown[] } {
  const conditions = ['c.tenant_id = $1']
  const params: unknown[] = []
  const flags: string[] = []
  const add = (flag: string, condition: string, value: unknown) => {
    params.push(value)
    conditions.push(condition.replace('?', `$${params.length + 1}`))
    flags.push(flag)
  }
  if (query.cursor !== undefined) add('cursor', 'c.created_at < ?', cursorBound(query.cursor))
  if (query.emailStatus !== undefined) add('status', 'c.email_status = ?::email_status', query.emailStatus)
  if (query.stage !== undefined) add('stage', 'c.stage = ?::stage', query.stage)
  // The per-tenant unique index on (tenant_id, email_key), where email_key is lower(email) (a trigger).
  if (query.email !== undefined) add('email', 'c.email_key = lower(?)', query.email)
  if (!query.includeArchived) {
    conditions.push('c.archived_at IS NULL')
    flags.push('live')
  }
  params.push(query.limit + 1)
  const sql = `SELECT ${READ_COLUMNS} FROM contacts c WHERE ${conditions.join(' AND ')}
    ORDER BY c.created_at DESC LIMIT $${params.length + 1}`
  return { name: `contacts_list_${flags.join('_') || 'all'}`, sql, params }
}

/** A contact and the version of its row, which moves on every change (the contact's ETag). */
export interface Versioned {
  contact: Contact
  version: number
}

/** The versions a conditional update accepts (If-Match), or any existing contact ('*'). */
export type Expected = readonly number[] | '*'

export type CreateResult =
  | ({ kind: 'created' } & Versioned)
  | { kind: 'unknown_tags'; names: string[] }
  | { kind: 'conflict'; existing: { id: string; status: EmailStatus } }

export type UpdateResult = ({ kind: 'updated' } & Versioned) | { kind: 'not_found' } | { kind: 'precondition_failed' }

type ContactRow = Contact & { version: number }

const versioned = ({ version, ...contact }: ContactRow): Versioned => ({ contact, version })

export class ContactRepository {
  private readonly prisma: Database['prisma']

  constructor(private readonly db: Database) {
    this.prisma = db.prisma
  }

  /** Newest first. createdAt is unique per tenant (database trigger), so "older than the cursor" never skips a tie. */
  async list(tenantId: string, query: ContactListQuery): Promise<ContactList> {
    // One row more than asked tells whether a next page exists, so the last page says next: null.
    const statement = listStatement(query)
    const rows = await this.db.query<Contact>(statement.name, statement.sql, [tenantId, ...statement.params])
    const page = rows.slice(0, query.limit)
    const last = page.at(-1)
    return { data: page, next: rows.length > query.limit && last ? last.createdAt : null }
  }

  async get(tenantId: string, id: string): Promise<Versioned | null> {
    const [row] = await this.db.query<ContactRow>('contacts_get', GET_SQL, [tenantId, id])
    return row ? versioned(row) : null
  }

  async create(tenantId: string, input: ContactCreate): Promise<CreateResult> {
    const tagNames = [...new Set(input.tags ?? [])]
    const tags =
      tagNames.length === 0
        ? []
        : await this.db.query<{ id: string; name: string }>('tags_by_name', TAGS_BY_NAME_SQL, [tenantId, tagNames])
    if (tags.length < tagNames.length) {
      const known = new Set(tags.map((t) => t.name))
      return { kind: 'unknown_tags', names: tagNames.filter((n) => !known.has(n)) }
    }
    try {
      // Without tags this is one INSERT … RETURNING; with tags Prisma wraps the two inserts in a transaction.
      // The trigger may move createdAt (and acquiredAt): the returned row has the stored values.
      const record = await this.prisma.contact.create({
        data: {
          tenantId,
          email: input.email,
          phone: input.phone ?? null,
          firstName: input.firstName ?? null,
          lastName: input.lastName ?? null,
          consentType: input.consentType ?? 'unknown',
          source: 'api',
          ...(tags.length > 0 && { tags: { create: tags.map((t) => ({ tagId: t.id })) } }),
        },
        select: { ...CONTACT_SELECT, version: true },
      })
      // Tag names are compared exactly, so the stored names are the ones sent, here in the order contacts show them.
      const names = tags.map((tag) => tag.name)
      return { kind: 'created', contact: toContact(record, names), version: record.version }
    } catch (error) {
      // The only unique key a new contact can break is (tenant, lower(email)): the trigger moves created_at.
      // Validated emails are ASCII, where JavaScript's toLowerCase and PostgreSQL's lower() agree.
      if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')) throw error
      const [existing] = await this.db.query<{ id: string; status: EmailStatus }>(
        'contacts_by_email_key',
        BY_EMAIL_KEY_SQL,
        [tenantId, input.email.toLowerCase()],
      )
      if (!existing) throw error
      return { kind: 'conflict', existing }
    }
  }

  /**
   * Changes only the fields present; an empty patch reads the contact unchanged. With `expected` (If-Match) the
   * change applies only to a contact that still has one of those versions, checked in the same statement.
   */
  async update(tenantId: string, id: string, patch: ContactUpdate, expected: Expected = '*'): Promise<UpdateResult> {
    if (Object.keys(patch).length === 0) {
      const current = await this.get(tenantId, id)
      if (!current) return { kind: 'not_found' }
      return matches(current.version, expected) ? { kind: 'updated', ...current } : { kind: 'precondition_failed' }
    }
    // One UPDATE … RETURNING: the answer is the state this PATCH wrote even when others write at once, and no
    // transaction holds a pooled connection while it waits. PATCH cannot change tags, so reading them after
    // the update answers the same as reading them with it.
    const [record] = await this.prisma.contact.updateManyAndReturn({
      where: { id, tenantId, ...(expected !== '*' && { version: { in: [...expected] } }) },
      data: patch,
      select: { ...CONTACT_SELECT, version: true },
    })
    if (!record) {
      // Nothing changed: tell a contact that moved on from one that is not there.
      const exists = expected !== '*' && (await this.get(tenantId, id)) !== null
      return { kind: exists ? 'precondition_failed' : 'not_found' }
    }
    const tagRows = await this.db.query<{ name: string }>('contact_tag_names', TAG_NAMES_SQL, [id])
    const contact = toContact(
      record,
      tagRows.map((row) => row.name),
    )
    return { kind: 'updated', contact, version: record.version }
  }
}

function matches(version: number, expected: Expected): boolean {
  return expected === '*' || expected.includes(version)
}
