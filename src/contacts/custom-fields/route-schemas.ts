// The route schemas of the tenant's own fields' definitions (/api/v1/fields): what each validates and how the
// OpenAPI document describes it.
import { Type } from '@sinclair/typebox'
import { API_PREFIX } from '../../api-prefix.js'
import {
  BODY_CODES,
  COMMON_CODES,
  errorResponses,
  locationHeader,
  noContent,
  success,
} from '../../openapi/responses.js'
import { NoQuerySchema } from '../../schemas/limits.js'
import {
  CUSTOM_FIELD_LIMITS,
  CustomFieldCreateSchema,
  CustomFieldListSchema,
  CustomFieldParamsSchema,
  CustomFieldSchema,
  CustomFieldUpdateSchema,
} from './model.js'

const tags = ['fields']
const oneField = { tags, params: CustomFieldParamsSchema, querystring: NoQuerySchema }

export const createField = {
  operationId: 'createField',
  summary: 'Crea un campo proprio',
  description:
    `Un campo che ogni contatto dell’organizzazione potrà avere in \`fields\`. Al massimo ${CUSTOM_FIELD_LIMITS.perTenant} ` +
    'campi; un nome già usato dà 409 field_exists. Servono il ruolo admin e lo scope fields:manage.',
  tags,
  querystring: NoQuerySchema,
  body: Type.Ref(CustomFieldCreateSchema),
  response: {
    201: success('Il campo creato', Type.Ref(CustomFieldSchema), {
      ...locationHeader('Percorso del nuovo campo', `${API_PREFIX}/fields/livello`),
    }),
    ...errorResponses([...COMMON_CODES, ...BODY_CODES, 'field_exists', 'limit_reached']),
  },
}

export const listFields = {
  operationId: 'listFields',
  summary: 'Elenca i campi propri',
  description: 'Tutti i campi propri dell’organizzazione, per nome.',
  tags,
  querystring: NoQuerySchema,
  response: {
    200: success('I campi', Type.Ref(CustomFieldListSchema)),
    ...errorResponses([...COMMON_CODES]),
  },
}

export const getField = {
  operationId: 'getField',
  summary: 'Legge un campo proprio',
  description: 'La definizione del campo: tipo, etichetta, opzioni o lunghezza massima. Un nome che non esiste dà 404.',
  ...oneField,
  response: {
    200: success('Il campo', Type.Ref(CustomFieldSchema)),
    ...errorResponses([...COMMON_CODES, 'not_found']),
  },
}

export const updateField = {
  operationId: 'updateField',
  summary: 'Modifica un campo proprio',
  description:
    'Cambia etichetta, opzioni, lunghezza massima o tipo. Un cambio che i valori già salvati non rispetterebbero è ' +
    'rifiutato con 409 field_in_use, che dice quanti contatti li hanno. Servono il ruolo admin e lo scope fields:manage.',
  ...oneField,
  body: Type.Ref(CustomFieldUpdateSchema),
  response: {
    200: success('Il campo modificato', Type.Ref(CustomFieldSchema)),
    ...errorResponses([...COMMON_CODES, ...BODY_CODES, 'not_found', 'field_in_use']),
  },
}

export const deleteField = {
  operationId: 'deleteField',
  summary: 'Elimina un campo proprio',
  description:
    'I valori del campo spariscono subito da ogni risposta e sono rimossi dai contatti poco dopo, senza nuove ' +
    'versioni né eventi. Il nome si può riusare quando la rimozione è finita (almeno un minuto dopo). Servono il ' +
    'ruolo admin e lo scope fields:manage.',
  ...oneField,
  response: {
    204: noContent('Eliminato'),
    ...errorResponses([...COMMON_CODES, 'not_found']),
  },
}

export const getTenantDocument = {
  operationId: 'getTenantDocument',
  summary: 'Il documento OpenAPI dell’organizzazione',
  description:
    'Questo documento, con i campi propri dell’organizzazione della chiave al posto del generico `fields`: ciascuno ' +
    'con il suo tipo JSON Schema (le opzioni di enum come `enum`), nessun altro ammesso; e nella ricerca ' +
    '`fields.<nome>` con gli operatori del suo tipo. Un client generato da qui è tipizzato per quei campi.',
  tags,
  querystring: NoQuerySchema,
  response: {
    200: success(
      'Il documento OpenAPI 3.1 dell’organizzazione',
      Type.Object({}, { additionalProperties: true, description: 'Un documento OpenAPI 3.1' }),
    ),
    ...errorResponses([...COMMON_CODES]),
  },
}
