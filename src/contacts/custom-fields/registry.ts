// Each tenant's own fields as this instance knows them: the definitions, and the validators of their values built
// from them (TypeBox schemas, model.ts) and compiled once, as every route's schema is (Ajv, the same Italian
// messages). Cached per tenant; dropped when an instance announces a change of the tenant's definitions (every
// instance hears it within a second: src/announcements/) and after CACHE_MS whatever happens. The database stays
// the judge of names: the contacts' trigger refuses a value of a field that is not defined.
import type { ErrorObject } from 'ajv'
import type { Database } from '../../db/database.js'
import { type ApiError, errors } from '../../errors/catalogue.js'
import { describeValidationError } from '../../errors/validation-messages.js'
import type { CompileValidator, Validator } from '../../plugins/app/validation.js'
import { CUSTOM_FIELD_LIMITS, type FieldDefinition, valuesSchemaOf } from './model.js'
import { DEFINITIONS_SQL } from './sql.js'

/** How long a tenant's definitions are kept without an announcement of their change. */
export const CACHE_MS = 30_000

/** Values as a write gives them: a POST's (`create`), or a PATCH's and a batch item's (`patch`, null removes). */
export type Values = Record<string, unknown>

/** A tenant's definitions, and the check of values against them. */
export class TenantFields {
  readonly byName: ReadonlyMap<string, FieldDefinition>
  private readonly validators: Partial<Record<'create' | 'patch', Validator>> = {}

  constructor(
    readonly definitions: readonly FieldDefinition[],
    /** The deleted fields whose values are still being reclaimed. */
    readonly removing: readonly string[],
    private readonly compile: CompileValidator,
  ) {
    this.byName = new Map(definitions.map((definition) => [definition.name, definition]))
  }

  /** The names of `values` that are not fields of the tenant. */
  unknownNames(values: Values): string[] {
    return Object.keys(values).filter((name) => !this.byName.has(name))
  }

  /**
   * What is wrong with `values` (unknown names first, then the first value outside its field's rules), as the
   * API's error, or null. `at` is where the values sit in the body: `fields`, or `contacts/3/fields` in a batch.
   */
  check(values: Values, mode: 'create' | 'patch', at = '/fields'): ApiError | null {
    const unknown = this.unknownNames(values)
    const place = at.slice(1).replaceAll(/\/(\d+)\//g, '[$1].')
    if (unknown.length > 0) return errors.unknownFields(unknown, place)
    // JSON as sent, without the spaces PostgreSQL writes: a lower bound of what the trigger counts. A UTF-16 unit
    // is at most 3 bytes in UTF-8, so a short text needs no count.
    const json = JSON.stringify(values)
    const bytes = json.length * 3 <= CUSTOM_FIELD_LIMITS.valuesBytes ? json.length : Buffer.byteLength(json)
    if (bytes > CUSTOM_FIELD_LIMITS.valuesBytes) return errors.fieldsTooLarge(bytes, place)
    let validate = this.validators[mode]
    if (!validate) {
      validate = this.compile({ schema: valuesSchemaOf(this.definitions, mode === 'patch'), httpPart: 'body' })
      this.validators[mode] = validate
    }
    if (validate(values)) return null
    const found: ErrorObject[] = (validate.errors ?? []).map((error) => ({
      ...error,
      instancePath: `${at}${error.instancePath}`,
    }))
    return errors.invalidInput('invalid_body', describeValidationError(found, 'body'))
  }
}

interface Cached {
  at: number
  fields: Promise<TenantFields>
}

export class CustomFieldRegistry {
  private readonly tenants = new Map<string, Cached>()

  constructor(
    private readonly db: Pick<Database, 'query'>,
    private readonly compile: CompileValidator,
    /** Told of the deleted fields a tenant still holds values of, each time its definitions are read. */
    private readonly onRemoving: (tenantId: string, names: readonly string[]) => void = () => {},
  ) {}

  /** The tenant's fields, from the cache when fresh. */
  of(tenantId: string): Promise<TenantFields> {
    const cached = this.tenants.get(tenantId)
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.fields
    const fields = this.load(tenantId)
    this.tenants.set(tenantId, { at: Date.now(), fields })
    // A failed read is not kept: the next request reads again.
    fields.catch(() => this.tenants.delete(tenantId))
    return fields
  }

  /** Checks `values` against the tenant's fields; names it does not know are looked up again once, fresh. */
  async check(tenantId: string, values: Values, mode: 'create' | 'patch', at?: string): Promise<ApiError | null> {
    return (await this.knowing(tenantId, [values])).check(values, mode, at)
  }

  /**
   * The tenant's fields, read again once when one of `given` names a field they do not know: defined a moment ago,
   * perhaps through another instance whose announcement is still on its way.
   */
  async knowing(tenantId: string, given: readonly Values[]): Promise<TenantFields> {
    const fields = await this.of(tenantId)
    if (!given.some((values) => fields.unknownNames(values).length > 0)) return fields
    this.forget(tenantId)
    return this.of(tenantId)
  }

  forget(tenantId: string): void {
    this.tenants.delete(tenantId)
  }

  forgetAll(): void {
    this.tenants.clear()
  }

  private async load(tenantId: string): Promise<TenantFields> {
    const rows = await this.db.query<FieldDefinition & { removing: boolean; options: string[] | null }>(
      'custom_fields_definitions',
      DEFINITIONS_SQL,
      [tenantId],
    )
    const definitions = rows.filter((row) => !row.removing).map(definitionOf)
    const removing = rows.filter((row) => row.removing).map((row) => row.name)
    if (removing.length > 0) this.onRemoving(tenantId, removing)
    return new TenantFields(definitions, removing, this.compile)
  }
}

/** A row of custom_fields as the API shows a definition: options and maxLength only where they apply. */
export function definitionOf(
  row: FieldDefinition & { options?: string[] | null; maxLength?: number | null; removing?: boolean },
): FieldDefinition {
  const { removing: _removing, options, maxLength, ...rest } = row
  return {
    ...rest,
    ...(options !== null && options !== undefined && { options }),
    ...(maxLength !== null && maxLength !== undefined && { maxLength }),
  }
}
