// The route schemas of the webhooks operations: what each validates and how the OpenAPI document describes it.
import { Type } from '@sinclair/typebox'
import { API_PREFIX } from '../api-prefix.js'
import { BODY_CODES, COMMON_CODES, errorResponses, locationHeader, noContent, success } from '../openapi/responses.js'
import { NoQuerySchema } from '../schemas/limits.js'
import {
  DeliveryListSchema,
  WEBHOOK_LIMITS,
  WebhookCreatedSchema,
  WebhookCreateSchema,
  WebhookListSchema,
  WebhookParamsSchema,
  WebhookSchema,
} from './model.js'

const tags = ['webhooks']

/** What every operation on one webhook shares: its id in the path, no query, and 404 for another tenant's. */
const oneWebhook = { tags, params: WebhookParamsSchema, querystring: NoQuerySchema }
const oneWebhookErrors = errorResponses([...COMMON_CODES, 'not_found'])

export const createWebhook = {
  operationId: 'createWebhook',
  summary: 'Registra un webhook',
  description:
    'Gli eventi dei contatti (come in `GET /events`) saranno consegnati a `url` con un POST firmato secondo Standard ' +
    'Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), almeno una volta, ritentando se la ' +
    'risposta non è un 2xx entro il tempo limite (conta lo stato: della risposta si leggono al più i primi ' +
    `${WEBHOOK_LIMITS.answerBytes / 1024} KiB). Solo \`https://\` verso indirizzi pubblici. Il segreto per verificare le ` +
    'firme è nella risposta e non si può rileggere. Servono il ruolo admin e gli scope webhooks:manage e ' +
    'contacts:read: il webhook riceverà i dati dei contatti.',
  tags,
  querystring: NoQuerySchema,
  body: Type.Ref(WebhookCreateSchema),
  response: {
    201: success('Il webhook, con il suo segreto', Type.Ref(WebhookCreatedSchema), {
      ...locationHeader('Percorso del nuovo webhook', `${API_PREFIX}/webhooks/5a0c1f62-9d7e-4b1a-8c3e-2f6d4e8b9a17`),
    }),
    ...errorResponses([...COMMON_CODES, ...BODY_CODES, 'limit_reached']),
  },
}

export const listWebhooks = {
  operationId: 'listWebhooks',
  summary: 'Elenca i webhook',
  description: 'I webhook dell’organizzazione, dal più vecchio; mai il loro segreto.',
  tags,
  querystring: NoQuerySchema,
  response: {
    200: success('I webhook dell’organizzazione', Type.Ref(WebhookListSchema)),
    ...errorResponses(COMMON_CODES),
  },
}

export const getWebhook = {
  operationId: 'getWebhook',
  summary: 'Legge un webhook',
  description: 'Un webhook dell’organizzazione, senza il suo segreto; 404 se non è suo o non esiste.',
  ...oneWebhook,
  response: {
    200: success('Il webhook', Type.Ref(WebhookSchema)),
    ...oneWebhookErrors,
  },
}

export const deleteWebhook = {
  operationId: 'deleteWebhook',
  summary: 'Elimina un webhook',
  description: 'Le consegne in attesa si fermano subito; il registro delle consegne è eliminato con il webhook.',
  ...oneWebhook,
  response: {
    204: noContent('Eliminato, con le sue consegne'),
    ...oneWebhookErrors,
  },
}

export const listDeliveries = {
  operationId: 'listWebhookDeliveries',
  summary: 'Le ultime consegne di un webhook',
  description:
    'Gli ultimi 100 tentativi, dal più recente: evento, stato HTTP, errore, durata. Servono gli scope ' +
    'webhooks:manage e contacts:read, come per registrare un webhook.',
  ...oneWebhook,
  response: {
    200: success('I tentativi di consegna', Type.Ref(DeliveryListSchema)),
    ...oneWebhookErrors,
  },
}
