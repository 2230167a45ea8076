// A program written against the client orval generates from openapi.json (fetch client), as an integration would:
// type-checked under --strict, then run against a real server (npm run clients:check).
import { type Contact, createContact, getContact, listContacts, updateContact } from './generated/orval/rubrica.ts'
import { check, email, UNKNOWN_ID } from './scenario.ts'

// List, following `next` until it is null.
const seen: Contact[] = []
let cursor: string | undefined
do {
  const page = await listContacts({ limit: 2, ...(cursor && { cursor }) })
  check(page.status === 200, `a page (${page.status})`)
  seen.push(...page.data.data)
  cursor = page.data.next ?? undefined
} while (cursor)
check(seen.length > 0, 'the demo contacts are listed')

// Create with a tag of the demo organisation.
const address = email('orval', 'create')
const created = await createContact({ email: address, firstName: 'Giulia', tags: ['vip'] })
check(created.status === 201, `201 (${created.status})`)
check(created.data.tags.includes('vip'), 'the tag is on the contact')

// The same email again: 409, whose existing contact is typed.
const conflict = await createContact({ email: address.toUpperCase() })
check(conflict.status === 409, `409 (${conflict.status})`)
const existingId: string | undefined = conflict.data.error.existing?.id
check(existingId === created.data.id, 'the conflict names the existing contact')

// An unknown tag: 400 unknown_tag.
const unknownTag = await createContact({ email: email('orval', 'tag'), tags: ['non-esiste'] })
check(unknownTag.status === 400 && unknownTag.data.error.code === 'unknown_tag', '400 unknown_tag')

// Read, change, and a contact that does not exist.
const read = await getContact(created.data.id)
check(read.status === 200 && read.data.email === address, 'read back')
const updated = await updateContact(created.data.id, { stage: 'customer' })
check(updated.status === 200 && updated.data.stage === 'customer', 'patched')
const missing = await getContact(UNKNOWN_ID)
check(missing.status === 404 && missing.data.error.code === 'not_found', '404 not_found')

console.log(`orval: ${seen.length} listed, created ${created.data.id}, conflict, unknown_tag, get, patch, 404: ok`)
