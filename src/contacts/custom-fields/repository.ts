// The definitions of a tenant's own fields: read, created, changed, deleted, and a deleted field's values
// reclaimed from the contacts in short statements. Every method takes the tenant id. A change is announced to
// every instance (their registries drop the tenant's cached validators).
import type { Database, Query } from '../../db/database.js'
import { errors } from '../../errors/catalogue.js'
import { CONTACT_FIELDS } from '../fields.js'
import {
  CUSTOM_FIELD_LIMITS,
  type CustomFieldCreate,
  type CustomFieldUpdate,
  definitionProblem,
  type FieldDefinition,
} from './model.js'
import { definitionOf } from './registry.js'
import {
  CHANGE_LOCK_SQL,
  COUNT_SQL,
  CREATE_SQL,
  DEFINITIONS_SQL,
  EVENTS_PAGE_SQL,
  FORGET_SQL,
  HOLDING_LONGER_SQL,
  HOLDING_SQL,
  HOLDING_VALUES_SQL,
  LOCK_SQL,
  RECLAIM_EVENTS_SQL,
  RECLAIM_SQL,
  REMOVE_SQL,
  UPDATE_SQL,
} from './sql.js'

/** A Contact's own field names, lower-cased, and `fields`: not names of the tenant's own. */
const RESERVED = new Set([...Object.keys(CONTACT_FIELDS).map((name) => name.toLowerCase()), 'fields'])

type Row = FieldDefinition & { removing?: boolean; options: string[] | null; maxLength: number | null }

/** How long the reclaim waits before it tries to forget a deleted definition again (FORGET_SQL's minute). */
const FORGET_RETRY_MS = 15_000

export class CustomFieldRepository {
  /** The reclaims this instance is running, by tenant and name: one each. */
  private readonly reclaiming = new Set<string>()
  private closed = false
  private readonly timers = new Set<NodeJS.Timeout>()

