// Search by the tenant's own fields (`fields.<name>` in POST /api/v1/contacts/search): which operators each type
// takes, the rule of their values, and each filter's SQL condition on contacts.fields. Value filters (eq, in, hasAll,
// hasAny) and the presence of a boolean or an enum are containments that the GIN index of (tenant_id, fields)
// serves; ranges, prefixes and the presence of other types are conditions on the contacts the rest of the search
// reads (docs/api-fields.md).
import { type TSchema, Type } from '@sinclair/typebox'
import { WORDED_TEXT } from '../../schemas/common.js'
import { StringEnum } from '../../schemas/string-enum.js'
import { type FieldDefinition, type FieldType, valueSchemaOf } from './model.js'

/** What names a field of the tenant's own in a filter. */
export const CUSTOM_FIELD_PREFIX = 'fields.'

const ORDERED = ['eq', 'neq', 'in', 'notIn', 'lt', 'lte', 'gt', 'gte', 'between', 'exists', 'notExists']

/** The operators of each type. */
export const CUSTOM_OPERATORS: Record<FieldType, readonly string[]> = {
  text: ['eq', 'neq', 'in', 'notIn', 'prefix', 'exists', 'notExists'],
  number: ORDERED,
  date: ORDERED,
  datetime: ORDERED,
  boolean: ['eq', 'neq', 'exists', 'notExists'],
  enum: ['eq', 'neq', 'in', 'notIn', 'exists', 'notExists'],
  multiEnum: ['hasAll', 'hasAny', 'hasNone', 'exists', 'notExists'],
}

/**
 * The options of an enum whose presence (exists, notExists) is written as its values ORed, which the index answers:
 * past them, each contact the search reads would test every option (an outside tester's enum of 100 options took
 * 100 ms on 5,500 contacts), and the name is tested instead.
 */
export const PRESENCE_BY_VALUES = 10

/** Every operator a filter of a field of the tenant's own may name (the document's schema of such a filter). */
export const ALL_CUSTOM_OPERATORS = [...new Set(Object.values(CUSTOM_OPERATORS).flat())]

/** The schema of a filter's value for `op` on `definition`; undefined when the operator takes none. */
export function customValueSchema(definition: FieldDefinition, op: string, maxValues: number): TSchema | undefined {
  if (op === 'exists' || op === 'notExists') return undefined
  const one =
    definition.type === 'multiEnum'
      ? StringEnum(definition.options ?? [])
      : op === 'prefix'
        ? Type.String({ minLength: 1, maxLength: definition.maxLength ?? 1000, pattern: WORDED_TEXT })
        : valueSchemaOf(definition)
  if (op === 'between') return Type.Array(one, { minItems: 2, maxItems: 2 })
  if (['in', 'notIn', 'hasAll', 'hasAny', 'hasNone'].includes(op)) {
    return Type.Array(one, { minItems: 1, maxItems: maxValues })
  }
  return one
}

/** Adds a value to a statement's parameters and answers its placeholder, cast to `type`. */
export type AddParam = (value: unknown, type: string) => string

const COMPARED: Record<string, string> = { lt: '<', lte: '<=', gt: '>', gte: '>=' }

/** The SQL condition of a filter on the field `definition` (of contacts aliased `c`). */
export function customCondition(definition: FieldDefinition, op: string, value: unknown, add: AddParam): string {
  const { name, type } = definition
  const key = () => add(name, 'text')
  // A containment's object is written into the statement as a constant, not sent as a parameter: Citus sends a
  // statement's parameters on to the worker, which plans it for any value, and a few values ORed then looked
  // frequent enough to read the tenant's contacts in order. With constants the worker estimates each from the
  // column's statistics, as PostgreSQL does with the values of a statement planned each time (these are). The
  // text is JSON.stringify's of values already checked against the field, in an escape string literal, whose
  // meaning no server setting changes.
  const holding = (held: unknown) => JSON.stringify({ [name]: held })
  const constant = (json: string) => `E'${json.replaceAll('\\', '\\\\').replaceAll("'", "''")}'::jsonb`
  const contains = (held: unknown) => `c.fields @> ${constant(holding(held))}`
  // Each value its own containment, ORed: each estimated from the statistics, a rare one read through the index.
  const containsAny = (values: unknown[], wrap: (v: unknown) => unknown) =>
    `(${values.map((v) => contains(wrap(v))).join(' OR ')})`
  // The index (jsonb_path_ops) holds values, not keys: a boolean or an enum of few options is present when it holds
  // one of its values, which the index answers. Other fields (a multiEnum may hold []) are looked for in the rows read.
  const present = () => {
    const options = type === 'boolean' ? [true, false] : (definition.options ?? [])
    const byValues =
      type === 'boolean' || (type === 'enum' && options.length > 0 && options.length <= PRESENCE_BY_VALUES)
    return byValues ? containsAny(options, (v) => v) : `(c.fields ? ${key()})`
  }
  switch (op) {
    case 'exists':
      return present()
    case 'notExists':
      return `NOT ${present()}`
    case 'eq':
      return contains(value)
    case 'neq':
      return `NOT (${contains(value)})`
    case 'in':
      return containsAny(value as unknown[], (v) => v)
    case 'notIn':
      return `NOT (${containsAny(value as unknown[], (v) => v)})`
    case 'hasAll':
      return contains(value)
    case 'hasAny':
      return containsAny(value as unknown[], (v) => [v])
    case 'hasNone':
      return `NOT (${containsAny(value as unknown[], (v) => [v])})`
    case 'prefix':
      return `starts_with(search_text(c.fields ->> ${key()}), search_text(${add(value, 'text')}))`
    default: {
      // Ranges: numbers as numbers; dates and instants, one format each, as text in code-point order.
      const number = type === 'number'
      const k = key()
      const held = number ? `(c.fields ->> ${k})::numeric` : `(c.fields ->> ${k}) COLLATE "C"`
      const given = (v: unknown) => add(v, number ? 'numeric' : 'text')
      const typed = `jsonb_typeof(c.fields -> ${k}) = '${number ? 'number' : 'string'}'`
      if (op === 'between') {
        const [from, to] = value as [unknown, unknown]
        return `CASE WHEN ${typed} THEN ${held} >= ${given(from)} AND ${held} <= ${given(to)} END`
      }
      return `CASE WHEN ${typed} THEN ${held} ${COMPARED[op]} ${given(value)} END`
    }
  }
}
