// The batch import: each item is checked alone (its rules, its email not already in the batch, its tags), and
// the items that pass are written together in one transaction (src/contacts/batch/sql.ts): lock the contacts the
// items name, update those where something changes, create the others, then read those found already as asked.
// No lock per tenant is taken: writers lock contact rows in the order of their emails. Every method takes the
// tenant id; the statements filter by it.
import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { ErrorObject } from 'ajv'
import fp from 'fastify-plugin'
import type { Config } from '../../config/config.js'
import type { Database, Query } from '../../db/database.js'
import { type ApiError, errors } from '../../errors/catalogue.js'
import { describeValidationError } from '../../errors/validation-messages.js'
import { validatorCompiler } from '../../plugins/app/validation.js'
import { CUSTOM_FIELD_LIMITS } from '../custom-fields/model.js'
import type { CustomFieldRegistry, TenantFields } from '../custom-fields/registry.js'
import type { ErasedEmails } from '../erased-emails.js'
import { type BatchItem, BatchItemSchema, type Contact, contactSchemas } from '../model.js'
import { BatchAdmission } from './admission.js'
import { BATCH_BODY_LIMIT, type BatchResponse, type BatchResult, batchSchemas, type ItemErrorCode } from './model.js'
import { batchSql } from './sql.js'

/** An item's rules, compiled as a route's body is (no coercion, unknown fields refused). */
const validItem = validatorCompiler(() => [...contactSchemas, ...batchSchemas])({
  schema: Type.Ref(BatchItemSchema),
  httpPart: 'body',
})

type Written = Contact & { n: number }

/** A statement's values: the tenant, and the items of `batch` as one JSON array (a row's `n` is its place, from 1). */
const itemsOf = (tenantId: string, batch: readonly Write[]) => [tenantId, JSON.stringify(batch.map(({ item }) => item))]

/** The same and, third, the ids of the items' contacts (as LOCK found them): for joins (IDS in sql.ts). */
const itemsAndIdsOf = (tenantId: string, batch: readonly Write[], ids: ReadonlyMap<Write, string>) => [
  ...itemsOf(tenantId, batch),
  batch.map((write) => ids.get(write)),
]

/** How many times an item may find its create skipped (a concurrent create of its email, a taken instant). */
const BATCH_ROUNDS = 5

/** On the embedded database, the items and tags a statement writes at most (see BatchRepository.slices). */
const SLICE_WEIGHT = 2000

/** An instant in microseconds since 1970, as PostgreSQL reads a timestamptz: ISO 8601 in UTC, to the microsecond. */
function isoOfMicroseconds(microseconds: bigint): string {
  const milliseconds = new Date(Number(microseconds / 1000n)).toISOString().slice(0, -1)
  return `${milliseconds}${String(microseconds % 1000n).padStart(3, '0')}Z`
}

/** An item that passed its checks, with its place in the batch. */
interface Write {
  index: number
  item: BatchItem
  /** The keyed hash of its email (erased_emails); null without the instance's secrets key. */
  emailHash?: string | null
}

/** An item refused: its result has the status of its code (400, or 409 contact_erased). */
function failure(error: ApiError): BatchResult {
  return {
    status: error.statusCode as 400 | 409,
    error: { code: error.code as ItemErrorCode, message: error.message },
  }
}

/** The item's place in validation messages: `contacts[3].email` rather than `email`. */
function inBatch(index: number, validationErrors: readonly ErrorObject[]): ErrorObject[] {
  return validationErrors.map((error) => ({ ...error, instancePath: `/contacts/${index}${error.instancePath}` }))
}

/** Items checked between two turns of the event loop: 1,000 of the largest take it for about 100 ms. */
const ITEMS_PER_TURN = 100

/** Lets the event loop answer other requests (and /health) before going on. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * The items that break their rules or repeat an earlier item's email, as results, and the others as writes. The
 * first item with an email claims it, even if it fails afterwards on its tags.
 */
