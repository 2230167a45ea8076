// Data access for contacts. Every method takes the tenant id and filters by it: no query here can reach
// another tenant's rows, and handlers never touch Prisma directly.
// Hot reads (list, get) are hand-written SQL run as prepared statements through the same pool (see
// Database.query): per request they cost one round trip and no ORM work. Writes go through Prisma, then the
// written contact is read back the same way, so that one query and one mapping define a Contact.
import type { Database } from '../db/database.js'
import { Prisma } from '../generated/prisma/client.js'
import type { EmailStatus, Stage } from '../generated/prisma/enums.js'
import type { Contact, ContactCreate, ContactList, ContactListQuery, ContactUpdate } from '../schemas/contacts.js'

/** A contact row as the read queries return it (tags already aggregated). */
interface ContactReadRow {
  id: string
  email: string | null
  first_name: string | null
  last_name: string | null
  phone: string | null
  email_status: EmailStatus
  stage: Stage
  source: string
  consent_type: string
  tags: string[]
  archived_at: Date | null
  acquired_at: Date
  created_at: Date
  updated_at: Date
}

const READ_COLUMNS = `c.id, c.email, c.first_name, c.last_name, c.phone, c.email_status, c.stage, c.source,
  c.consent_type, c.archived_at, c.acquired_at, c.created_at, c.updated_at,
  ARRAY(SELECT t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = c.id) AS tags`

const GET_SQL = `SELECT ${READ_COLUMNS} FROM contacts c WHERE c.tenant_id = $1 AND c.id = $2`

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
  if (query.cursor !== undefined) add('cursor', 'c.created_at < ?', new Date(query.cursor))
  if (query.emailStatus !== undefined) add('status', 'c.email_status = ?::email_status', query.emailStatus)
  if (query.stage !== undefined) add('stage', 'c.stage = ?::stage', query.stage)
  if (!query.includeArchived) {
    conditions.push('c.archived_at IS NULL')
    flags.push('live')
  }
  params.push(query.limit + 1)
  const sql = `SELECT ${READ_COLUMNS} FROM contacts c WHERE ${conditions.join(' AND ')}
    ORDER BY c.created_at DESC LIMIT $${params.length + 1}`
  return { name: `contacts_list_${flags.join('_') || 'all'}`, sql, params }
}

function fromReadRow(row: ContactReadRow): Contact {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    phone: row.phone,
    emailStatus: row.email_status,
    stage: row.stage,
    source: row.source,
    consentType: row.consent_type,
    tags: [...row.tags].sort(),
    archivedAt: row.archived_at?.toISOString() ?? null,
    acquiredAt: row.acquired_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

export type CreateResult =
  | { kind: 'created'; contact: Contact }
  | { kind: 'unknown_tags'; names: string[] }
  | { kind: 'conflict'; existing: { id: string; status: string } }

export class ContactRepository {
  private readonly prisma: Database['prisma']

  constructor(private readonly db: Database) {
    this.prisma = db.prisma
  }

  /** Newest first. createdAt is unique per tenant (database trigger), so "older than the cursor" never skips a tie. */
  async list(tenantId: string, query: ContactListQuery): Promise<ContactList> {
    // One row more than asked tells whether a next page exists, so the last page says next: null.
    const statement = listStatement(query)
    const rows = await this.db.query<ContactReadRow>(statement.name, statement.sql, [tenantId, ...statement.params])
    const page = rows.slice(0, query.limit)
    const last = page.at(-1)
    return {
      data: page.map(fromReadRow),
      next: rows.length > query.limit && last ? last.created_at.toISOString() : null,
    }
  }

  async get(tenantId: string, id: string): Promise<Contact | null> {
    const [row] = await this.db.query<ContactReadRow>('contacts_get', GET_SQL, [tenantId, id])
    return row ? fromReadRow(row) : null
  }

  async create(tenantId: string, input: ContactCreate): Promise<CreateResult> {
    const tagNames = [...new Set(input.tags ?? [])]
    const tags =
      tagNames.length === 0
        ? []
        : await this.prisma.tag.findMany({
            where: { tenantId, name: { in: tagNames } },
            select: { id: true, name: true },
          })
    if (tags.length < tagNames.length) {
      const known = new Set(tags.map((t) => t.name))
      return { kind: 'unknown_tags', names: tagNames.filter((n) => !known.has(n)) }
    }
    try {
      const { id } = await this.prisma.contact.create({
        data: {
          tenantId,
          email: input.email,
          phone: input.phone ?? null,
          firstName: input.firstName ?? null,
          lastName: input.lastName ?? null,
          consentType: input.consentType ?? 'unknown',
          source: 'api',
          tags: { create: tags.map((t) => ({ tagId: t.id })) },
        },
        select: { id: true },
      })
      const contact = await this.get(tenantId, id)
      if (contact === null) throw new Error(`contact ${id} vanished right after its creation`)
      return { kind: 'created', contact }
    } catch (error) {
      // The only unique key a new contact can break is (tenant, lower(email)): the trigger moves created_at.
      // Validated emails are ASCII, where JavaScript's toLowerCase and PostgreSQL's lower() agree.
      if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')) throw error
      const existing = await this.prisma.contact.findFirst({
        where: { tenantId, emailKey: input.email.toLowerCase() },
        select: { id: true, emailStatus: true },
      })
      if (!existing) throw error
      return { kind: 'conflict', existing: { id: existing.id, status: existing.emailStatus } }
    }
  }

  /** Changes only the fields present; an empty patch reads the contact unchanged. */
  async update(tenantId: string, id: string, patch: ContactUpdate): Promise<Contact | null> {
    if (Object.keys(patch).length === 0) return this.get(tenantId, id)
    // Read back inside the transaction: the row lock taken by the update keeps a concurrent PATCH from landing
    // between the two, so the answer is the state this PATCH wrote.
    const rows = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.contact.updateMany({ where: { id, tenantId }, data: patch })
      return count === 0 ? [] : tx.$queryRawUnsafe<ContactReadRow[]>(GET_SQL, tenantId, id)
    })
    const [row] = rows
    return row ? fromReadRow(row) : null
  }
}
