// The Contact's fields, declared once: per field, what answers carry, whether a POST or a PATCH may set it and
// with which rule, what a POST stores when it is absent, and an example. Adding a field is a line here and its
// migration (docs/contributing.md); describe.ts derives everything else from this declaration.
import { Type } from '@sinclair/typebox'
import { EmailStatus, Stage } from '../generated/prisma/enums.js'
import { EMAIL, Nullable, PHONE, PRINTABLE, Timestamp, VISIBLE_TEXT } from '../schemas/common.js'
import { LIMITS } from '../schemas/limits.js'
import { StringEnum } from '../schemas/string-enum.js'
import { FieldValuesAnswer, FieldValuesInput, FieldValuesPatch } from './custom-fields/model.js'
import type { FieldSpec } from './describe.js'

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
export const EmailStatusRef = Type.Unsafe<(typeof EMAIL_STATUSES)[number]>(Type.Ref(EmailStatusSchema))
export const StageRef = Type.Unsafe<(typeof STAGES)[number]>(Type.Ref(StageSchema))

/** An existing contact id, for the examples (ids of real data differ). */
export const EXAMPLE_ID = '8b4f3f2e-3f7c-4d0e-9a55-2f2b8d1c9e10'

/** What `pattern` adds to `format: email`, for readers of the document. */
export const EMAIL_RULE =
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

/** The fields of a Contact, in the order answers list them. */
export const CONTACT_FIELDS = {
  id: { answer: Type.String({ format: 'uuid' }), example: EXAMPLE_ID },
  email: {
    answer: Nullable(Type.String({ format: 'email', maxLength: LIMITS.email })),
    create: { schema: EmailInput(), required: true },
    example: 'anna.rossi@example.it',
    search: 'email',
  },
  firstName: {
    answer: Nullable(Type.String()),
    create: { schema: Name() },
    update: { schema: Nullable(Name()) },
    example: 'Anna',
    search: 'words',
  },
  lastName: {
    answer: Nullable(Type.String()),
    create: { schema: Name() },
    update: { schema: Nullable(Name()) },
    example: 'Rossi',
    search: 'words',
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
    search: 'phone',
  },
  emailStatus: {
    answer: EmailStatusRef,
    update: { schema: EmailStatusRef },
    initial: 'active',
    example: 'active',
    search: 'enum',
  },
  stage: { answer: StageRef, update: { schema: StageRef }, initial: 'lead', example: 'lead', search: 'enum' },
  source: {
    answer: Type.String({ description: 'Origine del contatto: "api" se creato da questa API' }),
    createdAs: 'api',
    example: 'api',
    search: 'label',
  },
  consentType: {
    answer: Type.String(),
    create: { schema: ConsentType(), absent: 'unknown' },
    update: { schema: ConsentType() },
    example: 'consent',
    search: 'label',
  },
  tags: {
    answer: Type.Array(Type.String(), { description: 'Nomi dei tag, in ordine di code point Unicode' }),
    create: { schema: TagNames(), absent: '{}' },
    batch: 'add',
    example: ['evento-2026', 'newsletter'],
    search: 'tags',
  },
  archivedAt: { answer: Nullable(Timestamp()), example: null, search: 'instant' },
  acquiredAt: { answer: Timestamp(), example: '2026-03-01T09:30:00.000Z', search: 'instant' },
  createdAt: { answer: Timestamp(), example: '2026-03-01T09:30:00.000Z', search: 'instant' },
  updatedAt: { answer: Timestamp(), example: '2026-03-02T16:05:12.345Z', search: 'instant' },
  fields: {
    answer: FieldValuesAnswer(),
    create: { schema: FieldValuesInput(), absent: '{}' },
    update: { schema: FieldValuesPatch() },
    merges: true,
    // Not the values of fields the tenant ($1, as in every statement that reads contacts) deleted, which a contact
    // may hold until they are reclaimed; `{}` in an event recorded before the column was (the feed reads events as
    // contacts). A subquery on the tenant, not on the row: Citus runs it beside the contacts on the tenant's node.
    select: (column) => `(COALESCE(${column}, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL))`,
    example: { livello: 'oro', compleanno: '1990-05-17' },
  },
} satisfies Record<string, FieldSpec>
