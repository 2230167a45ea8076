// The shapes of a contact's export (GDPR articles 15 and 20): everything rubrica holds about one contact, in one
// JSON document: the contact as GET answers it, its events as the feed shows them, and what was delivered of them
// to the tenant's webhooks. An erasure (DELETE) answers nothing (204); what remains of an erased contact in its
// events is an ErasedContact (src/contacts/model.ts).
import { type Static, Type } from '@sinclair/typebox'
import { ContactSchema } from '../contacts/model.js'
import { EventSchema } from '../events/model.js'
import { Nullable, Timestamp } from '../schemas/common.js'
import { DELIVERY_OUTCOMES, DeliverySchema, WebhookSchema } from '../webhooks/model.js'

/** The examples of a webhook and of one of its deliveries, as the webhooks' schemas give them. */
const [exampleWebhook] = WebhookSchema.examples as { id: string; url: string }[]
const [exampleAttempt] = DeliverySchema.examples as Record<string, unknown>[]
const EXAMPLE_DELIVERY = {
  webhookId: exampleWebhook?.id,
  receiver: exampleWebhook?.url === undefined ? undefined : new URL(exampleWebhook.url).origin,
  eventId: exampleAttempt?.eventId,
  attempt: exampleAttempt?.attempt,
  at: exampleAttempt?.at,
  status: exampleAttempt?.status,
  outcome: exampleAttempt?.outcome,
}

export const ExportedDeliverySchema = Type.Object(
  {
    webhookId: Type.String({ format: 'uuid', description: 'Il webhook a cui l’evento è stato inviato' }),
    receiver: Type.String({
      description:
        'Dove sono stati inviati i dati: l’origine (schema, host e porta) dell’indirizzo del webhook; percorso e ' +
        'query, che possono contenere un token, restano visibili solo con lo scope webhooks:manage',
      examples: ['https://crm.example.com'],
    }),
    eventId: Type.String({ format: 'uuid', description: 'L’evento inviato (uno di `events`)' }),
    attempt: Type.Integer({ minimum: 1, description: 'Numero del tentativo, da 1' }),
    at: Timestamp({ description: 'Quando è iniziato il tentativo' }),
    status: Nullable(Type.Integer({ description: 'Stato HTTP risposto; null senza risposta' })),
    outcome: Type.Union(
      DELIVERY_OUTCOMES.map((outcome) => Type.Literal(outcome)),
      { description: 'delivered: consegnato; retried: seguito da un altro tentativo; given_up: abbandonato' },
    ),
  },
  {
    $id: 'ExportedDelivery',
    additionalProperties: false,
    examples: [EXAMPLE_DELIVERY],
  },
)

export const ContactExportSchema = Type.Object(
  {
    exportedAt: Timestamp({ description: 'Quando è stata fatta l’esportazione' }),
    contact: Type.Ref(ContactSchema, { description: 'Il contatto, come lo restituisce GET' }),
    events: Type.Array(Type.Ref(EventSchema), {
      description:
        'Gli eventi del contatto che rubrica conserva (EVENTS_RETENTION_DAYS), come li mostra il feed, dal più vecchio',
    }),
    deliveries: Type.Array(Type.Ref(ExportedDeliverySchema), {
      description:
        'I tentativi di consegna di quegli eventi ai webhook dell’organizzazione che rubrica conserva, dal più vecchio',
    }),
  },
  {
    $id: 'ContactExport',
    additionalProperties: false,
    description: 'Tutto ciò che rubrica conserva di un contatto (GDPR, articoli 15 e 20)',
    examples: [
      {
        exportedAt: '2026-03-03T10:00:00.000Z',
        contact: ContactSchema.examples[0],
        events: EventSchema.examples,
        deliveries: [EXAMPLE_DELIVERY],
      },
    ],
  },
)
export type ContactExport = Static<typeof ContactExportSchema>
export type ExportedDelivery = Static<typeof ExportedDeliverySchema>

/** The erasures of a tenant, as the admin CLI lists them: which contact, when, asked by which key or from the CLI. */
export interface ErasureRecord {
  contactId: string
  erasedAt: string
  keyId: string | null
  source: 'api' | 'cli'
}

/** The schemas routes refer to by $id: the document's components. */
export const privacySchemas = [ExportedDeliverySchema, ContactExportSchema]
