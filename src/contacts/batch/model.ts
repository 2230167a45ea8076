// The batch import's shapes. A batch is up to 1,000 BatchItems (src/contacts/model.ts derives BatchItem from the
// Contact's fields); the answer has one BatchResult per item, in the order sent, and the counts of each outcome.
import { type Static, Type } from '@sinclair/typebox'
import type { ErrorCode } from '../../errors/catalogue.js'
import { MAX_STORED_ANSWER_BYTES } from '../../idempotency/repository.js'
import { StringEnum } from '../../schemas/string-enum.js'
import { BatchItemSchema, ContactSchema, EmailStatusSchema, StageSchema } from '../model.js'

export const MAX_BATCH_ITEMS = 1000

/**
 * The codes an item can fail with: each a code of the catalogue, told per item instead of for the request, with its
 * status as the item's.
 */
export const ITEM_ERROR_CODES = [
  'invalid_body',
  'unknown_tag',
  'unknown_field',
  'duplicate_in_batch',
  'contact_erased',
] as const satisfies ErrorCode[]
export type ItemErrorCode = (typeof ITEM_ERROR_CODES)[number]

export const BatchUpsertSchema = Type.Object(
  {
    contacts: Type.Array(Type.Ref(BatchItemSchema), {
      minItems: 1,
      maxItems: MAX_BATCH_ITEMS,
      description:
        'Da 1 a 1000 contatti. Un elemento che non rispetta le regole di BatchItem non fa rifiutare la richiesta: ' +
        'il suo risultato è 400 invalid_body, e gli altri sono eseguiti.',
    }),
  },
  {
    $id: 'BatchUpsert',
    additionalProperties: false,
    examples: [
      {
        contacts: [
          BatchItemSchema.examples[0],
          { email: 'marco.bianchi@example.it', emailStatus: 'unsubscribed', tags: ['newsletter'] },
        ],
      },
    ],
  },
)

/**
 * What the route itself validates: a batch of 1 to 1,000 items, whatever each item holds. Items are then checked
 * one by one against BatchItem (src/contacts/batch/repository.ts), so that a bad item fails alone.
 */
export const BatchShapeSchema = Type.Object(
  { contacts: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH_ITEMS }) },
  { additionalProperties: false },
)

const ItemErrorSchema = Type.Object(
  {
    code: StringEnum(ITEM_ERROR_CODES, { description: 'Codice dell’errore, come nell’involucro degli errori' }),
    message: Type.String({ description: 'Che cosa non va, in italiano, con il nome dell’elemento' }),
  },
  { additionalProperties: false },
)

export const BatchResultSchema = Type.Object(
  {
    status: Type.Union([Type.Literal(201), Type.Literal(200), Type.Literal(400), Type.Literal(409)], {
      description:
        '201 creato, 200 aggiornato o già così, 400 non eseguito (vedi error), 409 non eseguito perché l’email è di ' +
        'un contatto cancellato su richiesta dell’interessato (contact_erased)',
    }),
    contact: Type.Optional(Type.Ref(ContactSchema, { description: 'Il contatto dopo l’elemento (201, 200)' })),
    error: Type.Optional(ItemErrorSchema),
  },
  {
    $id: 'BatchResult',
    additionalProperties: false,
    examples: [{ status: 201, contact: ContactSchema.examples[0] }],
  },
)
export type BatchResult = Static<typeof BatchResultSchema>

const count = (description: string) => Type.Integer({ minimum: 0, description })

export const BatchResponseSchema = Type.Object(
  {
    results: Type.Array(Type.Ref(BatchResultSchema), { description: 'Un risultato per elemento, nello stesso ordine' }),
    created: count('Elementi che hanno creato un contatto (201)'),
    updated: count('Elementi che hanno cambiato un contatto esistente (200)'),
    unchanged: count('Elementi che non hanno cambiato nulla (200: il contatto era già così)'),
    failed: count('Elementi non eseguiti (400, 409)'),
  },
  {
    $id: 'BatchResponse',
    additionalProperties: false,
    examples: [
      {
        results: [
          { status: 201, contact: ContactSchema.examples[0] },
          {
            status: 400,
            error: { code: 'unknown_tag', message: 'contacts[1]: Tag inesistente: "clienti-vip".' },
          },
        ],
        created: 1,
        updated: 0,
        unchanged: 0,
        failed: 1,
      },
    ],
  },
)
export type BatchResponse = Static<typeof BatchResponseSchema>

