// The batch import: each item is checked alone (its rules, its email not already in the batch, its tags), and
// the items that pass are written together in one transaction (src/contacts/batch/sql.ts): take the tenant's
// creation lock, find which emails name a contact, update those where something changes, create the others,
// read the rest. Every method takes the tenant id; the statements filter by it.
import { Type } from '@sinclair/typebox'
import type { ErrorObject } from 'ajv'
import type { Database, Query } from '../../db/database.js'
import { type ApiError, errors } from '../../errors/catalogue.js'
import { compileValidator, describeValidationError } from '../../plugins/app/validation.js'
import { type BatchItem, BatchItemSchema, type Contact } from '../model.js'
import type { BatchResponse, BatchResult, ItemErrorCode } from './model.js'
import { batchSql } from './sql.js'

/** An item's rules, compiled as a route's body is (no coercion, unknown fields refused). */
const validItem = compileValidator({ schema: Type.Ref(BatchItemSchema), httpPart: 'body' })

type Written = Contact & { n: number }

/** On the embedded database, the items and tags a statement writes at most (see BatchRepository.slices). */
const SLICE_WEIGHT = 2000

/** An item that passed its checks, with its place in the batch. */
interface Write {
  index: number
  item: BatchItem
}

function failure(error: ApiError): BatchResult {
  return { status: 400, error: { code: error.code as ItemErrorCode, message: error.message } }
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

export class BatchRepository {
  constructor(private readonly db: Database) {}

  /**
   * Imports `items` into the tenant; `query` runs the statements in a transaction of the caller's (an
   * Idempotency-Key's). Callers run one batch of a tenant at a time (BatchAdmission.inTurn): another would wait
   * for the tenant's lock in the database, holding a connection.
   */
  async upsert(tenantId: string, items: readonly unknown[], query?: Query): Promise<BatchResponse> {
    const { results, writes } = await checkItems(items)
    const counts = { created: 0, updated: 0, unchanged: 0 }
    if (writes.length > 0) {
      const run = (q: Query) => this.write(q, tenantId, writes, results, counts)
      await (query ? run(query) : this.db.transaction(run))
    }
    const failed = results.filter((result) => result?.status === 400).length
    return { results: results as BatchResult[], ...counts, failed }
  }

  /**
   * The writes in the slices each statement takes. On PostgreSQL, one: the statements run in the database's own
   * processes, and a statement per slice would lock rows after the tenant's event counter, out of the order every
   * writer keeps. The embedded database runs a statement on this very thread, every other request waiting,
   * /health included: slices of about SLICE_WEIGHT items and tags, with a turn of the event loop between them,
   * keep each wait short (it runs one transaction at a time, so the order of locks does not matter there).
   */
  private slices(writes: Write[]): Write[][] {
    if (this.db.kind !== 'pglite') return writes.length === 0 ? [] : [writes]
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

  private async write(
    query: Query,
    tenantId: string,
    candidates: Write[],
    results: (BatchResult | undefined)[],
    counts: { created: number; updated: number; unchanged: number },
  ): Promise<void> {
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
      if (unknown.length > 0) results[index] = failure(errors.unknownTagsInItem(index, unknown))
      return unknown.length === 0
    })
    // Each statement answers rows numbered by the item's place (from 1) in the array it was given; it answers
    // the writes it did not do.
    const step = async (statement: { name: string; sql: string }, batch: Write[], status: 200 | 201) => {
      const left: Write[] = []
      for (const [i, slice] of this.slices(batch).entries()) {
        if (i > 0) await nextTurn()
        const rows = await query<Written>(statement.name, statement.sql, [
          tenantId,
          JSON.stringify(slice.map(({ item }) => item)),
        ])
        const done = new Set<number>()
        for (const row of rows) {
          const write = slice[row.n - 1] as Write
          results[write.index] = { status, contact: row }
          done.add(row.n - 1)
        }
        left.push(...slice.filter((_write, n) => !done.has(n)))
      }
      return left
    }
    if (writes.length === 0) return
    await query(batchSql.TENANT_LOCK.name, batchSql.TENANT_LOCK.sql, [tenantId])
    // Each item goes to the one statement that can write it: its items are what a statement's time and memory
    // grow with. The tenant's lock, taken first, keeps other writers from creating a contact meanwhile.
    const existing = new Set(
      (
        await query<{ email: string }>(batchSql.EXISTING.name, batchSql.EXISTING.sql, [
          tenantId,
          writes.map(({ item }) => item.email),
        ])
      ).map((row) => row.email),
    )
    const named = writes.filter(({ item }) => existing.has(item.email))
    const unchanged = await step(batchSql.UPDATE, named, 200)
    counts.updated = named.length - unchanged.length
    const fresh = writes.filter(({ item }) => !existing.has(item.email))
    const notCreated = await step(batchSql.INSERT, fresh, 201)
    counts.created = fresh.length - notCreated.length
    const unread = await step(batchSql.READ, unchanged, 200)
    counts.unchanged = unchanged.length
    // Every email of the batch is now a contact of the tenant, updated, created, or found as it was.
    if (notCreated.length > 0 || unread.length > 0) {
      throw new Error(`${notCreated.length + unread.length} batch items found no contact after their upsert`)
    }
  }
}
