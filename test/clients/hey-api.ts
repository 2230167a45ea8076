// A program written against the client @hey-api/openapi-ts generates from openapi.json, as an integration would:
// type-checked under --strict, then run against a real server (npm run clients:check).
import { client } from './generated/hey-api/client.gen.ts'
import { createContact, getContact, listContacts, updateContact } from './generated/hey-api/sdk.gen.ts'
import type { Contact, ErrorCode } from './generated/hey-api/types.gen.ts'
import { check, email, UNKNOWN_ID } from './scenario.ts'

client.setConfig({
  baseUrl: process.env.RUBRICA_URL,
  headers: { authorization: `Bearer ${process.env.RUBRICA_KEY}` },
})

// List, following `next` until it is null.
const seen: Contact[] = []
let cursor: string | undefined
do {
  const page = await listContacts({ query: { limit: 2, ...(cursor && { cursor }) } })
  check(page.data, `a page (${page.response.status})`)
  seen.push(...page.data.data)
  cursor = page.data.next ?? undefined
} while (cursor)
check(seen.length > 0, 'the demo contacts are listed')

// Create with a tag of the demo organisation.
const address = email('hey-api', 'create')
const created = await createContact({ body: { email: address, firstName: 'Giulia', tags: ['vip'] } })
check(created.response.status === 201 && created.data, `201 (${created.response.status})`)
check(created.data.tags.includes('vip'), 'the tag is on the contact')

// The same email again: 409, whose existing contact is typed.
const conflict = await createContact({ body: { email: address.toUpperCase() } })
check(conflict.response.status === 409 && conflict.error, `409 (${conflict.response.status})`)
const existingId: string | undefined = conflict.error.error.existing?.id
check(existingId === created.data.id, 'the conflict names the existing contact')

// An unknown tag: 400 unknown_tag.
const unknownTag = await createContact({ body: { email: email('hey-api', 'tag'), tags: ['non-esiste'] } })
const code: ErrorCode | undefined = unknownTag.error?.error.code
check(unknownTag.response.status === 400 && code === 'unknown_tag', `400 unknown_tag (${code})`)

// Read, change, and a contact that does not exist.
const read = await getContact({ path: { id: created.data.id } })
check(read.data?.email === address, 'read back')
const updated = await updateContact({ path: { id: created.data.id }, body: { stage: 'customer' } })
check(updated.data?.stage === 'customer', 'patched')
const missing = await getContact({ path: { id: UNKNOWN_ID } })
check(missing.response.status === 404 && missing.error?.error.code === 'not_found', '404 not_found')

console.log(`hey-api: ${seen.length} listed, created ${created.data.id}, conflict, unknown_tag, get, patch, 404: ok`)
