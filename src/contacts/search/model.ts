// The search's shapes (POST /api/v1/contacts/search): a filter per field and operator, derived from the Contact's
// declaration (src/contacts/fields.ts, each field's `search` kind), groups of filters, the request and the answer.
// The list's own filters (GET /api/v1/contacts) are one group of these (src/contacts/model.ts).
import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { Nullable, PRINTABLE, Timestamp, WORDED_TEXT } from '../../schemas/common.js'
import { LIMITS } from '../../schemas/limits.js'
import { StringEnum } from '../../schemas/string-enum.js'
import { FIELD_NAME, type FieldDefinition } from '../custom-fields/model.js'
import { ALL_CUSTOM_OPERATORS, CUSTOM_FIELD_PREFIX } from '../custom-fields/search.js'
import type { FieldSpec, SearchKind } from '../describe.js'
import { CONTACT_FIELDS, ContactSchema, EMAIL_RULE, EmailInput, EmailStatusRef, StageRef } from '../model.js'

/** The search's limits, as HubSpot's CRM search has them: stated in the document and docs/api-search.md. */
export const SEARCH_LIMITS = {
  groups: 5,
  filtersPerGroup: 6,
  filters: 18,
  values: 100,
  /** `query` and the list's `q`, in characters. */
  query: 200,
} as const

export const SORTS = ['-createdAt', 'createdAt', '-updatedAt', 'updatedAt'] as const
export type Sort = (typeof SORTS)[number]

/** The operators of each kind of field, by the shape of their value. */
const OPERATORS = {
  text: { one: ['eq', 'neq', 'prefix'], many: ['in', 'notIn'], none: ['exists', 'notExists'] },
  enum: { one: ['eq', 'neq'], many: ['in', 'notIn'], none: [] },
  instant: { one: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte'], range: ['between'], none: ['exists', 'notExists'] },
  tags: { many: ['hasAll', 'hasAny', 'hasNone'], none: ['exists', 'notExists'] },
} as const

type Shapes = { one?: readonly string[]; many?: readonly string[]; range?: readonly string[]; none: readonly string[] }

const shapesOf = (kind: SearchKind): Shapes =>
  kind === 'enum' || kind === 'instant' || kind === 'tags' ? OPERATORS[kind] : OPERATORS.text

/** Every operator, in the order the document and messages list them. */
const OPERATOR_ORDER = [
  'eq',
  'neq',
  'in',
  'notIn',
  'lt',
  'lte',
  'gt',
  'gte',
  'between',
  'prefix',
  'hasAll',
  'hasAny',
  'hasNone',
  'exists',
  'notExists',
]

/** Every operator a field of this kind takes. */
export function operatorsOf(kind: SearchKind): string[] {
  const shapes = shapesOf(kind)
  const ops: string[] = [...(shapes.one ?? []), ...(shapes.many ?? []), ...(shapes.range ?? []), ...shapes.none]
  return OPERATOR_ORDER.filter((op) => ops.includes(op))
}

/** The longest a text value may be: the field's own limit where it has one. */
function textLimit(spec: FieldSpec): number {
  const rule = (spec.create?.schema ?? spec.update?.schema) as { maxLength?: number } | undefined
  return rule?.maxLength ?? LIMITS.searchText
}

/** Digits, spaces, a leading +, dots, dashes and parentheses, with a digit at least: a phone or its start. */
export const PHONE_PART = '^\\+?[0-9 ().-]*[0-9][0-9 ().-]*$'

/** One value of a field, as its filters take it. */
function oneValueOf(kind: SearchKind, spec: FieldSpec): TSchema {
  switch (kind) {
    case 'enum':
      return spec.answer
    case 'instant':
      return Timestamp({ description: 'Istante ISO 8601; confrontato al millisecondo, come le risposte lo mostrano' })
    case 'tags':
      return Type.String({ minLength: 1, maxLength: LIMITS.tag, pattern: PRINTABLE })
    case 'phone':
      return Type.String({ minLength: 1, maxLength: LIMITS.phone, pattern: PHONE_PART })
    default:
      // Compared by their words (names and emails found by them first, through an index): a value has one at least.
      return Type.String({ minLength: 1, maxLength: textLimit(spec), pattern: WORDED_TEXT })
  }
}

const values = (value: TSchema) => Type.Array(value, { minItems: 1, maxItems: SEARCH_LIMITS.values })

/** A searchable field: its name, how it is compared, and the schema of one of its values. */
export interface SearchField {
  name: string
  kind: SearchKind
  value: TSchema
}

/** The Contact's searchable fields, in the answers' order. */
export const CONTACT_SEARCH_FIELDS: SearchField[] = Object.entries(CONTACT_FIELDS as Record<string, FieldSpec>).flatMap(
  ([name, spec]) => (spec.search ? [{ name, kind: spec.search, value: oneValueOf(spec.search, spec) }] : []),
)

/** The schema of a filter's value for an operator of a field; undefined when the operator takes none. */
export function valueSchemaOf(field: SearchField, op: string): TSchema | undefined {
  const shapes = shapesOf(field.kind)
  if (shapes.one?.includes(op)) return field.value
  if (shapes.many?.includes(op)) return values(field.value)
  if (shapes.range?.includes(op)) return Type.Array(field.value, { minItems: 2, maxItems: 2 })
  return undefined
}

/** The filters of one field: an object per shape of value, each naming the operators that take it. */
function filtersOf(field: SearchField): TSchema[] {
  const shapes = shapesOf(field.kind)
  const variant = (ops: readonly string[] | undefined, value?: TSchema) =>
    ops && ops.length > 0
      ? [
          Type.Object(
            {
              field: Type.Literal(field.name),
              op: StringEnum(ops),
              ...(value && { value }),
            },
            { additionalProperties: false },
          ),
        ]
      : []
  return [
    ...variant(shapes.one, field.value),
    ...variant(shapes.many, values(field.value)),
    ...variant(shapes.range, Type.Array(field.value, { minItems: 2, maxItems: 2 })),
    ...variant(shapes.none),
  ]
}

/** A field of the tenant's own, in a filter: `fields.<name>`. */
export const CUSTOM_FIELD_FILTER = `^${CUSTOM_FIELD_PREFIX.replace('.', '\\.')}${FIELD_NAME.slice(1)}`

const CustomValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()])

