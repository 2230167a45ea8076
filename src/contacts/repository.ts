// Data access for contacts. Every method takes the tenant id and filters by it: no query here can reach
// another tenant's rows, and handlers never touch the database directly. Every request is one prepared statement
// and one round trip through the pool (src/contacts/sql.ts), writes included, beneath Prisma
// (docs/decisions/0001-request-paths-beneath-prisma.md). Rows are Contacts as they are, with the row's version
// beside them (the ETag), which the response schema's serializer leaves out of the answer.
import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import type { Database, Query } from '../db/database.js'
import { retryRolledBack } from '../db/deadlock.js'
import { REPLANNED } from '../db/statement-name.js'
import { FEED_ANCHOR_SQL } from '../db/tenant-anchor.js'
import { type ApiError, errors } from '../errors/catalogue.js'
import type { EmailStatus } from '../generated/prisma/enums.js'
import type { ErasedEmails } from './erased-emails.js'
import type { Contact, ContactCreate, ContactList, ContactUpdate } from './model.js'
import { type ContactListQuery, listFilters } from './search/model.js'
import type { SearchRepository } from './search/repository.js'
import { rowsFor } from './search/sql.js'
import { cursorBound, statements } from './sql.js'

/** A contact and the version of its row, which moves on every change (the contact's ETag). */
export type Versioned = Contact & { version: number }

/** The versions a conditional update accepts (If-Match), or any existing contact ('*'). */
export type Expected = readonly number[] | '*'

export type CreateResult =
  | { kind: 'created'; contact: Versioned }
  | { kind: 'unknown_tags'; names: string[] }
  /** Values the contacts trigger refused (fields the tenant does not define, too many bytes): the error. */
  | { kind: 'refused_fields'; error: ApiError }
  | { kind: 'conflict'; existing: { id: string; status: EmailStatus } }
  /** The email is an address the tenant erased (erased_emails). */
  | { kind: 'erased' }
  /** The tenant has erased addresses, and this instance cannot hash the email to check it (no secrets key). */
  | { kind: 'unverifiable' }

export type UpdateResult =
  | { kind: 'updated'; contact: Versioned }
  | { kind: 'not_found' }
  | { kind: 'precondition_failed' }
  | { kind: 'refused_fields'; error: ApiError }

/**
 * How many times a create is tried when the instant its createdAt took was taken by another insert of the tenant
 * at the same microsecond: each try takes the clock again, so a second collision is already rare.
 */
const CREATE_ATTEMPTS = 5

const { GET_SQL, BY_EMAIL_KEY_SQL, UNKNOWN_TAGS_SQL, CREATE_SQL, createParams, updateStatement } = statements

export class ContactRepository {
  constructor(
    private readonly db: Database,
    private readonly erased: ErasedEmails,
    /** Runs the list's pages, which are searches of one group. */
    private readonly search: SearchRepository,
  ) {}

  /**
   * Newest first. createdAt is unique per tenant to the microsecond (database trigger), and `next` is the last
   * one's to the microsecond, so "older than the cursor" never skips a tie. The list's filters are one group of a
   * search (src/contacts/search/sql.ts): the same conditions and indexes. Rows carry their position beside the
   * Contact; the serializer leaves it out of `data`.
   */
  async list(tenantId: string, query: ContactListQuery): Promise<ContactList> {
    const filters = listFilters(query)
    const spec = {
      groups: filters.length > 0 ? [filters] : [],
      ...(query.q !== undefined && { query: query.q }),
      includeArchived: query.includeArchived,
      sort: '-createdAt' as const,
    }
    const after = query.cursor === undefined ? undefined : { created: cursorBound(query.cursor) }
    const rows = await this.search.page(tenantId, spec, rowsFor(query.limit), after)
    const page = rows.slice(0, query.limit)
    const last = page.at(-1)
    return { data: page, next: rows.length > query.limit && last ? last.positionCreated : null }
  }

  async get(tenantId: string, id: string): Promise<Versioned | null> {
    const [row] = await this.db.query<Versioned>('contacts_get', GET_SQL, [tenantId, id])
    return row ?? null
  }

