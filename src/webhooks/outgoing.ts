// The request rubrica sends to a webhook, for the OpenAPI document's `webhooks` section: generators and readers
// see the body (an Event) and the Standard Webhooks headers, and what answer counts as received.
import type { OpenApiWebhooks } from '../openapi/sections.js'
import { WEBHOOK_LIMITS } from './model.js'

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header' as const,
  required: true,
  description,
  schema: { type: 'string' as const },
  example,
})

export const outgoingWebhooks: OpenApiWebhooks = {
  contactEvent: {
    post: {
      operationId: 'receiveContactEvent',
      summary: 'Un evento consegnato a un webhook',
      description:
        'rubrica invia a `url` un POST per ogni evento dei tipi scelti, firmato secondo Standard Webhooks: la ' +
        'firma è HMAC-SHA256, con i byte del segreto dopo `whsec_`, di `<webhook-id>.<webhook-timestamp>.<corpo>`. ' +
        'Un 2xx entro il tempo limite conta come ricevuto; altrimenti il tentativo è ripetuto secondo il ' +
        'calendario, poi abbandonato. Conta lo stato: del corpo della risposta si leggono al più ' +
        `${WEBHOOK_LIMITS.answerBytes / 1024} KiB, e una risposta più lunga è interrotta chiudendo la connessione. ` +
        'Una consegna può arrivare più di una volta: usare webhook-id per riconoscerla.',
      tags: ['webhooks'],
      // The receiver authenticates rubrica by the signature, not by an API key.
      security: [],
      parameters: [
        header('webhook-id', 'L’id dell’evento, uguale a ogni tentativo', '2d9c8f0e-41b7-4c5e-8a0f-6b1e9d3c7a52'),
        header('webhook-timestamp', 'L’istante del tentativo, in secondi Unix', '1772467512'),
        header('webhook-signature', '`v1,` e la firma in base64', 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='),
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' } } },
      },
      responses: {
        '2XX': { description: 'Ricevuto: nessun altro tentativo' },
        default: { description: 'Non ricevuto: il tentativo sarà ripetuto, fino all’ultimo del calendario' },
      },
    },
  },
}