/**
 * A filter of a field of the tenant's own: its operators and values depend on the field's type, which the tenant's
 * document (GET /api/v1/openapi.json with its key) states field by field; the server checks them against the
 * tenant's definitions.
 */
const CustomFieldFilterSchema = Type.Object(
  {
    field: Type.String({
      pattern: CUSTOM_FIELD_FILTER,
      description: '`fields.` e il nome di un campo proprio dell’organizzazione (GET /api/v1/fields)',
    }),
    op: StringEnum(ALL_CUSTOM_OPERATORS, { description: 'Un operatore del tipo del campo (docs/api-fields.md)' }),
    value: Type.Optional(
      Type.Union([CustomValue, Type.Array(CustomValue, { minItems: 1, maxItems: SEARCH_LIMITS.values })]),
    ),
  },
  { additionalProperties: false },
)

/** A filter of any of `fields`, or of a field of the tenant's own, as one schema (a union of every field's filters). */
export function filterSchemaOf(fields: readonly SearchField[], options: Record<string, unknown> = {}) {
  return Type.Union([...fields.flatMap(filtersOf), CustomFieldFilterSchema], {
    description:
      'Un filtro: un campo del contatto (field), un operatore (op) tra quelli del suo tipo e, salvo exists e ' +
      'notExists, un valore (value) del tipo del campo; in, notIn, hasAll, hasAny e hasNone vogliono una lista ' +
      `(1-${SEARCH_LIMITS.values} valori), between due istanti [da, a]`,
    ...options,
  })
}

export const SearchFilterSchema = filterSchemaOf(CONTACT_SEARCH_FIELDS, {
  $id: 'SearchFilter',
  examples: [{ field: 'tags', op: 'hasAll', value: ['vip'] }],
})

/**
 * A filter as the search code handles it: a field, an operator and its value, checked by SearchFilterSchema; on a
 * field of the tenant's own, its definition too (the repository finds it).
 */
export interface Filter {
  field: string
  op: string
  value?: unknown
  definition?: FieldDefinition
}

export const FilterGroupSchema = Type.Object(
  {
    filters: Type.Array(Type.Ref(SearchFilterSchema), {
      minItems: 1,
      maxItems: SEARCH_LIMITS.filtersPerGroup,
      description: `Da 1 a ${SEARCH_LIMITS.filtersPerGroup} filtri, tutti veri per ogni contatto trovato (AND)`,
    }),
  },
  { $id: 'FilterGroup', additionalProperties: false },
)

/** The words of a text search (`query`, the list's `q`): at least one letter or digit. */
export const SearchText = (description: string) =>
  Type.String({ minLength: 1, maxLength: SEARCH_LIMITS.query, pattern: WORDED_TEXT, description })

export const QUERY_RULE =
  'Ogni parola deve essere l’inizio di una parola di nome, cognome o email, senza distinzione di maiuscole né di ' +
  'accenti (nicolo trova Nicolò); le parole sono separate da spazi e punteggiatura, l’apostrofo resta nella parola ' +
  '(d’a trova D’Angelo)'

