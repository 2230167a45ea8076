// A program written against the client @hey-api/openapi-ts generates from the demo tenant's own document
// (GET /api/v1/openapi.json with its key): its fields are typed (an enum's options, a date as text), and a field
// the tenant does not have is a compile error, which the @ts-expect-error below requires (tsc fails if it is not
// one). Run against the server by npm run clients:check.
import { client } from './generated/hey-api-tenant/client.gen.ts'
import { createContact, searchContacts } from './generated/hey-api-tenant/sdk.gen.ts'
import type { ContactCreate } from './generated/hey-api-tenant/types.gen.ts'
import { check, email } from './scenario.ts'

client.setConfig({
  baseUrl: process.env.RUBRICA_URL,
  headers: { authorization: `Bearer ${process.env.RUBRICA_KEY}` },
})

const body: ContactCreate = {
  email: email('hey-api-tenant', 'create'),
  fields: { livello: 'oro', compleanno: '1990-05-17' },
}
const created = await createContact({ body })
check(created.response.status === 201 && created.data, `201 (${created.response.status})`)
const level: 'bronzo' | 'argento' | 'oro' | undefined = created.data.fields.livello
check(level === 'oro', 'the field comes back typed')

// @ts-expect-error: the demo tenant has no field "livelo"; its document says so, and the client with it.
const misspelt: ContactCreate = { email: email('hey-api-tenant', 'typo'), fields: { livelo: 'oro' } }
check(misspelt.email.length > 0, 'the misspelt body is only for the compiler')

const found = await searchContacts({
  body: { filterGroups: [{ filters: [{ field: 'fields.livello', op: 'eq', value: 'oro' }] }], count: true },
})
check(
  found.data?.data.some((contact) => contact.id === created.data.id),
  'found by its field',
)

console.log(`hey-api (tenant document): created ${created.data.id} with typed fields, found by fields.livello: ok`)