export async function checkItems(
  items: readonly unknown[],
  /** The tenant's own fields, when an item gives values of them. */
  fields?: TenantFields,
): Promise<{ results: (BatchResult | undefined)[]; writes: Write[] }> {
  const results: (BatchResult | undefined)[] = new Array(items.length)
  const writes: Write[] = []
  const claimed = new Map<string, number>()
  for (const [index, item] of items.entries()) {
    if (index > 0 && index % ITEMS_PER_TURN === 0) await nextTurn()
    if (!validItem(item)) {
      const message = describeValidationError(inBatch(index, validItem.errors ?? []), 'body')
      results[index] = failure(errors.invalidInput('invalid_body', message))
      continue
    }
    const valid = item as BatchItem
    const wrongFields = valid.fields && fields?.check(valid.fields, 'patch', `/contacts/${index}/fields`)
    if (wrongFields) {
      results[index] = failure(wrongFields)
      continue
    }
    const key = valid.email.toLowerCase()
    const earlier = claimed.get(key)
    if (earlier !== undefined) {
      results[index] = failure(errors.duplicateInBatch(index, earlier))
      continue
    }
    claimed.set(key, index)
    writes.push({ index, item: valid })
  }
  return { results, writes }
}

/** What every batch of an instance shares: the statements' session and what the batches of each tenant took. */
interface Shared {
  kind: Database['kind']
  erased: ErasedEmails
  /**
   * Per tenant, the end of the instants that this instance's batches of the tenant still writing have taken: a
   * batch's createdAt start after it. Two batches whose clocks were read within a millisecond would otherwise take
   * the same instants, and their creates would wait on each other, then go round again.
   */
  instantsTaken: Map<string, bigint>
}

export class BatchRepository {
  private readonly shared: Shared

  constructor(
    private readonly db: Database,
    erased: ErasedEmails,
    private readonly fields: CustomFieldRegistry,
  ) {
    this.shared = { kind: db.kind, erased, instantsTaken: new Map() }
  }

  /**
   * Imports `items` into the tenant; `query` runs the statements in a transaction of the caller's (an
   * Idempotency-Key's). Batches of one tenant may run at once (BatchAdmission.inTurn): they wait for each other in
   * the database only where they name the same contacts, in the order of their emails.
   */
  async upsert(tenantId: string, items: readonly unknown[], query?: Query): Promise<BatchResponse> {
    const { results, writes } = await checkItems(items, await this.fieldsFor(tenantId, items))
    let counts = { created: 0, updated: 0, unchanged: 0 }
    if (writes.length > 0) {
      let batch: BatchTransaction | undefined
      const run = async (q: Query) => {
        batch = new BatchTransaction(this.shared, q, tenantId, results)
        await batch.write(writes)
        counts = batch.counts
      }
      try {
        await (query ? run(query) : this.db.transaction(run))
      } finally {
        batch?.releaseInstants()
      }
    }
    const failed = results.filter((result) => result !== undefined && result.status >= 400).length
    return { results: results as BatchResult[], ...counts, failed }
  }

  /** The tenant's own fields when an item gives values of them (the registry's, fresh for the names given). */
  private async fieldsFor(tenantId: string, items: readonly unknown[]): Promise<TenantFields | undefined> {
    const given = items.flatMap((item) => {
      const values = (item as { fields?: unknown } | null)?.fields
      return typeof values === 'object' && values !== null && Object.keys(values).length > 0
        ? [values as Record<string, unknown>]
        : []
    })
    return given.length === 0 ? undefined : this.fields.knowing(tenantId, given)
  }
}

/**
 * The writes in the slices each round of statements takes. On PostgreSQL, one: the statements run in the
 * database's own processes, and slices would lock the contacts in several passes, out of the one order of their
 * emails that every writer keeps. The embedded database runs a statement on this very thread, every other
 * request waiting, /health included: slices of about SLICE_WEIGHT items and tags, with a turn of the event loop
 * between them, keep each wait short (it runs one transaction at a time, so the order of locks does not matter).
 */
function slicesOf(kind: Database['kind'], writes: Write[]): Write[][] {
  if (kind !== 'pglite') return writes.length === 0 ? [] : [writes]
  const slices: Write[][] = []
  let slice: Write[] = []
  let weight = 0
  for (const write of writes) {
    const itemWeight = 1 + (write.item.tags?.length ?? 0)
    if (slice.length > 0 && weight + itemWeight > SLICE_WEIGHT) {
      slices.push(slice)
      slice = []
      weight = 0
    }
    slice.push(write)
    weight += itemWeight
  }
  if (slice.length > 0) slices.push(slice)
  return slices
}

/**
 * One batch written in one transaction, by the statements of sql.ts in their order (write()), and what they have
 * found and answered so far: each item's result, the counts, the contacts LOCK found, the events recorded.
 */
