// The route schema of the event feed: what it validates and how the OpenAPI document describes it.
import { Type } from '@sinclair/typebox'
import { COMMON_CODES, errorResponses, success } from '../openapi/responses.js'
import { EventListQuerySchema, EventPageSchema } from './model.js'

export const listEvents = {
  operationId: 'listEvents',
  summary: 'Segue i cambiamenti dei contatti',
  description:
    'Un evento per ogni cambiamento di un contatto (creazione o modifica, da chiunque fatta: API, importazione, ' +
    'amministratori), registrato nella stessa transazione del cambiamento, con il contatto come lo restituiva GET ' +
    'subito dopo. Un contatto cancellato su richiesta dell’interessato dà un evento contact.erased, e nei suoi ' +
    'eventi precedenti, che restano al loro posto, `data` diventa `{"id", "erased": true}`. Dal più vecchio; si continua passando `next` come `after`. Seguendo `next` da una posizione si ' +
    'ricevono una e una sola volta tutti gli eventi confermati dopo di essa, anche con scritture concorrenti, e gli ' +
    'eventi di un contatto nell’ordine dei suoi cambiamenti. Per sincronizzare: prendere `after=now`, leggere tutta ' +
    'la lista dei contatti, poi seguire gli eventi da quella posizione. Gli eventi si conservano ' +
    'EVENTS_RETENTION_DAYS giorni (30 se non configurato): una posizione più vecchia dà 410 cursor_expired.',
  tags: ['events'],
  querystring: EventListQuerySchema,
  response: {
    200: success('Una pagina di eventi', Type.Ref(EventPageSchema)),
    ...errorResponses([...COMMON_CODES, 'cursor_expired']),
  },
}