  /**
   * `query` runs the statements elsewhere than the pool: in a transaction (an Idempotency-Key's). One statement,
   * which also refuses an erased address (CREATE_SQL); what it refused is looked up after.
   */
  async create(tenantId: string, input: ContactCreate, query: Query = this.db.query): Promise<CreateResult> {
    const hash = this.erased.hash(input.email)
    for (let attempt = 1; ; attempt++) {
      let row: Versioned | undefined
      try {
        ;[row] = await query<Versioned>(
          'contacts_create',
          CREATE_SQL,
          createParams(tenantId, input, randomUUID(), hash),
        )
      } catch (error) {
        const names = unknownTagsOf(error)
        if (names) return { kind: 'unknown_tags', names }
        const refused = fieldsRefusalOf(error)
        if (refused) return { kind: 'refused_fields', error: refused }
        throw error
      }
      if (row) return { kind: 'created', contact: row }
      // Nothing inserted: the email is taken, or erased, or the tenant has no feed row yet, or (rarely) the instant
      // createdAt took was. Unknown tags are the request's own fault, and come first, as when a row is written.
      if (input.tags && input.tags.length > 0) {
        const [unknown] = await query<{ names: string[] }>(REPLANNED, UNKNOWN_TAGS_SQL, [tenantId, input.tags])
        if (unknown && unknown.names.length > 0) return { kind: 'unknown_tags', names: unknown.names }
      }
      const [existing] = await query<{ id: string; status: EmailStatus }>(REPLANNED, BY_EMAIL_KEY_SQL, [
        tenantId,
        input.email,
      ])
      if (existing) return { kind: 'conflict', existing }
      if (hash !== null) {
        if ((await this.erased.erasedAmong(query, tenantId, [hash])).size > 0) return { kind: 'erased' }
        // Without the secrets key no address can be told from another: the tenant's erasures refuse them all.
      } else if (await this.erased.hasAny(query, tenantId)) return { kind: 'unverifiable' }
      await query('contacts_feed_anchor', FEED_ANCHOR_SQL, [tenantId])
      if (attempt === CREATE_ATTEMPTS) throw new Error(`a create found its createdAt taken ${attempt} times`)
    }
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
    // Run again if refused because a later transaction changed the contact first (src/db/deadlock.ts).
    let row: Versioned | undefined
    try {
      ;[row] = await retryRolledBack(() => this.db.query<Versioned>(statement.name, statement.sql, statement.params))
    } catch (error) {
      const refused = fieldsRefusalOf(error)
      if (refused) return { kind: 'refused_fields', error: refused }
      throw error
    }
    if (row) return { kind: 'updated', contact: row }
    // Nothing written: the contact is not there, moved on from the version expected, or already as asked.
    const current = await this.get(tenantId, id)
    if (!current) return { kind: 'not_found' }
    return matches(current.version, expected) ? { kind: 'updated', contact: current } : { kind: 'precondition_failed' }
  }
}

/**
 * SQLSTATEs of the contacts trigger's refusals, with the names refused as JSON in the detail: tags the tenant does
 * not have, values of fields it does not define.
 */
const UNKNOWN_TAGS = 'RB001'
const UNKNOWN_FIELDS = 'RB002'
const FIELDS_TOO_LARGE = 'RB003'
const FIELDS_OUTSIDE_DEFINITIONS = 'RB004'

function refusedNames(error: unknown, sqlState: string): string[] | null {
  const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown }
  if (code !== sqlState || typeof detail !== 'string') return null
  const names: unknown = JSON.parse(detail)
  return Array.isArray(names) ? names.filter((name): name is string => typeof name === 'string') : null
}

/** The unknown tag names a statement was refused for, or null when it failed for another reason. */
export const unknownTagsOf = (error: unknown) => refusedNames(error, UNKNOWN_TAGS)

/**
 * The API's error for values the contacts trigger refused: of fields the tenant does not define (their names),
 * outside a definition changed while the write was on its way (RB004, their names), or more bytes than a contact
 * may hold (RB003, the size in the detail); null when it failed for another reason.
 */
export function fieldsRefusalOf(error: unknown): ApiError | null {
  const names = refusedNames(error, UNKNOWN_FIELDS)
  if (names) return errors.unknownFields(names)
  const outside = refusedNames(error, FIELDS_OUTSIDE_DEFINITIONS)
  if (outside) return errors.fieldsOutsideDefinitions(outside)
  const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown }
  return code === FIELDS_TOO_LARGE ? errors.fieldsTooLarge(Number(detail)) : null
}

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
    fastify.decorate('contacts', new ContactRepository(fastify.db, fastify.erasedEmails, fastify.contactSearch))
  },
  { name: 'contacts-repository', dependencies: ['database', 'erased-emails', 'search-repository'] },
)
