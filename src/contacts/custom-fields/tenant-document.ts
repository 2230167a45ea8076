// The tenant's own OpenAPI document (GET /api/v1/openapi.json with a key): the public document with the tenant's
// fields in place of the generic `fields` (each with its JSON Schema type, no other member) and in the search's
// filters (each field with the operators of its type), so that a client generated from it is typed for the
// tenant's fields: a misspelt name does not compile. Built from the public document once per version of the
// tenant's definitions (the registry's TenantFields) and kept as text.
import { type TSchema, Type } from '@sinclair/typebox'
import { StringEnum } from '../../schemas/string-enum.js'
import type { FieldDefinition } from './model.js'
import { valueSchemaOf } from './model.js'
import type { TenantFields } from './registry.js'
import { CUSTOM_OPERATORS, customValueSchema } from './search.js'

type Schema = Record<string, unknown>
interface Document {
  info: { description?: string }
  components: { schemas: Record<string, Schema & { properties?: Record<string, Schema>; anyOf?: Schema[] }> }
}

/** A TypeBox schema as plain JSON Schema (without TypeBox's symbols). */
const plain = (schema: TSchema): Schema => JSON.parse(JSON.stringify(schema))

/** The tenant's `fields`: each field optional, typed, labelled; `nullable` where null removes a value. */
function valuesOf(definitions: readonly FieldDefinition[], nullable: boolean, description: unknown): Schema {
  const properties = Object.fromEntries(
    definitions.map((definition) => {
      const value = { ...plain(valueSchemaOf(definition)), ...(definition.label && { title: definition.label }) }
      return [definition.name, nullable ? { anyOf: [value, { type: 'null' }] } : value]
    }),
  )
  return { type: 'object', additionalProperties: false, properties, ...(description !== undefined && { description }) }
}

/** The search's filters of one field: one object per shape of value its operators take. */
function filtersOf(definition: FieldDefinition, maxValues: number): Schema[] {
  const byShape = new Map<string, { ops: string[]; value: TSchema | undefined }>()
  for (const op of CUSTOM_OPERATORS[definition.type]) {
    const value = customValueSchema(definition, op, maxValues)
    const shape = JSON.stringify(value ?? null)
    const entry = byShape.get(shape) ?? { ops: [], value }
    entry.ops.push(op)
    byShape.set(shape, entry)
  }
  return [...byShape.values()].map(({ ops, value }) =>
    plain(
      Type.Object(
        { field: StringEnum([`fields.${definition.name}`]), op: StringEnum(ops), ...(value && { value }) },
        { additionalProperties: false },
      ),
    ),
  )
}

/** The public document made the tenant's: a new object, the public one untouched. */
export function tenantDocument(publicDocument: object, fields: TenantFields, maxValues: number): Document {
  const document = structuredClone(publicDocument) as Document
  const schemas = document.components.schemas
  for (const [name, nullable] of [
    ['Contact', false],
    ['ContactCreate', false],
    ['ContactUpdate', true],
    ['BatchItem', true],
  ] as const) {
    const properties = schemas[name]?.properties
    if (properties?.fields) {
      properties.fields = valuesOf(fields.definitions, nullable, properties.fields.description)
    }
  }
  const filter = schemas.SearchFilter
  if (filter?.anyOf) {
    const builtIn = filter.anyOf.filter(
      (variant) =>
        !String((variant.properties as Record<string, Schema> | undefined)?.field?.pattern).startsWith('^fields'),
    )
    filter.anyOf = [...builtIn, ...fields.definitions.flatMap((definition) => filtersOf(definition, maxValues))]
  }
  document.info.description =
    'Documento dell’organizzazione della chiave: `fields` elenca i suoi campi propri con i loro tipi, e la ricerca ' +
    `li accetta come \`fields.<nome>\`.\n\n${document.info.description ?? ''}`
  return document
}

/** The tenant's document as JSON text, built once per version of its definitions. */
export function tenantDocumentCache(publicDocument: () => object, maxValues: number) {
  const built = new WeakMap<TenantFields, string>()
  return (fields: TenantFields): string => {
    let text = built.get(fields)
    if (text === undefined) {
      text = JSON.stringify(tenantDocument(publicDocument(), fields, maxValues))
      built.set(fields, text)
    }
    return text
  }
}
