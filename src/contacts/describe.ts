// What a declaration of Contact fields (fields.ts) makes: the TypeBox schemas that validate, serialize and make
// the OpenAPI document, the example objects, and how each field is stored (its column is the field's name in
// snake_case, an enumeration's cast the enumeration's name in snake_case), from which src/contacts/sql.ts and
// src/contacts/batch/sql.ts build every statement. test/contacts/model.test.ts derives all of it from a
// declaration with one field more.
import { type TOptional, type TSchema, Type } from '@sinclair/typebox'

/**
 * How a search compares a field (src/contacts/search/): an email (without regard to case), names (word by word,
 * without regard to case, accents or punctuation), a phone (its digits), other text (as names, without an index),
 * an enumeration, an instant (to the millisecond), or the tags.
 */
export type SearchKind = 'email' | 'words' | 'phone' | 'label' | 'enum' | 'instant' | 'tags'

/** One field of a Contact: the declaration describeContact derives the rest from. */
export interface FieldSpec {
  /** The field in every answer that carries a contact. */
  answer: TSchema
  /** A POST may set it, with this rule; `required` in every POST; `absent`: the value stored when not sent. */
  create?: { schema: TSchema; required?: boolean; absent?: string | null }
  /** A PATCH may set it, with this rule. */
  update?: { schema: TSchema }
  /** What a POST stores, whatever the body says (the field is not in ContactCreate). */
  createdAs?: string
  /**
   * What a new contact holds when a PATCH-only field is not given: the column's default, named here for the batch
   * import, which creates with such fields (test/contacts/model.test.ts compares it with the database).
   */
  initial?: string
  /** A batch item adds to the list it gives (tags): what the contact had stays. Otherwise it replaces the value. */
  batch?: 'add'
  /**
   * An object whose members a PATCH or a batch item merges into the stored one, a member given null removing it
   * (the tenant's own fields); a POST's members are stored as given, nulls left out.
   */
  merges?: true
  /** How a SELECT reads the column (`column`, aliased) when not as stored; RETURNING lists read it as written. */
  select?: (column: string) => string
  /** The field's example value: in the document's examples and in its schemas' `examples`. */
  example: unknown
  /** A search can filter by it, compared as this kind says; absent: it cannot. */
  search?: SearchKind
}

type Fields = Record<string, FieldSpec>
type CreateKeys<F extends Fields> = { [K in keyof F]: F[K] extends { create: object } ? K : never }[keyof F]
type UpdateKeys<F extends Fields> = { [K in keyof F]: F[K] extends { update: object } ? K : never }[keyof F]
type BatchKeys<F extends Fields> = Exclude<CreateKeys<F> | UpdateKeys<F>, RequiredKeys<F>>
type RequiredKeys<F extends Fields> = {
  [K in keyof F]: F[K] extends { create: { required: true } } ? K : never
}[keyof F]
/** A batch item's rule for a field: PATCH's where a PATCH may set it (names may be null there), else POST's. */
type BatchSchema<S extends FieldSpec> = S extends { update: { schema: infer T extends TSchema } }
  ? T
  : S extends { create: { schema: infer T extends TSchema } }
    ? T
    : never
type CreateSchema<S> = S extends { schema: infer T extends TSchema; required: true }
  ? T
  : S extends { schema: infer T extends TSchema }
    ? TOptional<T>
    : never

/** How one field is stored in `contacts`. */
export interface StoredField {
  field: string
  column: string
  /** `::<enum>` for enumerations, `::text[]` for lists (of names), `::jsonb` for objects, '' otherwise. */
  cast: string
  /** Answers carry it as `YYYY-MM-DDTHH:MM:SS.mmmZ`, formatted by PostgreSQL. */
  timestamp: boolean
  /** A list: a batch item gives it as a JSON array. */
  list: boolean
  /** An object (JSON), merged by PATCH and the batch: FieldSpec.merges. */
  merges: boolean
  /** How a SELECT reads it: FieldSpec.select. */
  select?: (column: string) => string
}

/** How a Contact is stored: what the statements of src/contacts/sql.ts are built from. */
export interface ContactStorage {
  /** Every field in the answers' order, with its column. */
  answer: { field: string; stored: StoredField }[]
  /** The columns a POST writes: from the body (with the value stored when absent) or set by the server. */
  create: { stored: StoredField; from: { body: string; absent: string | null } | { value: string } }[]
  /** The columns a PATCH may write, by field name. */
  update: Record<string, StoredField>
  /**
   * The columns a batch item may write, in the answers' order: the fields a POST or a PATCH may set, with the
   * value a new contact holds when the item leaves one out (null: none, SQL's NULL), and whether the item adds to
   * the contact's list rather than replacing it.
   */
  batch: { field: string; stored: StoredField; absent: string | null; adds: boolean }[]
}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/** The schema with `examples: [example]`, unless it is a reference (the referenced schema has its own). */
function withExample(schema: TSchema, example: unknown): TSchema {
  return '$ref' in schema ? schema : { ...schema, examples: [example] }
}

