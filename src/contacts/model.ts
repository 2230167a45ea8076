// The Contact, declared once. CONTACT_FIELDS says, per field, what answers carry, whether a POST or a PATCH may
// set it and with which rule, what a POST stores when it is absent, and an example. Everything else derives from
// it (describeContact): the TypeBox schemas that validate, serialize and make the OpenAPI document, the example
// objects, and how each field is stored (its column is the field's name in snake_case, an enumeration's cast the
// enumeration's name in snake_case), from which src/contacts/sql.ts and src/contacts/batch/sql.ts build every
// statement. Adding a field is a
// line here and its migration (docs/contributing.md); test/contacts/model.test.ts builds all of it from a
// declaration with one field more.
import { type Static, type TOptional, type TSchema, Type } from '@sinclair/typebox'
import { EmailStatus, Stage } from '../generated/prisma/enums.js'
import { EMAIL, Nullable, PHONE, PRINTABLE, Timestamp, VISIBLE_TEXT } from '../schemas/common.js'
import { LIMITS } from '../schemas/limits.js'
import { StringEnum } from '../schemas/string-enum.js'

export const EMAIL_STATUSES = Object.values(EmailStatus)
export const STAGES = Object.values(Stage)

/** Named in the document (components), so that generated clients get one type each, not a copy per use. */
export const EmailStatusSchema = StringEnum(EMAIL_STATUSES, {
  $id: 'EmailStatus',
  description: 'Stato di recapito dell’indirizzo email',
  examples: ['active'],
})
export const StageSchema = StringEnum(STAGES, {
  $id: 'Stage',
  description: 'Fase commerciale del contatto',
  examples: ['customer'],
})
const EmailStatusRef = Type.Unsafe<(typeof EMAIL_STATUSES)[number]>(Type.Ref(EmailStatusSchema))
const StageRef = Type.Unsafe<(typeof STAGES)[number]>(Type.Ref(StageSchema))

/** An existing contact id, for the examples (ids of real data differ). */
export const EXAMPLE_ID = '8b4f3f2e-3f7c-4d0e-9a55-2f2b8d1c9e10'

/** What `pattern` adds to `format: email`, for readers of the document. */
const EMAIL_RULE =
  'Più restrittivo del formato email: parte locale di al massimo 64 caratteri senza virgolette, dominio con almeno ' +
  'un punto (niente localhost né indirizzi IP tra parentesi quadre).'

/**
 * The one rule for an email the API is given: in a POST, a batch item and the list's `email` filter alike, so
 * that the document states it the same way everywhere (`format` and the `pattern` the server checks). `options`
 * may add a description, not change the rule.
 */
export const EmailInput = (options: { description?: string } = {}) =>
  Type.String({
    format: 'email',
    pattern: EMAIL,
    minLength: 3,
    maxLength: LIMITS.email,
    description: EMAIL_RULE,
    ...options,
  })
const Name = () => Type.String({ minLength: 1, maxLength: LIMITS.name, pattern: VISIBLE_TEXT })
const ConsentType = () =>
  Type.String({
    minLength: 1,
    maxLength: LIMITS.consentType,
    pattern: VISIBLE_TEXT,
    description: 'Base giuridica del trattamento; valori noti: contract, consent; la lista è aperta',
  })
const TagNames = () =>
  Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.tag, pattern: PRINTABLE }), {
    maxItems: LIMITS.tagsPerContact,
    description: 'Nomi di tag già esistenti nell’organizzazione',
  })

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
  /** The field's example value: in the document's examples and in its schemas' `examples`. */
  example: unknown
}

