// TypeBox schemas of the contacts API: they validate requests, shape responses and make the OpenAPI document.
import { type Static, Type } from '@sinclair/typebox'
import { EmailStatus, Stage } from '../generated/prisma/enums.js'
import { Nullable, PHONE, PRINTABLE, Timestamp, VISIBLE_TEXT } from './common.js'
import { StringEnum } from './string-enum.js'

export const EMAIL_STATUSES = Object.values(EmailStatus)
export const STAGES = Object.values(Stage)

/** Limits the specification leaves open; documented in the README. */
export const LIMITS = {
  email: 254,
  name: 100,
  phone: 32,
  consentType: 64,
  tag: 64,
  tagsPerContact: 100,
  pageSize: 200,
  defaultPageSize: 50,
} as const

const EmailStatusSchema = StringEnum(EMAIL_STATUSES, { description: 'Stato di recapito dell’indirizzo email' })
const StageSchema = StringEnum(STAGES, { description: 'Fase commerciale del contatto' })
const Name = Type.String({ minLength: 1, maxLength: LIMITS.name, pattern: VISIBLE_TEXT })
const ConsentType = Type.String({
  minLength: 1,
  maxLength: LIMITS.consentType,
  pattern: VISIBLE_TEXT,
  description: 'Base giuridica del trattamento; valori noti: contract, consent; la lista è aperta',
  examples: ['consent'],
})

export const ContactSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Nullable(Type.String({ format: 'email', maxLength: LIMITS.email })),
    firstName: Nullable(Type.String()),
    lastName: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    emailStatus: EmailStatusSchema,
    stage: StageSchema,
    source: Type.String({ description: 'Origine del contatto: "api" se creato da questa API', examples: ['api'] }),
    consentType: Type.String(),
    tags: Type.Array(Type.String(), { description: 'Nomi dei tag, in ordine alfabetico' }),
    archivedAt: Nullable(Timestamp()),
    acquiredAt: Timestamp(),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  {
    $id: 'Contact',
    additionalProperties: false,
    examples: [
      {
        id: '8b4f3f2e-3f7c-4d0e-9a55-2f2b8d1c9e10',
        email: 'anna.rossi@example.it',
        firstName: 'Anna',
        lastName: 'Rossi',
        phone: '+39 02 1234 5678',
        emailStatus: 'active',
        stage: 'lead',
        source: 'api',
        consentType: 'consent',
        tags: ['newsletter', 'vip'],
        archivedAt: null,
        acquiredAt: '2026-03-01T09:30:00.000Z',
        createdAt: '2026-03-01T09:30:00.000Z',
        updatedAt: '2026-03-02T16:05:12.345Z',
      },
    ],
  },
)
export type Contact = Static<typeof ContactSchema>

export const ContactCreateSchema = Type.Object(
  {
    email: Type.String({ format: 'email', minLength: 3, maxLength: LIMITS.email, examples: ['anna.rossi@example.it'] }),
    phone: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: LIMITS.phone,
        pattern: PHONE,
        description: 'Almeno 3 cifre; cifre, spazi, + iniziale, punti, trattini e parentesi',
        examples: ['+39 02 1234 5678'],
      }),
    ),
    firstName: Type.Optional(Name),
    lastName: Type.Optional(Name),
    consentType: Type.Optional(ConsentType),
    tags: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.tag, pattern: PRINTABLE }), {
        maxItems: LIMITS.tagsPerContact,
        description: 'Nomi di tag già esistenti nell’organizzazione',
      }),
    ),
  },
  { $id: 'ContactCreate', additionalProperties: false },
)
export type ContactCreate = Static<typeof ContactCreateSchema>

export const ContactUpdateSchema = Type.Object(
  {
    firstName: Type.Optional(Nullable(Name)),
    lastName: Type.Optional(Nullable(Name)),
    emailStatus: Type.Optional(EmailStatusSchema),
    stage: Type.Optional(StageSchema),
    consentType: Type.Optional(ConsentType),
  },
  { $id: 'ContactUpdate', additionalProperties: false, examples: [{ stage: 'customer', lastName: null }] },
)
export type ContactUpdate = Static<typeof ContactUpdateSchema>

export const ContactListSchema = Type.Object(
  {
    data: Type.Array(Type.Ref(ContactSchema)),
    next: Nullable(Timestamp({ description: 'Cursore della pagina successiva; null sull’ultima pagina' })),
  },
  { $id: 'ContactList', additionalProperties: false },
)
export type ContactList = Static<typeof ContactListSchema>

export const ContactListQuerySchema = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: LIMITS.pageSize, default: LIMITS.defaultPageSize }),
    cursor: Type.Optional(
      Timestamp({ description: 'Valore di `next` della pagina precedente: contatti creati strettamente prima' }),
    ),
    emailStatus: Type.Optional(EmailStatusSchema),
    stage: Type.Optional(StageSchema),
    includeArchived: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
)
export type ContactListQuery = Static<typeof ContactListQuerySchema>

export const ContactParamsSchema = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false })