function storedField(field: string, spec: FieldSpec): StoredField {
  const ref = (spec.answer as { $ref?: string }).$ref
  const type = (spec.answer as { type?: string }).type
  const list = type === 'array'
  return {
    field,
    column: snakeCase(field),
    cast: ref ? `::${snakeCase(ref).replace(/^_/, '')}` : list ? '::text[]' : type === 'object' ? '::jsonb' : '',
    timestamp: (spec.answer as { format?: string }).format === 'date-time',
    list,
    merges: spec.merges === true,
    ...(spec.select && { select: spec.select }),
  }
}

function storageOf(fields: Fields): ContactStorage {
  const entries = Object.entries(fields)
  return {
    answer: entries.map(([field, spec]) => ({ field, stored: storedField(field, spec) })),
    create: entries.flatMap(([field, spec]): ContactStorage['create'] => {
      if (spec.createdAs !== undefined) return [{ stored: storedField(field, spec), from: { value: spec.createdAs } }]
      if (!spec.create) return []
      return [{ stored: storedField(field, spec), from: { body: field, absent: spec.create.absent ?? null } }]
    }),
    update: Object.fromEntries(
      entries.flatMap(([field, spec]) => (spec.update ? [[field, storedField(field, spec)]] : [])),
    ),
    batch: entries.flatMap(([field, spec]) =>
      spec.create || spec.update
        ? [
            {
              field,
              stored: storedField(field, spec),
              absent: spec.create?.absent ?? spec.initial ?? null,
              adds: spec.batch === 'add',
            },
          ]
        : [],
    ),
  }
}

const pick = <F extends Fields, T>(fields: F, build: (field: string, spec: FieldSpec) => T | undefined) =>
  Object.fromEntries(
    Object.entries(fields).flatMap(([field, spec]) => {
      const value = build(field, spec)
      return value === undefined ? [] : [[field, value]]
    }),
  )

/** Everything a declaration of Contact fields makes: the schemas, their examples, and how the fields are stored. */
export function describeContact<F extends Fields>(fields: F) {
  const example = pick(fields, (_field, spec) => spec.example)
  const ContactSchema = Type.Object(
    pick(fields, (_field, spec) => withExample(spec.answer, spec.example)) as { [K in keyof F]: F[K]['answer'] },
    { $id: 'Contact', additionalProperties: false, examples: [example] },
  )
  const ContactCreateSchema = Type.Object(
    pick(fields, (_field, spec) => {
      if (!spec.create) return undefined
      const schema = withExample(spec.create.schema, spec.example)
      return spec.create.required ? schema : Type.Optional(schema)
    }) as { [K in CreateKeys<F>]: CreateSchema<F[K]['create']> },
    {
      $id: 'ContactCreate',
      additionalProperties: false,
      examples: [pick(fields, (field, spec) => (spec.create ? example[field] : undefined))],
    },
  )
  const ContactUpdateSchema = Type.Object(
    pick(fields, (_field, spec) =>
      spec.update ? Type.Optional(withExample(spec.update.schema, spec.example)) : undefined,
    ) as { [K in UpdateKeys<F>]: TOptional<NonNullable<F[K]['update']>['schema']> },
    {
      $id: 'ContactUpdate',
      additionalProperties: false,
      examples: [pick(fields, (field, spec) => (spec.update ? example[field] : undefined))],
    },
  )
  const BatchItemSchema = Type.Object(
    pick(fields, (_field, spec) => {
      const rule = spec.update?.schema ?? spec.create?.schema
      if (!rule) return undefined
      const schema = withExample(rule, spec.example)
      return spec.create?.required ? schema : Type.Optional(schema)
    }) as { [K in RequiredKeys<F>]: BatchSchema<F[K]> } & { [K in BatchKeys<F>]: TOptional<BatchSchema<F[K]>> },
    {
      $id: 'BatchItem',
      additionalProperties: false,
      description:
        'Un contatto da importare, riconosciuto dall’email senza distinzione di maiuscole: stesse regole di POST ' +
        'per email, phone e tags, di PATCH per gli altri campi.',
      examples: [pick(fields, (field, spec) => (spec.create || spec.update ? example[field] : undefined))],
    },
  )
  return { ContactSchema, ContactCreateSchema, ContactUpdateSchema, BatchItemSchema, storage: storageOf(fields) }
}