/** The fields of a Contact, in the order answers list them. */
export const CONTACT_FIELDS = {
  id: { answer: Type.String({ format: 'uuid' }), example: EXAMPLE_ID },
  email: {
    answer: Nullable(Type.String({ format: 'email', maxLength: LIMITS.email })),
    create: { schema: EmailInput(), required: true },
    example: 'anna.rossi@example.it',
  },
  firstName: {
    answer: Nullable(Type.String()),
    create: { schema: Name() },
    update: { schema: Nullable(Name()) },
    example: 'Anna',
  },
  lastName: {
    answer: Nullable(Type.String()),
    create: { schema: Name() },
    update: { schema: Nullable(Name()) },
    example: 'Rossi',
  },
  phone: {
    answer: Nullable(Type.String()),
    create: {
      schema: Type.String({
        minLength: 3,
        maxLength: LIMITS.phone,
        pattern: PHONE,
        description: 'Almeno 3 cifre; cifre, spazi, + iniziale, punti, trattini e parentesi',
      }),
    },
    example: '+39 02 1234 5678',
  },
  emailStatus: { answer: EmailStatusRef, update: { schema: EmailStatusRef }, initial: 'active', example: 'active' },
  stage: { answer: StageRef, update: { schema: StageRef }, initial: 'lead', example: 'lead' },
  source: {
    answer: Type.String({ description: 'Origine del contatto: "api" se creato da questa API' }),
    createdAs: 'api',
    example: 'api',
  },
  consentType: {
    answer: Type.String(),
    create: { schema: ConsentType(), absent: 'unknown' },
    update: { schema: ConsentType() },
    example: 'consent',
  },
  tags: {
    answer: Type.Array(Type.String(), { description: 'Nomi dei tag, in ordine di code point Unicode' }),
    create: { schema: TagNames(), absent: '{}' },
    batch: 'add',
    example: ['evento-2026', 'newsletter'],
  },
  archivedAt: { answer: Nullable(Timestamp()), example: null },
  acquiredAt: { answer: Timestamp(), example: '2026-03-01T09:30:00.000Z' },
  createdAt: { answer: Timestamp(), example: '2026-03-01T09:30:00.000Z' },
  updatedAt: { answer: Timestamp(), example: '2026-03-02T16:05:12.345Z' },
} satisfies Record<string, FieldSpec>

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
  /** `::<enum>` for enumerations, `::text[]` for lists (of names), '' otherwise. */
  cast: string
  /** Answers carry it as `YYYY-MM-DDTHH:MM:SS.mmmZ`, formatted by PostgreSQL. */
  timestamp: boolean
  /** A list: a batch item gives it as a JSON array. */
  list: boolean
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
  const list = (spec.answer as { type?: string }).type === 'array'
  return {
    field,
    column: snakeCase(field),
    cast: ref ? `::${snakeCase(ref).replace(/^_/, '')}` : list ? '::text[]' : '',
    timestamp: (spec.answer as { format?: string }).format === 'date-time',
    list,
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

export const contact = describeContact(CONTACT_FIELDS)
export const { ContactSchema, ContactCreateSchema, ContactUpdateSchema, BatchItemSchema } = contact
export type Contact = Static<typeof ContactSchema>
export type ContactCreate = Static<typeof ContactCreateSchema>
export type ContactUpdate = Static<typeof ContactUpdateSchema>
export type BatchItem = Static<typeof BatchItemSchema>

/**
 * What remains of a contact in its events once it is erased (DELETE /api/v1/contacts/:id): its id alone. The feed
 * and webhooks show it in place of the contact in every event of an erased contact, and in its contact.erased.
 */
export const ErasedContactSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Id del contatto cancellato' }),
    erased: Type.Literal(true, { description: 'Sempre true: dei dati del contatto non resta nulla' }),
  },
  {
    $id: 'ErasedContact',
    additionalProperties: false,
    description: 'Un contatto cancellato su richiesta dell’interessato: ne resta solo l’id',
    examples: [{ id: EXAMPLE_ID, erased: true }],
  },
)
export type ErasedContact = Static<typeof ErasedContactSchema>

/** A conflict's `existing` member in the error envelope (src/errors/schemas.ts): the contact holding the email. */
export const ExistingContactSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Id del contatto che ha già questa email', examples: [EXAMPLE_ID] }),
    status: Type.Ref(EmailStatusSchema),
  },
  { $id: 'ExistingContact', additionalProperties: false, description: 'Solo con conflict: il contatto già esistente' },
)

export const ContactListSchema = Type.Object(
  {
    data: Type.Array(Type.Ref(ContactSchema)),
    next: Nullable(Timestamp({ description: 'Cursore della pagina successiva; null sull’ultima pagina' })),
  },
  {
    $id: 'ContactList',
    additionalProperties: false,
    examples: [{ data: ContactSchema.examples, next: CONTACT_FIELDS.createdAt.example }],
  },
)
export type ContactList = Static<typeof ContactListSchema>

export const ContactListQuerySchema = Type.Object(
  {
    limit: Type.Integer({
      minimum: 1,
      maximum: LIMITS.pageSize,
      default: LIMITS.defaultPageSize,
      description: 'Contatti per pagina; solo cifre decimali',
      examples: [20],
    }),
    // No example: a client (or the reference page) filling one in would start at some arbitrary instant.
    cursor: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'Valore di `next` della pagina precedente: contatti creati strettamente prima; omesso per la prima',
      }),
    ),
    emailStatus: Type.Optional(EmailStatusRef),
    stage: Type.Optional(StageRef),
    // No example, as for the cursor: the reference page fills examples in, and a filter by an email that names
    // no contact makes the first "Try it out" of the list an empty page.
    email: Type.Optional(
      EmailInput({
        description: `Solo il contatto con questa email, senza distinzione di maiuscole (0 o 1 elemento). ${EMAIL_RULE}`,
      }),
    ),
    includeArchived: Type.Boolean({
      default: false,
      description: 'Includere anche i contatti archiviati',
      examples: [false],
    }),
  },
  { additionalProperties: false },
)
export type ContactListQuery = Static<typeof ContactListQuerySchema>

export const ContactParamsSchema = Type.Object(
  { id: Type.String({ format: 'uuid', description: 'Id del contatto', examples: [EXAMPLE_ID] }) },
  { additionalProperties: false },
)

/** The schemas routes refer to by $id: the document's components. */
export const contactSchemas = [
  EmailStatusSchema,
  StageSchema,
  ContactSchema,
  ContactCreateSchema,
  ContactUpdateSchema,
  ContactListSchema,
  ErasedContactSchema,
]
