// The route schema of the batch import: what it validates and how the OpenAPI document describes it. The
// `security` is derived from the route's scope (authorization).
import { Type } from '@sinclair/typebox'
import { BODY_CODES, COMMON_CODES, errorResponses, replayedHeader, success } from '../../openapi/responses.js'
import { NoQuerySchema } from '../../schemas/limits.js'
import { idempotencyHeaders } from '../route-schemas.js'
import { BATCH_BODY_LIMIT, BatchResponseSchema, BatchUpsertSchema, MAX_BATCH_ITEMS } from './model.js'

export const importContacts = {
  operationId: 'importContacts',
  summary: 'Importa contatti in blocco (crea o aggiorna per email)',
  description:
    `Da 1 a ${MAX_BATCH_ITEMS} contatti per richiesta, ciascuno riconosciuto dall’email senza distinzione di ` +
    'maiuscole. Un’email che non corrisponde a nessun contatto ne crea uno, come POST (risultato 201; emailStatus e ' +
    'stage si possono indicare); una che corrisponde a un contatto, archiviato o no, lo aggiorna: i campi presenti ' +
    'sono impostati, i tag elencati aggiunti (nessuno tolto), l’email resta scritta com’era (risultato 200). Un ' +
    'elemento che non cambierebbe nulla lascia il contatto, il suo ETag e updatedAt come sono e non registra eventi: ' +
    'ripetere un’importazione è innocuo. Ogni elemento è indipendente e tutto o niente: uno che non rispetta le ' +
    'regole (invalid_body, con il nome dell’elemento e del campo), che nomina tag inesistenti (unknown_tag) o che ' +
    'ripete l’email di un elemento precedente (duplicate_in_batch) ha risultato 400, non cambia nulla e non ferma ' +
    'gli altri; così uno la cui email è di un contatto cancellato su richiesta dell’interessato, con risultato 409 ' +
    '(contact_erased). La richiesta conta una volta nel limite di richieste. È rifiutata per intero, senza scrivere nulla, ' +
    `se non è un lotto (0 o più di ${MAX_BATCH_ITEMS} elementi, niente \`contacts\`: 400) o se supera ` +
    `${BATCH_BODY_LIMIT} byte (413: ci stanno ${MAX_BATCH_ITEMS} elementi dei più lunghi scritti in ASCII; con testi ` +
    'in altre scritture, che occupano fino a 4 byte per carattere, il lotto va diviso). Se il servizio sta già ' +
    'eseguendo tutte le importazioni che può, è rifiutata prima di leggerne il corpo (503 server_busy, con ' +
    'Retry-After). Idempotency-Key come per POST.',
  tags: ['contacts'],
  querystring: NoQuerySchema,
  headers: idempotencyHeaders,
  body: Type.Ref(BatchUpsertSchema),
  response: {
    200: success('Un risultato per elemento, nell’ordine inviato, e i conteggi', Type.Ref(BatchResponseSchema), {
      ...replayedHeader,
    }),
    ...errorResponses([
      ...COMMON_CODES,
      ...BODY_CODES,
      'unknown_field',
      'invalid_header',
      'idempotency_key_in_use',
      'idempotency_key_reused',
      'server_busy',
    ]),
  },
}
