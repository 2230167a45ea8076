// Misuse of the generated client is a compile error: `npm run typecheck` fails if an @ts-expect-error below
// stops being an error. At run time this file only checks that the calls are well formed.
import t from 'tap'
import { createRubricaClient } from '../../src/client/index.ts'

const client = createRubricaClient({ baseUrl: 'http://127.0.0.1:1', apiKey: `svc_${'0'.repeat(48)}` })

function misuses() {
  // @ts-expect-error stage must be one of lead, prospect, customer, ex_customer
  client.PATCH('/api/v1/contacts/{id}', { params: { path: { id: 'x' } }, body: { stage: 'vip' } })
  // @ts-expect-error email is required to create a contact
  client.POST('/api/v1/contacts', { body: { firstName: 'Anna' } })
  // @ts-expect-error a webhook's events are contact.created, contact.updated and contact.erased
  client.POST('/api/v1/webhooks', { body: { url: 'https://crm.example.it/h', events: ['contact.deleted'] } })
  // @ts-expect-error every item of a batch needs its email
  client.POST('/api/v1/contacts/batch', { body: { contacts: [{ firstName: 'Anna' }] } })
  // @ts-expect-error a webhook needs its url
  client.POST('/api/v1/webhooks', { body: { events: ['contact.created'] } })
}

/** An event's data is a Contact or, once the contact is erased, its id alone: a client must tell which. */
async function erasedOrNot(): Promise<string | null> {
  const page = await client.GET('/api/v1/events')
  const data = page.data?.data[0]?.data
  // @ts-expect-error an erased contact has no email
  data?.email
  return data === undefined || 'erased' in data ? null : data.email
}

/** A webhook's secret is typed on the answer that creates it, and on no other. */
async function secretOnlyOnCreate(): Promise<string> {
  const created = await client.POST('/api/v1/webhooks', { body: { url: 'https://crm.example.it/h' } })
  const listed = await client.GET('/api/v1/webhooks')
  // @ts-expect-error a listed webhook has no secret
  listed.data?.data[0]?.secret
  return created.data?.secret ?? ''
}

t.test('the client exposes the operations', async (t) => {
  t.type(client.GET, 'function')
  t.type(client.POST, 'function')
  t.type(client.PATCH, 'function')
  t.type(client.DELETE, 'function')
  t.type(misuses, 'function')
  t.type(secretOnlyOnCreate, 'function')
  t.type(erasedOrNot, 'function')
})