export const SearchRequestSchema = Type.Object(
  {
    filterGroups: Type.Optional(
      Type.Array(Type.Ref(FilterGroupSchema), {
        maxItems: SEARCH_LIMITS.groups,
        description:
          `Fino a ${SEARCH_LIMITS.groups} gruppi: un contatto è trovato se soddisfa almeno un gruppo (OR). In tutto al ` +
          `massimo ${SEARCH_LIMITS.filters} filtri. Omesso o vuoto: tutti i contatti`,
      }),
    ),
    query: Type.Optional(SearchText(`Ricerca per parole, in AND con i gruppi. ${QUERY_RULE}`)),
    includeArchived: Type.Optional(
      Type.Boolean({
        description:
          'Includere gli archiviati anche nei gruppi che non nominano archivedAt (quelli che lo nominano li ' +
          'includono comunque)',
      }),
    ),
    sort: Type.Optional(
      StringEnum(SORTS, {
        default: '-createdAt',
        description:
          'Ordine: per createdAt o updatedAt, crescente o (con -) decrescente. Vedi docs/api-search.md per che cosa ' +
          'restituisce chi percorre tutte le pagine mentre i contatti cambiano',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: LIMITS.pageSize,
        default: LIMITS.defaultPageSize,
        description: 'Contatti per pagina',
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_-]+$',
        maxLength: 1024,
        description: 'Il valore di `next` della pagina precedente, così com’è; omesso per la prima',
      }),
    ),
    count: Type.Optional(
      Type.Boolean({
        description:
          'Con true la risposta porta `total`, il numero esatto dei contatti trovati, se contarli richiede meno di ' +
          'SEARCH_COUNT_TIMEOUT_MS (altrimenti `total` manca)',
      }),
    ),
  },
  {
    $id: 'SearchRequest',
    additionalProperties: false,
    examples: [
      {
        filterGroups: [
          {
            filters: [
              { field: 'tags', op: 'hasAll', value: ['vip'] },
              { field: 'stage', op: 'eq', value: 'customer' },
            ],
          },
          { filters: [{ field: 'tags', op: 'hasAny', value: ['evento-2026'] }] },
        ],
        query: 'rossi',
        sort: '-updatedAt',
        limit: 50,
        count: true,
      },
    ],
  },
)
export type SearchRequest = Static<typeof SearchRequestSchema>

export const SearchPageSchema = Type.Object(
  {
    data: Type.Array(Type.Ref(ContactSchema)),
    next: Nullable(Type.String({ description: 'Il cursore della pagina successiva; null sull’ultima' })),
    total: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Quanti contatti trova la ricerca, solo con count: true' }),
    ),
  },
  {
    $id: 'SearchPage',
    additionalProperties: false,
    examples: [{ data: ContactSchema.examples, next: 'eyJzIjoiLWNyZWF0ZWRBdCJ9', total: 123 }],
  },
)
export type SearchPage = Static<typeof SearchPageSchema>

/** An instant of the list's ranges. */
const Instant = (description: string) => Type.Optional(Type.String({ format: 'date-time', description }))

/**
 * The list's query (GET /api/v1/contacts): its page and its filters, which are the filters of one search group
 * (ContactRepository.list), and `q`, the search's `query`.
 */
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
    tag: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.tag, pattern: PRINTABLE }), {
        maxItems: SEARCH_LIMITS.values,
        description:
          'Solo i contatti che hanno tutti questi tag (parametro ripetibile: `?tag=vip&tag=newsletter`). Un nome che ' +
          'l’organizzazione non ha è un tag che nessun contatto porta: la pagina è vuota',
      }),
    ),
    q: Type.Optional(SearchText(`Ricerca per parole. ${QUERY_RULE}`)),
    createdAfter: Instant('Solo i contatti creati in questo istante o dopo (al millisecondo)'),
    createdBefore: Instant('Solo i contatti creati prima di questo istante (al millisecondo)'),
    updatedAfter: Instant('Solo i contatti modificati l’ultima volta in questo istante o dopo (al millisecondo)'),
    updatedBefore: Instant('Solo i contatti modificati l’ultima volta prima di questo istante (al millisecondo)'),
    includeArchived: Type.Boolean({
      default: false,
      description: 'Includere anche i contatti archiviati',
      examples: [false],
    }),
  },
  { additionalProperties: false },
)
export type ContactListQuery = Static<typeof ContactListQuerySchema>

/** The list's filters as one search group: the same conditions, the same indexes. */
export function listFilters(query: ContactListQuery): Filter[] {
  const filters: Filter[] = []
  if (query.emailStatus !== undefined) filters.push({ field: 'emailStatus', op: 'eq', value: query.emailStatus })
  if (query.stage !== undefined) filters.push({ field: 'stage', op: 'eq', value: query.stage })
  if (query.email !== undefined) filters.push({ field: 'email', op: 'eq', value: query.email })
  if (query.tag !== undefined && query.tag.length > 0) filters.push({ field: 'tags', op: 'hasAll', value: query.tag })
  if (query.createdAfter !== undefined) filters.push({ field: 'createdAt', op: 'gte', value: query.createdAfter })
  if (query.createdBefore !== undefined) filters.push({ field: 'createdAt', op: 'lt', value: query.createdBefore })
  if (query.updatedAfter !== undefined) filters.push({ field: 'updatedAt', op: 'gte', value: query.updatedAfter })
  if (query.updatedBefore !== undefined) filters.push({ field: 'updatedAt', op: 'lt', value: query.updatedBefore })
  return filters
}

/** The schemas routes refer to by $id: the document's components. */
export const searchSchemas = [SearchFilterSchema, FilterGroupSchema, SearchRequestSchema, SearchPageSchema]
