// The route schemas of the contacts operations: what each validates and how the OpenAPI document describes it.
// The `security` of each operation is not written here: it is derived from the route's scope (authorization).
import { Type } from '@sinclair/typebox'
import {
  ContactCreateSchema,
  ContactListQuerySchema,
  ContactListSchema,
  ContactParamsSchema,
  ContactSchema,
  ContactUpdateSchema,
  NoQuerySchema,
} from './contacts.js'
import { errorResponses, locationHeader, success } from './responses.js'

const tags = ['contacts']

export const listContacts = {
  operationId: 'listContacts',
  summary: 'Elenca i contatti',
  description:
    'Contatti dell’organizzazione, dal più recente per createdAt. Per la pagina successiva si passa `next` come ' +
    '`cursor`; `next` è null sull’ultima pagina. Gli archiviati sono esclusi salvo `includeArchived=true`.',
  tags,
  querystring: ContactListQuerySchema,
  response: { 200: success('Una pagina di contatti', Type.Ref(ContactListSchema)), ...errorResponses.list },
}

export const getContact = {
  operationId: 'getContact',
  summary: 'Legge un contatto',
  description: 'Anche se archiviato. Un id inesistente, di un’altra organizzazione o non UUID dà lo stesso 404.',
  tags,
  params: ContactParamsSchema,
  querystring: NoQuerySchema,
  response: { 200: success('Il contatto', Type.Ref(ContactSchema)), ...errorResponses.read },
}

export const createContact = {
  operationId: 'createContact',
  summary: 'Crea un contatto',
  description:
    'Valori iniziali: emailStatus active, stage lead, source api, consentType unknown se non indicato, ' +
    'acquiredAt uguale a createdAt. L’email è unica nell’organizzazione senza distinzione di maiuscole. ' +
    'I tag devono esistere già; l’API non ne crea.',
  tags,
  querystring: NoQuerySchema,
  body: Type.Ref(ContactCreateSchema),
  response: {
    201: success('Il contatto creato', Type.Ref(ContactSchema), locationHeader),
    ...errorResponses.create,
  },
}

export const updateContact = {
  operationId: 'updateContact',
  summary: 'Modifica un contatto',
  description:
    'Cambia solo i campi presenti; `{}` non cambia nulla. Ogni altro campo (email, phone, tags, archivedAt…) ' +
    'è rifiutato con invalid_body.',
  tags,
  params: ContactParamsSchema,
  querystring: NoQuerySchema,
  body: Type.Ref(ContactUpdateSchema),
  response: { 200: success('Il contatto aggiornato', Type.Ref(ContactSchema)), ...errorResponses.update },
}
