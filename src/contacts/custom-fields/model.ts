// A tenant's own fields (docs/api-fields.md): what a definition is, the rules of its values as TypeBox schemas
// (built per tenant from its definitions, compiled once by registry.ts), and the shapes of the definitions' API.
// The Contact carries the values in `fields` (src/contacts/fields.ts).
import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox'
import { Nullable, PRINTABLE, Timestamp, VISIBLE_TEXT } from '../../schemas/common.js'
import { StringEnum } from '../../schemas/string-enum.js'

export const FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'datetime', 'enum', 'multiEnum'] as const
export type FieldType = (typeof FIELD_TYPES)[number]

/** The limits of the tenant's own fields, stated in docs/api-fields.md. */
export const CUSTOM_FIELD_LIMITS = {
  /** Fields a tenant defines at most. */
  perTenant: 100,
  /** Characters of a name. */
  name: 64,
  /** The longest a text value may be (a text field's maxLength, at most). */
  text: 1000,
  /** Options of an enum or multiEnum. */
  options: 100,
  /** Characters of an option. */
  option: 100,
  /** Characters of a label. */
  label: 200,
  /** Bytes of a contact's values, as PostgreSQL writes them out (`fields::text`, UTF-8). */
  valuesBytes: 8192,
} as const

/** A field's name: lower-case letters, digits and `_`, starting with a letter. */
export const FIELD_NAME = `^[a-z][a-z0-9_]{0,${CUSTOM_FIELD_LIMITS.name - 1}}$`

/** A date without a time, and an instant as the Contact's: the patterns the values' schemas hold. */
const DATE = '^(?!0000)[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$'
const DATETIME = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$'

/** A definition as the API answers it and the service keeps it. */
export interface FieldDefinition {
  name: string
  type: FieldType
  label: string | null
  options?: string[]
  maxLength?: number
  createdAt: string
  updatedAt: string
}

/** The rule of a value of `definition`, as a JSON Schema (TypeBox). */
export function valueSchemaOf(definition: Pick<FieldDefinition, 'type' | 'options' | 'maxLength'>): TSchema {
  switch (definition.type) {
    case 'text':
      return Type.String({ maxLength: definition.maxLength ?? CUSTOM_FIELD_LIMITS.text, pattern: PRINTABLE })
    case 'number':
      // Finite: JSON's 1e309 parses as Infinity, which JSON cannot write back (it would be stored as null).
      return Type.Number({ minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE })
    case 'boolean':
      return Type.Boolean()
    case 'date':
      return Type.String({ format: 'date', pattern: DATE, examples: ['1990-05-17'] })
    case 'datetime':
      return Type.String({ format: 'date-time', pattern: DATETIME, examples: ['2026-03-01T09:30:00.000Z'] })
    case 'enum':
      return StringEnum(definition.options ?? [])
    case 'multiEnum':
      return Type.Array(StringEnum(definition.options ?? []), {
        uniqueItems: true,
        maxItems: definition.options?.length ?? 0,
      })
  }
}

/**
 * The tenant's `fields` as an object schema: each defined field optional, no other member. `nullable`: a PATCH's
 * or a batch item's, where null removes a value.
 */
export function valuesSchemaOf(definitions: readonly FieldDefinition[], nullable: boolean): TObject {
  return Type.Object(
    Object.fromEntries(
      definitions.map((definition) => {
        const schema = { ...valueSchemaOf(definition), ...(definition.label && { title: definition.label }) }
        return [definition.name, Type.Optional(nullable ? Nullable(schema) : schema)]
      }),
    ),
    { additionalProperties: false },
  )
}

/** Any value a field of any type holds: what the generic document says of `fields`. */
const AnyValue = () =>
  Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String())], {
    description: 'Un valore del tipo del campo: testo, numero, booleano, data o istante come testo, lista di opzioni',
  })

const FieldNameKey = () => Type.String({ pattern: FIELD_NAME })

/** `fields` in answers: the values set, `{}` when none. */
export const FieldValuesAnswer = () =>
  Type.Record(Type.String(), AnyValue(), {
    description:
      'I campi propri dell’organizzazione (GET /api/v1/fields) con un valore; {} se nessuno. Il documento ' +
      'dell’organizzazione (GET /api/v1/openapi.json con la chiave) ne indica i tipi.',
  })

/**
 * `fields` in a POST: each a field the tenant defines, of its type. The value's type is the tenant's document's to
 * state and its validator's to check (registry.ts), which names what the field wants; here, any value.
 */
export const FieldValuesInput = () =>
  Type.Record(FieldNameKey(), Type.Unknown({ description: 'Un valore del tipo del campo' }), {
    maxProperties: CUSTOM_FIELD_LIMITS.perTenant,
    description: 'Valori dei campi propri dell’organizzazione, ciascuno del tipo del campo',
  })

