// The route schemas of a contact's erasure and export: what each validates and how the OpenAPI document describes
// it. The `security` of each operation is derived from the route's scope (authorization).
import { Type } from '@sinclair/typebox'
import { ContactParamsSchema } from '../contacts/model.js'
import { COMMON_CODES, errorResponses, noContent, success } from '../openapi/responses.js'
import { NoQuerySchema } from '../schemas/limits.js'
import { ContactExportSchema } from './model.js'

const tags = ['contacts']

export const eraseContact = {
  operationId: 'eraseContact',
  summary: 'Cancella un contatto su richiesta dell’interessato',
  description:
    'Diritto alla cancellazione (GDPR, articolo 17): il contatto è eliminato, e con lui ogni copia dei suoi dati che ' +
    'rubrica conserva: negli eventi del feed (e quindi nelle consegne ai webhook che seguono) resta solo il suo id, ' +
    'con `erased: true`, e un evento contact.erased lo annuncia; le risposte conservate per Idempotency-Key che lo ' +
    'contengono sono eliminate (ripetere quelle richieste le esegue di nuovo). Restano la registrazione della ' +
    'cancellazione (id del contatto, quando, quale chiave) e un’impronta cifrata con chiave dell’email, mai ' +
    'l’email: creare di nuovo un contatto con quell’email, con POST o con un’importazione, è rifiutato (409 ' +
    'contact_erased) finché un amministratore del servizio non lo riammette. Irreversibile. Una seconda ' +
    'cancellazione dello stesso id dà 404, come un id inesistente. Servono il ruolo admin e lo scope ' +
    'contacts:erase; 503 se il servizio non ha la chiave dei suoi segreti. Con If-Match la cancellazione avviene ' +
    'solo se il contatto ha ancora quell’ETag (altrimenti 412 e nulla cambia).',
  tags,
  params: ContactParamsSchema,
  querystring: NoQuerySchema,
  headers: Type.Object({
    'if-match': Type.Optional(
      Type.String({ description: 'ETag letto prima della cancellazione (o *)', examples: ['"v3"'] }),
    ),
  }),
  response: {
    204: noContent('Cancellato'),
    ...errorResponses([...COMMON_CODES, 'not_found', 'precondition_failed']),
  },
}

export const exportContact = {
  operationId: 'exportContact',
  summary: 'Esporta tutto ciò che rubrica conserva di un contatto',
  description:
    'Diritti di accesso e di portabilità (GDPR, articoli 15 e 20): un documento JSON con il contatto come lo ' +
    'restituisce GET, i suoi eventi ancora conservati come li mostra il feed (dal più vecchio), e i tentativi di ' +
    'consegnarli ai webhook dell’organizzazione (webhook, URL, evento, tentativo, istante, stato, esito). Servono ' +
    'il ruolo admin e lo scope contacts:read.',
  tags,
  params: ContactParamsSchema,
  querystring: NoQuerySchema,
  response: {
    200: success('Ciò che rubrica conserva del contatto', Type.Ref(ContactExportSchema)),
    ...errorResponses([...COMMON_CODES, 'not_found']),
  },
}