  constructor(
    private readonly db: Pick<Database, 'query' | 'transaction'>,
    /** Tells every instance that the tenant's definitions changed. */
    private readonly announce: (tenantId: string) => Promise<void>,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async list(tenantId: string): Promise<FieldDefinition[]> {
    const rows = await this.db.query<Row>('custom_fields_definitions', DEFINITIONS_SQL, [tenantId])
    return rows.filter((row) => !row.removing).map(definitionOf)
  }

  async get(tenantId: string, name: string): Promise<FieldDefinition | null> {
    return (await this.list(tenantId)).find((definition) => definition.name === name) ?? null
  }

  async create(tenantId: string, input: CustomFieldCreate): Promise<FieldDefinition> {
    if (RESERVED.has(input.name)) {
      throw errors.invalidInput(
        'invalid_body',
        `Il campo "name" non è valido: "${input.name}" è già un campo del contatto.`,
      )
    }
    // A name every object already has (`constructor`): validators and clients would read the inherited one.
    if (input.name in Object.prototype) {
      throw errors.invalidInput('invalid_body', `Il campo "name" non è valido: "${input.name}" è un nome riservato.`)
    }
    const wrong = definitionProblem(input)
    if (wrong) throw errors.invalidInput('invalid_body', `Il campo "${input.name}" non è valido: ${wrong}.`)
    const created = await this.db.transaction(async (query) => {
      await query('custom_fields_lock', LOCK_SQL, [tenantId])
      const [count] = await query<{ n: number }>('custom_fields_count', COUNT_SQL, [tenantId])
      if ((count?.n ?? 0) >= CUSTOM_FIELD_LIMITS.perTenant) throw errors.tooManyFields(CUSTOM_FIELD_LIMITS.perTenant)
      const [row] = await query<Row>('custom_fields_create', CREATE_SQL, [
        tenantId,
        input.name,
        input.type,
        input.label ?? null,
        input.options ?? null,
        input.maxLength ?? null,
      ])
      if (!row) {
        const rows = await query<Row>('custom_fields_definitions', DEFINITIONS_SQL, [tenantId])
        throw errors.fieldExists(input.name, rows.find((r) => r.name === input.name)?.removing === true)
      }
      return definitionOf(row)
    })
    await this.announce(tenantId)
    return created
  }

  /**
   * Changes what the patch names. A change that values already stored would not satisfy is refused with the
   * number of contacts holding them: a new type (any value), options taken away (values among them), a shorter
   * maxLength (longer texts).
   */
  async update(tenantId: string, name: string, patch: CustomFieldUpdate): Promise<FieldDefinition> {
    const updated = await this.db.transaction(async (query) => {
      await query('custom_fields_lock', LOCK_SQL, [tenantId])
      await query('custom_fields_change_lock', CHANGE_LOCK_SQL, [tenantId, name])
      const rows = await query<Row>('custom_fields_definitions', DEFINITIONS_SQL, [tenantId])
      const found = rows.find((row) => row.name === name && !row.removing)
      if (!found) throw errors.fieldNotFound(name)
      const current = definitionOf(found)
      const next = nextDefinition(current, patch)
      const wrong = definitionProblem(next)
      if (wrong) throw errors.invalidInput('invalid_body', `Il campo "${name}" non è valido: ${wrong}.`)
      // Nothing changes: the definition as it is, its updatedAt too.
      if (JSON.stringify(next) === JSON.stringify(current)) return current
      const holding = await this.holdingOutside(query, tenantId, current, next)
      if (holding > 0) throw errors.fieldInUse(name, holding)
      const [row] = await query<Row>('custom_fields_update', UPDATE_SQL, [
        tenantId,
        name,
        next.type,
        next.label,
        next.options ?? null,
        next.maxLength ?? null,
      ])
      if (!row) throw errors.fieldNotFound(name)
      return definitionOf(row)
    })
    await this.announce(tenantId)
    return updated
  }

  /**
   * Deletes a definition: its values leave every answer at once, and are reclaimed after, in the background unless
   * `reclaim` is false (the caller reclaims them itself). False when not found.
   */
  async remove(tenantId: string, name: string, { reclaim = true } = {}): Promise<boolean> {
    const [row] = await this.db.query<{ name: string }>('custom_fields_remove', REMOVE_SQL, [tenantId, name])
    if (!row) return false
    await this.announce(tenantId)
    if (reclaim) this.reclaim(tenantId, name)
    return true
  }

  /**
   * Reclaims the deleted field's values in the background, unless this instance already is; then forgets the
   * definition once FORGET_SQL may. Another instance (or this one after a restart) takes it up when it next reads
   * the tenant's definitions (the registry's onRemoving).
   */
  reclaim(tenantId: string, name: string): void {
    const key = `${tenantId}\u0000${name}`
    if (this.closed || this.reclaiming.has(key)) return
    this.reclaiming.add(key)
    this.reclaimAll(tenantId, name)
      .catch(this.onError)
      .finally(() => this.reclaiming.delete(key))
  }

  /** Stops starting reclaims and waits for none: a reclaim cut short is taken up again later. */
  close(): void {
    this.closed = true
    for (const timer of this.timers) clearTimeout(timer)
  }

  /** Drops the deleted field's values from the contacts that hold one and no other write holds; answers how many. */
  async reclaimValues(tenantId: string, name: string): Promise<number> {
    let reclaimed = 0
    for (;;) {
      const rows = await this.db.query<unknown>('custom_fields_reclaim', RECLAIM_SQL, [tenantId, name])
      if (rows.length === 0 || this.closed) return reclaimed
      reclaimed += rows.length
    }
  }

  /**
   * Drops the deleted field's values from the contacts the tenant's events hold, walking its events in the order
   * of their key, EVENTS_PER_STATEMENT a statement; answers how many events it rewrote.
   */
  async reclaimEvents(tenantId: string, name: string): Promise<number> {
    let rewritten = 0
    let after = { txn: '-1', n: '-1' }
    while (!this.closed) {
      const [last] = await this.db.query<{ txn: string; n: string }>('custom_fields_events_page', EVENTS_PAGE_SQL, [
        tenantId,
        after.txn,
        after.n,
      ])
      if (!last) return rewritten
      const rows = await this.db.query<unknown>('custom_fields_reclaim_events', RECLAIM_EVENTS_SQL, [
        tenantId,
        name,
        after.txn,
        after.n,
        last.txn,
        last.n,
      ])
      rewritten += rows.length
      after = last
    }
    return rewritten
  }

  private async reclaimAll(tenantId: string, name: string): Promise<void> {
    while (!this.closed) {
      await this.reclaimValues(tenantId, name)
      await this.reclaimEvents(tenantId, name)
      const [held] = await this.db.query<{ n: number }>('custom_fields_holding', HOLDING_SQL, [tenantId, name])
      // Values on contacts that other writes held: their turn comes after a pause.
      if ((held?.n ?? 0) > 0) {
        await this.pause(1000)
        continue
      }
      const [forgotten] = await this.db.query<{ name: string }>('custom_fields_forget', FORGET_SQL, [tenantId, name])
      if (forgotten) {
        await this.announce(tenantId)
        return
      }
      // Within the minute after the deletion: try again later.
      await this.pause(FORGET_RETRY_MS)
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer)
        resolve()
      }, ms)
      timer.unref()
      this.timers.add(timer)
    })
  }

  private async holdingOutside(
    query: Query,
    tenantId: string,
    current: FieldDefinition,
    next: FieldDefinition,
  ): Promise<number> {
    const count = async (name: string, sql: string, params: unknown[]) =>
      (await query<{ n: number }>(name, sql, [tenantId, ...params]))[0]?.n ?? 0
    if (next.type !== current.type) return count('custom_fields_holding', HOLDING_SQL, [current.name])
    const taken = (current.options ?? []).filter((option) => !(next.options ?? []).includes(option))
    if (taken.length > 0) {
      const values = taken.map((option) =>
        JSON.stringify({ [current.name]: current.type === 'multiEnum' ? [option] : option }),
      )
      return count('custom_fields_holding_values', HOLDING_VALUES_SQL, [values])
    }
    if (next.type === 'text' && (next.maxLength ?? Infinity) < (current.maxLength ?? Infinity)) {
      return count('custom_fields_holding_longer', HOLDING_LONGER_SQL, [current.name, next.maxLength])
    }
    return 0
  }
}

/** The definition a patch makes of `current`: what it names replaced, a null removing the label or maxLength. */
function nextDefinition(current: FieldDefinition, patch: CustomFieldUpdate): FieldDefinition {
  const next: FieldDefinition = { ...current }
  if (patch.type !== undefined) next.type = patch.type
  if (patch.label !== undefined) next.label = patch.label
  if (patch.options !== undefined) next.options = patch.options
  if (patch.maxLength !== undefined) {
    if (patch.maxLength === null) delete next.maxLength
    else next.maxLength = patch.maxLength
  }
  // A type without options or a length drops them, unless the patch gives them (then definitionProblem refuses).
  if (patch.type !== undefined && patch.type !== 'enum' && patch.type !== 'multiEnum' && patch.options === undefined) {
    delete next.options
  }
  if (patch.type !== undefined && patch.type !== 'text' && patch.maxLength === undefined) delete next.maxLength
  return next
}