/** `fields` in a PATCH or a batch item: merged into the contact's, null removing a value. */
export const FieldValuesPatch = () =>
  Type.Record(FieldNameKey(), Type.Unknown({ description: 'Un valore del tipo del campo, o null' }), {
    maxProperties: CUSTOM_FIELD_LIMITS.perTenant,
    description:
      'Valori dei campi propri, uniti a quelli del contatto: i campi non nominati restano; null toglie un valore',
  })

const Label = () =>
  Type.String({
    minLength: 1,
    maxLength: CUSTOM_FIELD_LIMITS.label,
    pattern: VISIBLE_TEXT,
    description: 'Nome per le persone',
  })
const Options = () =>
  Type.Array(Type.String({ minLength: 1, maxLength: CUSTOM_FIELD_LIMITS.option, pattern: VISIBLE_TEXT }), {
    minItems: 1,
    maxItems: CUSTOM_FIELD_LIMITS.options,
    uniqueItems: true,
    description: `Solo per enum e multiEnum: i valori ammessi (da 1 a ${CUSTOM_FIELD_LIMITS.options})`,
  })
const MaxLength = () =>
  Type.Integer({
    minimum: 1,
    maximum: CUSTOM_FIELD_LIMITS.text,
    description: `Solo per text: la lunghezza massima di un valore (predefinita ${CUSTOM_FIELD_LIMITS.text})`,
  })
const TypeOfField = () =>
  StringEnum(FIELD_TYPES, {
    description:
      'text, number, boolean, date (AAAA-MM-GG), datetime (ISO 8601 in UTC con millisecondi e Z), enum e ' +
      'multiEnum (uno o più tra options)',
  })

export const CustomFieldSchema = Type.Object(
  {
    name: Type.String({ pattern: FIELD_NAME, description: 'Nome del campo, la chiave in `fields`' }),
    type: TypeOfField(),
    label: Nullable(Type.String()),
    options: Type.Optional(Type.Array(Type.String())),
    maxLength: Type.Optional(Type.Integer()),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  {
    $id: 'CustomField',
    additionalProperties: false,
    description: 'Un campo proprio dell’organizzazione',
    examples: [
      {
        name: 'livello',
        type: 'enum',
        label: 'Livello cliente',
        options: ['bronzo', 'argento', 'oro'],
        createdAt: '2026-03-01T09:30:00.000Z',
        updatedAt: '2026-03-01T09:30:00.000Z',
      },
    ],
  },
)

export const CustomFieldCreateSchema = Type.Object(
  {
    name: Type.String({
      pattern: FIELD_NAME,
      description:
        `Lettere minuscole, cifre e _, iniziale una lettera, al massimo ${CUSTOM_FIELD_LIMITS.name} caratteri; ` +
        'non il nome di un campo del contatto',
    }),
    type: TypeOfField(),
    label: Type.Optional(Label()),
    options: Type.Optional(Options()),
    maxLength: Type.Optional(MaxLength()),
  },
  {
    $id: 'CustomFieldCreate',
    additionalProperties: false,
    examples: [{ name: 'compleanno', type: 'date', label: 'Compleanno' }],
  },
)
export type CustomFieldCreate = Static<typeof CustomFieldCreateSchema>

export const CustomFieldUpdateSchema = Type.Object(
  {
    type: Type.Optional(TypeOfField()),
    label: Type.Optional(Nullable(Label())),
    options: Type.Optional(Options()),
    maxLength: Type.Optional(Nullable(MaxLength())),
  },
  {
    $id: 'CustomFieldUpdate',
    additionalProperties: false,
    description:
      'Cambia solo ciò che è presente. Un cambio che i valori già salvati non rispetterebbero (il tipo, opzioni ' +
      'tolte, una lunghezza minore) è rifiutato con 409 field_in_use, che dice quanti contatti li hanno',
    examples: [{ label: 'Livello', options: ['bronzo', 'argento', 'oro', 'platino'] }],
  },
)
export type CustomFieldUpdate = Static<typeof CustomFieldUpdateSchema>

export const CustomFieldListSchema = Type.Object(
  { data: Type.Array(Type.Ref(CustomFieldSchema)) },
  { $id: 'CustomFieldList', additionalProperties: false },
)

export const CustomFieldParamsSchema = Type.Object(
  { name: Type.String({ pattern: FIELD_NAME, description: 'Nome del campo', examples: ['livello'] }) },
  { additionalProperties: false },
)

/** What is wrong with a definition as a whole (options only for enums, maxLength only for text), or null. */
export function definitionProblem(definition: Pick<FieldDefinition, 'type' | 'options' | 'maxLength'>): string | null {
  const enumerated = definition.type === 'enum' || definition.type === 'multiEnum'
  if (enumerated && definition.options === undefined) {
    return `un campo ${definition.type} vuole "options", i valori ammessi`
  }
  if (!enumerated && definition.options !== undefined) return `"options" vale solo per enum e multiEnum`
  if (definition.type !== 'text' && definition.maxLength !== undefined) return '"maxLength" vale solo per text'
  return null
}

export const customFieldSchemas = [
  CustomFieldSchema,
  CustomFieldCreateSchema,
  CustomFieldUpdateSchema,
  CustomFieldListSchema,
]
