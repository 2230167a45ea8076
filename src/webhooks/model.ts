// The shapes of webhooks: what a tenant's integrator registers (an https URL and the event types it wants), what
// the API shows of it (never its secret, but in the answer that creates it), and the log of its deliveries.
import { type Static, Type } from '@sinclair/typebox'
import { EVENT_TYPES, EventTypeSchema } from '../events/model.js'
import { Nullable, PRINTABLE, Timestamp } from '../schemas/common.js'
import { HOST_NOT_ALLOWED } from './urls.js'

export const WEBHOOK_LIMITS = {
  url: 2048,
  description: 200,
  perTenant: 20,
  /**
   * Bytes read of a receiver's answer: a short reply fits, and its connection is kept for the next attempt. Past
   * it nothing more is read, the connection is closed (never reused), and the status alone decides: an endless or
   * huge answer costs a few KB, not a CPU reading it until the timeout.
   */
  answerBytes: 4 * 1024,
} as const

const EXAMPLE_WEBHOOK = {
  id: '5a0c1f62-9d7e-4b1a-8c3e-2f6d4e8b9a17',
  url: 'https://crm.example.it/hooks/rubrica',
  events: [...EVENT_TYPES],
  description: 'Sincronizzazione del CRM',
  createdAt: '2026-03-01T09:30:00.000Z',
}
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

const events = (description: string) =>
  Type.Array(Type.Unsafe<(typeof EVENT_TYPES)[number]>(Type.Ref(EventTypeSchema)), {
    minItems: 1,
    uniqueItems: true,
    description,
  })

export const WebhookCreateSchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: WEBHOOK_LIMITS.url,
      // No spaces nor control characters: a URL as sent is what operators see in the CLI's table.
      pattern: '^[^\\s\\u0000-\\u001F\\u007F-\\u009F]+$',
      description: `Indirizzo https che riceve gli eventi: ${HOST_NOT_ALLOWED}`,
    }),
    events: Type.Optional(events('I tipi di evento da consegnare; omesso: tutti')),
    description: Type.Optional(Type.String({ maxLength: WEBHOOK_LIMITS.description, pattern: PRINTABLE })),
  },
  {
    $id: 'WebhookCreate',
    additionalProperties: false,
    examples: [{ url: EXAMPLE_WEBHOOK.url, events: ['contact.created'], description: EXAMPLE_WEBHOOK.description }],
  },
)
export type WebhookCreate = Static<typeof WebhookCreateSchema>

const webhookFields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: events('I tipi di evento da consegnare'),
  description: Nullable(Type.String()),
  createdAt: Timestamp(),
}

export const WebhookSchema = Type.Object(webhookFields, {
  $id: 'Webhook',
  additionalProperties: false,
  examples: [EXAMPLE_WEBHOOK],
})
export type Webhook = Static<typeof WebhookSchema>

export const WebhookCreatedSchema = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description:
        'Il segreto per verificare le firme (Standard Webhooks): mostrato solo in questa risposta, va conservato subito',
    }),
  },
  { $id: 'WebhookCreated', additionalProperties: false, examples: [{ ...EXAMPLE_WEBHOOK, secret: EXAMPLE_SECRET }] },
)
export type WebhookCreated = Static<typeof WebhookCreatedSchema>

export const WebhookListSchema = Type.Object(
  { data: Type.Array(Type.Ref(WebhookSchema)) },
  { $id: 'WebhookList', additionalProperties: false },
)

/** What became of an attempt. */
export const DELIVERY_OUTCOMES = ['delivered', 'retried', 'given_up'] as const

export const DeliverySchema = Type.Object(
  {
    eventId: Type.String({ format: 'uuid', description: 'L’evento consegnato: è anche l’intestazione webhook-id' }),
    attempt: Type.Integer({ minimum: 1, description: 'Numero del tentativo, da 1' }),
    status: Nullable(Type.Integer({ description: 'Stato HTTP risposto; null senza risposta' })),
    error: Nullable(Type.String({ description: 'Perché il tentativo non è riuscito, in breve; null se riuscito' })),
    durationMs: Type.Integer({ minimum: 0 }),
    at: Timestamp({ description: 'Quando è iniziato il tentativo' }),
    outcome: Type.Union(
      DELIVERY_OUTCOMES.map((outcome) => Type.Literal(outcome)),
      {
        description:
          'delivered: consegnato; retried: non riuscito, seguito (o da seguire) da un altro tentativo; ' +
          'given_up: non riuscito ed era l’ultimo tentativo, la consegna è abbandonata',
      },
    ),
  },
  {
    $id: 'Delivery',
    additionalProperties: false,
    examples: [
      {
        eventId: '2d9c8f0e-41b7-4c5e-8a0f-6b1e9d3c7a52',
        attempt: 1,
        status: 200,
        error: null,
        durationMs: 84,
        at: '2026-03-02T16:05:12.401Z',
        outcome: 'delivered',
      },
    ],
  },
)
export type Delivery = Static<typeof DeliverySchema>

export const DeliveryListSchema = Type.Object(
  { data: Type.Array(Type.Ref(DeliverySchema), { description: 'Gli ultimi 100 tentativi, dal più recente' }) },
  { $id: 'DeliveryList', additionalProperties: false },
)

export const WebhookParamsSchema = Type.Object(
  { id: Type.String({ format: 'uuid', description: 'Id del webhook', examples: [EXAMPLE_WEBHOOK.id] }) },
  { additionalProperties: false },
)

/** The schemas routes refer to by $id: the document's components. */
export const webhookSchemas = [
  WebhookCreateSchema,
  WebhookSchema,
  WebhookCreatedSchema,
  WebhookListSchema,
  DeliverySchema,
  DeliveryListSchema,
]