interface SizedSchema {
  $ref?: string
  type?: string | string[]
  enum?: unknown[]
  maxLength?: number
  maxItems?: number
  items?: SizedSchema
  properties?: Record<string, SizedSchema>
}

/**
 * The most bytes of compact JSON a value valid against `schema` can take, every character of free text counted as
 * `bytesPerCharacter` bytes of UTF-8 (1 for ASCII, up to 4); `refs` resolves the schemas referred to by $id.
 * Throws on a schema with no bound.
 */
function withoutValues<T extends { fields?: unknown }>(properties: T): Omit<T, 'fields'> {
  const { fields: _values, ...rest } = properties
  return rest
}

export function largestJsonBytes(
  schema: SizedSchema,
  refs: Record<string, SizedSchema>,
  bytesPerCharacter: number,
): number {
  if (schema.$ref !== undefined) {
    const target = refs[schema.$ref]
    if (!target) throw new Error(`no schema ${schema.$ref} to size`)
    return largestJsonBytes(target, refs, bytesPerCharacter)
  }
  if (schema.enum) return Math.max(...schema.enum.map((value) => Buffer.byteLength(JSON.stringify(value))))
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  return Math.max(
    ...types.map((type) => {
      if (type === 'null') return 4
      if (type === 'string' && schema.maxLength !== undefined) return 2 + bytesPerCharacter * schema.maxLength
      if (type === 'array' && schema.maxItems !== undefined && schema.items) {
        return 2 + schema.maxItems * (largestJsonBytes(schema.items, refs, bytesPerCharacter) + 1)
      }
      if (type === 'object' && schema.properties) {
        const members = Object.entries(schema.properties)
        return (
          2 +
          members.reduce(
            (sum, [key, value]) => sum + key.length + 4 + largestJsonBytes(value, refs, bytesPerCharacter),
            0,
          )
        )
      }
      throw new Error(`no bound on the size of a ${String(type)} value`)
    }),
  )
}

/**
 * The most bytes a BatchItem takes in compact JSON when its text is ASCII, every field at its longest (about 7.4 KB),
 * its `fields` (the tenant's own) left out: their values take at most CUSTOM_FIELD_LIMITS.valuesBytes more, which a
 * batch of such items fills only when every other field is short (docs/api-batch.md).
 */
export const LARGEST_ASCII_ITEM_BYTES = largestJsonBytes(
  { ...BatchItemSchema, properties: withoutValues(BatchItemSchema.properties) } as SizedSchema,
  { EmailStatus: EmailStatusSchema as SizedSchema, Stage: StageSchema as SizedSchema },
  1,
)

/**
 * The batch route's body limit: `{"contacts":[` … `]}` around 1,000 of the largest items written in ASCII, and
 * their commas (about 7.4 MB). Text in other scripts takes 2 to 4 bytes a character, so 1,000 items that long in
 * such text do not fit, and are sent in more batches: what a batch costs the instance (time on its one thread, and
 * memory) grows with its bytes, and this bound keeps both small (docs/operations.md, "Batch imports"). A body
 * written with escapes (\uXXXX) or padded with white space is larger than what it holds.
 */
export const BATCH_BODY_LIMIT = MAX_BATCH_ITEMS * (LARGEST_ASCII_ITEM_BYTES + 1) + 64

/**
 * The largest answer a batch gives, which an Idempotency-Key keeps: 1,000 results of the largest contact a single
 * write's answer can be (MAX_STORED_ANSWER_BYTES), and the counts.
 */
export const BATCH_ANSWER_BYTES = MAX_BATCH_ITEMS * (MAX_STORED_ANSWER_BYTES + 64) + 1024

export const batchSchemas = [BatchItemSchema, BatchUpsertSchema, BatchResultSchema, BatchResponseSchema]
