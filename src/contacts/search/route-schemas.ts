// The route schema of the search: what it validates and how the OpenAPI document describes it. The `security` is
// derived from the route's scope (authorization).
import { Type } from '@sinclair/typebox'
import { BODY_CODES, COMMON_CODES, errorResponses, success } from '../../openapi/responses.js'
import { NoQuerySchema } from '../../schemas/limits.js'
import { SEARCH_LIMITS, SearchPageSchema, SearchRequestSchema } from './model.js'

export const searchContacts = {
  operationId: 'searchContacts',
  summary: 'Cerca contatti con gruppi di filtri e parole',
  description:
    'Trova i contatti che soddisfano almeno uno dei gruppi di filtri (OR; in un gruppo tutti i filtri, AND) e, con ' +
    '`query`, le cui parole iniziano con quelle cercate. Ogni campo del contatto ha gli operatori del suo tipo: ' +
    'testi eq, neq, in, notIn, prefix, exists, notExists (confrontati parola per parola, senza distinzione di ' +
    'maiuscole né di accenti; email senza distinzione di maiuscole, phone per le sole cifre); stati eq, neq, in, ' +
    'notIn; istanti eq, neq, lt, lte, gt, gte, between, exists, notExists (al millisecondo); tags hasAll, hasAny, ' +
    'hasNone, exists, notExists. Gli archiviati solo nei gruppi che nominano archivedAt, o con includeArchived. ' +
    `Limiti: ${SEARCH_LIMITS.groups} gruppi, ${SEARCH_LIMITS.filtersPerGroup} filtri per gruppo, ` +
    `${SEARCH_LIMITS.filters} in tutto, ${SEARCH_LIMITS.values} valori per lista; un filtro sbagliato è 400 ` +
    'invalid_body con il suo nome (filterGroups[1].filters[0]). Le pagine si seguono passando `next` come ' +
    '`cursor`, con la stessa ricerca; `count: true` aggiunge `total`. Un nome di tag che l’organizzazione non ha è ' +
    'un tag che nessun contatto porta. Conta come una richiesta; basta la lettura (contacts:read).',
  tags: ['contacts'],
  querystring: NoQuerySchema,
  body: Type.Ref(SearchRequestSchema),
  response: {
    200: success('Una pagina dei contatti trovati', Type.Ref(SearchPageSchema)),
    ...errorResponses([...COMMON_CODES, ...BODY_CODES, 'server_busy']),
  },
}