class BatchTransaction {
  readonly counts = { created: 0, updated: 0, unchanged: 0 }
  /** The contact of each item whose email names one, as LOCK found it. */
  private readonly contactIds = new Map<Write, string>()
  /** The items whose contact was found already as asked: read (READ) after the writes. */
  private readonly found: Write[] = []
  /** The end of the instants its creates took (microseconds since 1970, the first one after them). */
  private instantsEnd: bigint | undefined

  constructor(
    private readonly shared: Shared,
    private readonly query: Query,
    private readonly tenantId: string,
    /** Each item's answer, by its place in the batch; those refused by checkItems are there already. */
    private readonly results: (BatchResult | undefined)[],
  ) {}

  async write(items: Write[]): Promise<void> {
    const { query, tenantId } = this
    const candidates = await this.notErased(items)
    const names = [...new Set(candidates.flatMap(({ item }) => item.tags ?? []))]
    const known = new Set(
      names.length === 0
        ? []
        : (await query<{ name: string }>(batchSql.KNOWN_TAGS.name, batchSql.KNOWN_TAGS.sql, [tenantId, names])).map(
            (row) => row.name,
          ),
    )
    const writes = candidates.filter(({ index, item }) => {
      const unknown = [...new Set(item.tags ?? [])].filter((name) => !known.has(name))
      if (unknown.length > 0) this.results[index] = failure(errors.unknownTagsInItem(index, unknown))
      return unknown.length === 0
    })
    // Items whose email names a contact are updated (or found already so); the others are created. An item whose
    // create was skipped (its email created meanwhile by another transaction, or its instant taken) goes round
    // again: it is then an update, or a create at another instant.
    for (const [i, slice] of slicesOf(this.shared.kind, writes).entries()) {
      if (i > 0) await nextTurn()
      await this.writeSlice(slice)
    }
    // The contacts found already as asked, read after the writes (their rows are locked until the end).
    this.counts.unchanged = this.found.length
    for (const [i, slice] of slicesOf(this.shared.kind, this.found).entries()) {
      if (i > 0) await nextTurn()
      const params = itemsAndIdsOf(tenantId, slice, this.contactIds)
      for (const row of await query<Written>(batchSql.READ.name, batchSql.READ.sql, params)) {
        this.results[(slice[row.n - 1] as Write).index] = { status: 200, contact: row }
      }
    }
  }

  /** Once the transaction has ended: no later batch has taken instants after this one's, none is writing. */
  releaseInstants(): void {
    const { instantsTaken } = this.shared
    if (this.instantsEnd !== undefined && instantsTaken.get(this.tenantId) === this.instantsEnd) {
      instantsTaken.delete(this.tenantId)
    }
  }

  /** Updates or creates the items of `slice`, round after round; notes those found already as asked. */
  private async writeSlice(slice: Write[]): Promise<void> {
    const { query, tenantId, contactIds } = this
    let pending = slice
    for (let round = 1; pending.length > 0; round++) {
      if (round > BATCH_ROUNDS) throw new Error(`${pending.length} batch items neither updated nor created`)
      const batch = pending
      const locked = await query<{ n: number; id: string | null; mergedBytes: number | null }>(
        batchSql.LOCK.name,
        batchSql.LOCK.sql,
        itemsOf(tenantId, batch),
      )
      const named = new Set<Write>()
      const refused = new Set<Write>()
      for (const { n, id, mergedBytes } of locked) {
        const write = batch[n - 1] as Write
        // Its values merged into the contact's would pass the limit: refused alone, the others go on.
        if (mergedBytes !== null && mergedBytes > CUSTOM_FIELD_LIMITS.valuesBytes) {
          this.results[write.index] = failure(errors.fieldsTooLarge(mergedBytes, `contacts[${write.index}].fields`))
          refused.add(write)
          continue
        }
        if (id === null) continue
        contactIds.set(write, id)
        named.add(write)
      }
      const existing = batch.filter((write) => named.has(write))
      const changed = new Set<Write>()
      if (existing.length > 0) {
        const rows = await query<Written>(
          batchSql.UPDATE.name,
          batchSql.UPDATE.sql,
          itemsAndIdsOf(tenantId, existing, contactIds),
        )
        for (const row of rows) {
          const write = existing[row.n - 1] as Write
          this.results[write.index] = { status: 200, contact: row }
          changed.add(write)
        }
      }
      this.counts.updated += changed.size
      this.found.push(...existing.filter((write) => !changed.has(write)))
      const absent = batch.filter((write) => !named.has(write) && !refused.has(write))
      pending = absent.length === 0 ? [] : await this.create(absent)
    }
  }

