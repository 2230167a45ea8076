// The Contact's schemas: those derived from its declaration (fields.ts, by describe.ts) and the ones around it
// (the erased contact, the conflict's existing contact, the list and its query), with the list of those the
// document names.
import { type Static, Type } from '@sinclair/typebox'
import { Nullable, Timestamp } from '../schemas/common.js'
import { describeContact } from './describe.js'
import { CONTACT_FIELDS, EmailStatusSchema, EXAMPLE_ID, StageSchema } from './fields.js'

export {
  type ContactStorage,
  describeContact,
  type FieldSpec,
  type StoredField,
} from './describe.js'
export {
  CONTACT_FIELDS,
  EMAIL_RULE,
  EMAIL_STATUSES,
  EmailInput,
  EmailStatusRef,
  EmailStatusSchema,
  EXAMPLE_ID,
  STAGES,
  StageRef,
  StageSchema,
} from './fields.js'

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
