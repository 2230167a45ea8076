// TypeBox schemas of the contacts API: they validate requests, shape responses and make the OpenAPI document.
import { type Static, Type } from '@sinclair/typebox'
import { EmailStatus, Stage } from '../generated/prisma/enums.js'
import { EMAIL, Nullable, PHONE, PRINTABLE, Timestamp, VISIBLE_TEXT } from './common.js'
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

/** A contact as the examples of the document show it (checked against Contact below: no field may be missing). */
const EXAMPLE_CONTACT = {
  id: EXAMPLE_ID,
  email: 'anna.rossi@example.it',
  firstName: 'Anna',
  lastName: 'Rossi',
  phone: '+39 02 1234 5678',
  emailStatus: 'active' as const,
  stage: 'lead' as const,
  source: 'api',
  consentType: 'consent',
  tags: ['evento-2026', 'newsletter'],
  archivedAt: null,
  acquiredAt: '2026-03-01T09:30:00.000Z',
  createdAt: '2026-03-01T09:30:00.000Z',
  updatedAt: '2026-03-02T16:05:12.345Z',
}

/** What `pattern` adds to `format: email`, for readers of the document. */
const EMAIL_RULE =
  'Più restrittivo del formato email: parte locale di al massimo 64 caratteri senza virgolette, dominio con almeno ' +
  'un punto (niente localhost né indirizzi IP tra parentesi quadre).'

const Name = (example: string) =>
  Type.String({ minLength: 1, maxLength: LIMITS.name, pattern: VISIBLE_TEXT, examples: [example] })
const ConsentType = Type.String({
  minLength: 1,
  maxLength: LIMITS.consentType,
  pattern: VISIBLE_TEXT,
  description: 'Base giuridica del trattamento; valori noti: contract, consent; la lista è aperta',
  examples: ['consent'],
})

export const ContactSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [EXAMPLE_ID] }),
    email: Nullable(Type.String({ format: 'email', maxLength: LIMITS.email, examples: ['anna.rossi@example.it'] })),
    firstName: Nullable(Type.String({ examples: ['Anna'] })),
    lastName: Nullable(Type.String({ examples: ['Rossi'] })),
    phone: Nullable(Type.String({ examples: ['+39 02 1234 5678'] })),
    emailStatus: EmailStatusRef,
    stage: StageRef,
    source: Type.String({ description: 'Origine del contatto: "api" se creato da questa API', examples: ['api'] }),
    consentType: Type.String({ examples: ['consent'] }),
    tags: Type.Array(Type.String(), {
      description: 'Nomi dei tag, in ordine di code point Unicode',
      examples: [['newsletter', 'vip']],
    }),
    archivedAt: Nullable(Timestamp()),
    acquiredAt: Timestamp(),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  {
    $id: 'Contact',
    additionalProperties: false,
    examples: [EXAMPLE_CONTACT],
  },
)
export type Contact = Static<typeof ContactSchema>

/** The list's example: EXAMPLE_CONTACT as a Contact, so that a field added to Contact must be added there. */
const LISTED_CONTACT: Contact = { ...EXAMPLE_CONTACT, stage: 'customer', tags: ['newsletter', 'vip'] }

export const ContactCreateSchema = Type.Object(
  {
    email: Type.String({
      format: 'email',
      pattern: EMAIL,
      minLength: 3,
      maxLength: LIMITS.email,
      description: EMAIL_RULE,
      examples: ['giulia.bianchi@example.it'],
    }),
    phone: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: LIMITS.phone,
        pattern: PHONE,
        description: 'Almeno 3 cifre; cifre, spazi, + iniziale, punti, trattini e parentesi',
        examples: ['+39 02 8765 4321'],
      }),
    ),
    firstName: Type.Optional(Name('Giulia')),
    lastName: Type.Optional(Name('Bianchi')),
    consentType: Type.Optional(ConsentType),
    tags: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.tag, pattern: PRINTABLE, examples: ['newsletter'] }), {
        maxItems: LIMITS.tagsPerContact,
        description: 'Nomi di tag già esistenti nell’organizzazione',
        examples: [['newsletter']],
      }),
    ),
  },
  {
    $id: 'ContactCreate',
    additionalProperties: false,
    examples: [
      {
        email: 'giulia.bianchi@example.it',
        firstName: 'Giulia',
        lastName: 'Bianchi',
        phone: '+39 02 8765 4321',
        consentType: 'consent',
        tags: ['newsletter'],
      },
    ],
  },
)
export type ContactCreate = Static<typeof ContactCreateSchema>

export const ContactUpdateSchema = Type.Object(
  {
    firstName: Type.Optional(Nullable(Name('Giulia'))),
    lastName: Type.Optional(Nullable(Name('Bianchi'))),
    emailStatus: Type.Optional(EmailStatusRef),
    stage: Type.Optional(StageRef),
    consentType: Type.Optional(ConsentType),
  },
  { $id: 'ContactUpdate', additionalProperties: false, examples: [{ stage: 'customer', consentType: 'contract' }] },
)
export type ContactUpdate = Static<typeof ContactUpdateSchema>

export const ContactListSchema = Type.Object(
  {
    data: Type.Array(Type.Ref(ContactSchema)),
    next: Nullable(Timestamp({ description: 'Cursore della pagina successiva; null sull’ultima pagina' })),
  },
  {
    $id: 'ContactList',
    additionalProperties: false,
    examples: [
      {
        data: [LISTED_CONTACT],
        next: '2026-03-01T09:30:00.000Z',
      },
    ],
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
    email: Type.Optional(
      Type.String({
        format: 'email',
        pattern: EMAIL,
        maxLength: LIMITS.email,
        description: `Solo il contatto con questa email, senza distinzione di maiuscole (0 o 1 elemento). ${EMAIL_RULE}`,
        // No example, as for the cursor: the reference page fills examples in, and a filter by an email that
        // names no contact makes the first "Try it out" of the list an empty page.
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

/** Operations that take no query parameter refuse any (400 invalid_query), as the list refuses unknown ones. */
export const NoQuerySchema = Type.Object({}, { additionalProperties: false })