  /** Creates the contacts of `absent`; answers the items whose create was skipped, for another round. */
  private async create(absent: Write[]): Promise<Write[]> {
    const { query, tenantId } = this
    const { instantsTaken } = this.shared
    await query(batchSql.ANCHOR.name, batchSql.ANCHOR.sql, [tenantId])
    const [clock] = await query<{ at: string }>(batchSql.CLOCK.name, batchSql.CLOCK.sql, [tenantId])
    const now = BigInt(clock?.at ?? 0)
    const taken = instantsTaken.get(tenantId) ?? 0n
    const start = now > taken ? now : taken
    this.instantsEnd = start + BigInt(absent.length)
    instantsTaken.set(tenantId, this.instantsEnd)
    const byKey = new Map(absent.map((write) => [write.item.email.toLowerCase(), write]))
    const items = JSON.stringify(
      absent.map((write) => ({ ...write.item, id: randomUUID(), emailHash: write.emailHash ?? null })),
    )
    const rows = await query<Written & { key: string }>(batchSql.INSERT.name, batchSql.INSERT.sql, [
      tenantId,
      items,
      isoOfMicroseconds(start),
    ])
    for (const { key, ...row } of rows) {
      const write = byKey.get(key)
      if (!write) throw new Error('a batch create answered a key it was not given')
      this.results[write.index] = { status: 201, contact: row }
      byKey.delete(key)
    }
    this.counts.created += rows.length
    // An item skipped because its address was erased meanwhile (after the check of all items) is refused; the
    // others skipped go round again.
    return this.refuseErased([...byKey.values()])
  }

  /**
   * The items whose email is not an address the tenant erased, each with its keyed hash; the others refused (409
   * contact_erased). Checked for all items in one statement, in tenants that have erased addresses only (the
   * batch's creates check again as they insert). Throws 503 when the tenant has some and this instance cannot hash
   * (no secrets key): it could not tell which items to refuse.
   */
  private async notErased(candidates: Write[]): Promise<Write[]> {
    const { erased } = this.shared
    const hashed = candidates.map((write) => ({ ...write, emailHash: erased.hash(write.item.email) }))
    if (!(await erased.guarded(this.query, this.tenantId))) return hashed
    if (!erased.available) throw errors.erasedCheckUnavailable()
    return this.refuseErased(hashed)
  }

  /** The writes whose email's hash is not among the tenant's erased addresses; the others refused. */
  private async refuseErased(writes: Write[]): Promise<Write[]> {
    const hashes = writes.flatMap(({ emailHash }) => (emailHash ? [emailHash] : []))
    const erased = await this.shared.erased.erasedAmong(this.query, this.tenantId, hashes)
    return writes.filter((write) => {
      if (!write.emailHash || !erased.has(write.emailHash)) return true
      this.results[write.index] = failure(errors.contactErasedInItem(write.index))
      return false
    })
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    batches: BatchRepository
    batchAdmission: BatchAdmission
  }
}

/**
 * Batches that write at once: BATCH_CONCURRENCY, and on PostgreSQL one connection fewer than the pool (at least
 * one), so that other requests always find one. The embedded database runs one transaction at a time anyway.
 */
export function batchWriters(config: Pick<Config, 'BATCH_CONCURRENCY' | 'DATABASE_POOL_SIZE'>, db: Database): number {
  if (db.kind === 'pglite') return config.BATCH_CONCURRENCY
  return Math.max(1, Math.min(config.BATCH_CONCURRENCY, config.DATABASE_POOL_SIZE - 1))
}

/** The least a batch counts for in the admission budget, as a fraction of the body limit (see admission.ts). */
const MINIMUM_SHARE = 16

/** The repository and the admission on the app, for the route (and tests that look inside them). */
export const batchRepository = fp(
  async function batchRepository(fastify) {
    fastify.decorate('batches', new BatchRepository(fastify.db, fastify.erasedEmails, fastify.customFieldRegistry))
    fastify.decorate(
      'batchAdmission',
      new BatchAdmission({
        budgetBytes: fastify.config.BATCH_CONCURRENCY * BATCH_BODY_LIMIT,
        // Rounded down, so that a tenant's share holds MINIMUM_SHARE small batches.
        minimumBytes: Math.floor(BATCH_BODY_LIMIT / MINIMUM_SHARE),
        bodyLimit: BATCH_BODY_LIMIT,
        writers: batchWriters(fastify.config, fastify.db),
      }),
    )
  },
  { name: 'batch-repository', dependencies: ['database', 'erased-emails', 'custom-fields'] },
)
