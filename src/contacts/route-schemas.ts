// The route schemas of the contacts operations: what each validates and how the OpenAPI document describes it.
// The `security` of each operation is not written here: it is derived from the route's scope (authorization).
import { Type } from '@sinclair/typebox'
import { API_PREFIX } from '../api-prefix.js'
import {
  BODY_CODES,
  COMMON_CODES,
  errorResponses,
  etagHeader,
  locationHeader,
  notModified,
  replayedHeader,
  success,
} from '../openapi/responses.js'
import { IDEMPOTENCY_KEY } from '../schemas/common.js'
import { NoQuerySchema } from '../schemas/limits.js'
import {
  ContactCreateSchema,
  ContactListSchema,
  ContactParamsSchema,
  ContactSchema,
  ContactUpdateSchema,
  EXAMPLE_ID,
} from './model.js'
import { ContactListQuerySchema } from './search/model.js'

const tags = ['contacts']

const etag = etagHeader('Versione del contatto, da usare con If-Match e If-None-Match')

/** The headers of a POST that a retry may repeat safely (src/idempotency/): declared once, for every such POST. */
export const idempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      pattern: IDEMPOTENCY_KEY,
      description:
        'Chiave scelta dal client (1-255 caratteri ASCII stampabili) per ripetere la richiesta senza rischi. Gli ' +
        'spazi attorno al valore non ne fanno parte: HTTP li toglie prima che arrivi, così `k ` è la chiave `k`',
      examples: ['ordine-2026-000123'],
    }),
  ),
})

export const listContacts = {
  operationId: 'listContacts',
  summary: 'Elenca i contatti',
  description:
    'Contatti dell’organizzazione, dal più recente per createdAt. Per la pagina successiva si passa `next` come ' +
    '`cursor`; `next` è null sull’ultima pagina. Gli archiviati sono esclusi salvo `includeArchived=true`. ' +
    'Con `email` si trova il contatto che ha quell’email (senza distinzione di maiuscole), per scegliere tra POST e ' +
    'PATCH.',
  tags,
  querystring: ContactListQuerySchema,
  response: {
    200: success('Una pagina di contatti', Type.Ref(ContactListSchema)),
    ...errorResponses([...COMMON_CODES, 'server_busy']),
  },
}

export const getContact = {
  operationId: 'getContact',
  summary: 'Legge un contatto',
  description:
    'Anche se archiviato. Un id inesistente, di un’altra organizzazione o non UUID dà lo stesso 404. La risposta ' +
    'porta l’ETag del contatto; con If-None-Match uguale all’ETag attuale la risposta è 304 senza corpo.',
  tags,
  params: ContactParamsSchema,
  querystring: NoQuerySchema,
  headers: Type.Object({
    'if-none-match': Type.Optional(
      Type.String({ description: 'ETag della copia che il client ha già', examples: ['"v3"'] }),
    ),
  }),
  response: {
    200: success('Il contatto', Type.Ref(ContactSchema), etag),
    304: notModified(etag),
    ...errorResponses([...COMMON_CODES, 'not_found']),
  },
}

export const createContact = {
  operationId: 'createContact',
  summary: 'Crea un contatto',
  description:
    'Valori iniziali: emailStatus active, stage lead, source api, consentType unknown se non indicato, ' +
    'acquiredAt uguale a createdAt. L’email è unica nell’organizzazione senza distinzione di maiuscole. ' +
    'I tag devono esistere già; l’API non ne crea. Con Idempotency-Key la richiesta è eseguita una volta sola: ' +
    'ripeterla con la stessa chiave e lo stesso corpo (entro 24 ore) restituisce la stessa risposta 201, con ' +
    '`Idempotent-Replayed: true`. Un rifiuto (400, 409 conflict) non è conservato: ripetere la richiesta la esegue ' +
    'di nuovo. L’email di un contatto cancellato su richiesta dell’interessato (DELETE) è rifiutata con 409 ' +
    'contact_erased.',
  tags,
  querystring: NoQuerySchema,
  headers: idempotencyHeaders,
  body: Type.Ref(ContactCreateSchema),
  response: {
    201: success('Il contatto creato', Type.Ref(ContactSchema), {
      ...locationHeader('Percorso del nuovo contatto', `${API_PREFIX}/contacts/${EXAMPLE_ID}`),
      ...etag,
      ...replayedHeader,
    }),
    ...errorResponses([
      ...COMMON_CODES,
      ...BODY_CODES,
      'unknown_tag',
      'unknown_field',
      'invalid_header',
      'conflict',
      'contact_erased',
      'idempotency_key_in_use',
      'idempotency_key_reused',
    ]),
  },
}

export const updateContact = {
  operationId: 'updateContact',
  summary: 'Modifica un contatto',
  description:
    'Cambia solo i campi presenti; `{}` non cambia nulla. Ogni altro campo (email, phone, tags, archivedAt…) ' +
    'è rifiutato con invalid_body. Con If-Match la modifica avviene solo se il contatto ha ancora quell’ETag ' +
    '(altrimenti 412 e nulla cambia): così due scritture contemporanee non si sovrascrivono.',
  tags,
  params: ContactParamsSchema,
  querystring: NoQuerySchema,
  headers: Type.Object({
    'if-match': Type.Optional(
      Type.String({ description: 'ETag letto prima della modifica (o *)', examples: ['"v3"'] }),
    ),
  }),
  body: Type.Ref(ContactUpdateSchema),
  response: {
    200: success('Il contatto aggiornato', Type.Ref(ContactSchema), etag),
    ...errorResponses([...COMMON_CODES, ...BODY_CODES, 'unknown_field', 'not_found', 'precondition_failed']),
  },
}
