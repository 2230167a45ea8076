// Data access for contacts. Every method takes the tenant id and filters by it: no query here can reach
// another tenant's rows, and handlers never touch the database directly. Every request is one prepared statement
// and one round trip through the pool (src/contacts/sql.ts), writes included, beneath Prisma
// (docs/decisions/0001-request-paths-beneath-prisma.md). Rows are Contacts as they are, with the row's version
// beside them (the ETag), which the response schema's serializer leaves out of the answer.
import fp from 'fastify-plugin'
import type { Database, Query } from '../db/database.js'
import type { EmailStatus } from '../generated/prisma/enums.js'
import type { Contact, ContactCreate, ContactList, ContactListQuery, ContactUpdate } from './model.js'
import { statements } from './sql.js'

/** A contact and the version of its row, which moves on every change (the contact's ETag). */
export type Versioned = Contact & { version: number }

/** The versions a conditional update accepts (If-Match), or any existing contact ('*'). */
export type Expected = readonly number[] | '*'

export type CreateResult =
  | { kind: 'created'; contact: Versioned }
  | { kind: 'unknown_tags'; names: string[] }
  | { kind: 'conflict'; existing: { id: string; status: EmailStatus } }

export type UpdateResult =
  | { kind: 'updated'; contact: Versioned }
  | { kind: 'not_found' }
  | { kind: 'precondition_failed' }

type CreatedRow = Partial<Versioned> & { missing: number; found: string[] }

const { GET_SQL, BY_EMAIL_KEY_SQL, CREATE_SQL, createParams, listStatement, updateStatement } = statements

export class ContactRepository {
  constructor(private readonly db: Database) {}

  /**
   * Newest first. createdAt is unique per tenant to the microsecond (database trigger), and `next` is the last
   * one's to the microsecond, so "older than the cursor" never skips a tie. Rows carry that cursor beside the
   * Contact; the serializer leaves it out of `data`.
   */
  async list(tenantId: string, query: ContactListQuery): Promise<ContactList> {
    const statement = listStatement(query)
    const rows = await this.db.query<Contact & { cursor: string }>(statement.name, statement.sql, [
      tenantId,
      ...statement.params,
    ])
    const page = rows.slice(0, query.limit)
    const last = page.at(-1)
    return { data: page, next: rows.length > query.limit && last ? last.cursor : null }
  }

  async get(tenantId: string, id: string): Promise<Versioned | null> {
    const [row] = await this.db.query<Versioned>('contacts_get', GET_SQL, [tenantId, id])
    return row ?? null
  }

  /** `query` runs the statements elsewhere than the pool: in a transaction (an Idempotency-Key's). */
  async create(tenantId: string, input: ContactCreate, query: Query = this.db.query): Promise<CreateResult> {
    const tagNames = [...new Set(input.tags ?? [])]
    const [row] = await query<CreatedRow>('contacts_create', CREATE_SQL, createParams(tenantId, input, tagNames))
    if (!row) throw new Error('the create statement returned no row')
    const { missing, found, ...inserted } = row
    if (missing > 0) {
      const known = new Set(found)
      return { kind: 'unknown_tags', names: tagNames.filter((name) => !known.has(name)) }
    }
    if (inserted.id) return { kind: 'created', contact: inserted as Versioned }
    // Nothing inserted with every tag known: the email is taken (the only unique key a new contact can break).
    const [existing] = await query<{ id: string; status: EmailStatus }>('contacts_by_email_key', BY_EMAIL_KEY_SQL, [
      tenantId,
      input.email,
    ])
    if (!existing) throw new Error('a create inserted nothing, and no contact has its email')
    return { kind: 'conflict', existing }
  }

  /**
   * Changes only the fields present; a patch that changes nothing (empty, or every value already as sent) reads
   * the contact unchanged. With `expected` (If-Match) the change applies only to a contact that still has one of
   * those versions, checked in the same statement.
   */
  async update(tenantId: string, id: string, patch: ContactUpdate, expected: Expected = '*'): Promise<UpdateResult> {
    if (Object.keys(patch).length === 0) {
      const current = await this.get(tenantId, id)
      if (!current) return { kind: 'not_found' }
      return matches(current.version, expected)
        ? { kind: 'updated', contact: current }
        : { kind: 'precondition_failed' }
    }
    const statement = updateStatement(tenantId, id, patch, expected === '*' ? undefined : [...expected])
    const [row] = await this.db.query<Versioned & { seen: number }>(statement.name, statement.sql, statement.params)
    if (row) {
      const { seen, ...written } = row
      // Nobody changed the contact between the statement's snapshot and its write: the row is what it wrote.
      if (written.version === seen + 1) return { kind: 'updated', contact: written }
      // It waited behind another writer: its tags may be older than its row (see settled).
      return { kind: 'updated', contact: settled(await this.get(tenantId, id), written) }
    }
    // Nothing written: the contact is not there, moved on from the version expected, or already as asked.
    const current = await this.get(tenantId, id)
    if (!current) return { kind: 'not_found' }
    return matches(current.version, expected) ? { kind: 'updated', contact: current } : { kind: 'precondition_failed' }
  }
}

/**
 * What a PATCH that waited behind another writer of the contact answers: its row with the tags of its version,
 * which its statement could not read (it read the tags of its snapshot, before the wait). A link is only ever
 * added, and only by a write that moves the contact's version (a batch, which holds the row's lock meanwhile): so
 * the tags of the written version hold every tag the snapshot saw and none that a later version added. Read
 * again now: at that same version they are its tags; at a later one, equal to the snapshot's they are its tags
 * too; otherwise they are unknown, and the answer is the contact as it is now, with that version (an ETag always
 * names the representation it comes with).
 */
function settled(current: Versioned | null, written: Versioned): Versioned {
  // Gone since (erased): its ETag names nothing any more.
  if (!current) return written
  if (current.version === written.version) return current
  return sameNames(current.tags, written.tags) ? written : current
}

const sameNames = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((name, i) => name === b[i])

function matches(version: number, expected: Expected): boolean {
  return expected === '*' || expected.includes(version)
}

declare module 'fastify' {
  interface FastifyInstance {
    contacts: ContactRepository
  }
}

/** The repository on the app, for the routes (and tests that hold a request back inside it). */
export const contactsRepository = fp(
  async function contactsRepository(fastify) {
    fastify.decorate('contacts', new ContactRepository(fastify.db))
  },
  { name: 'contacts-repository', dependencies: ['database'] },
)
