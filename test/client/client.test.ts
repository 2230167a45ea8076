// End to end through the generated client only: the real server on a free port, the typed client from
// openapi.json, every operation and an error envelope.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { PRINTED_KEY } from '../../src/auth/api-key.ts'
import { type Contact, createRubricaClient } from '../../src/client/index.ts'
import { start, waitFor } from '../process.ts'

t.test('create, list with the cursor, read, patch and an error, through the typed client', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rubrica-client-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const server = start({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
  t.teardown(() => server.child.kill('SIGKILL'))
  const [, apiKey, url] = await waitFor(
    server,
    new RegExp(`Bearer (${PRINTED_KEY.source})' (http://\\S+?)/api/v1/contacts`),
  )
  const client = createRubricaClient({ baseUrl: `${url}/`, apiKey: apiKey as string })

  const created = await client.POST('/api/v1/contacts', {
    body: { email: 'client@example.it', firstName: 'Chiara', tags: ['vip'] },
  })
  t.equal(created.response.status, 201)
  const contact = created.data as Contact
  t.equal(contact.email, 'client@example.it')
  t.same(contact.tags, ['vip'])
  t.equal(created.response.headers.get('location'), `/api/v1/contacts/${contact.id}`)

  const seen: string[] = []
  let cursor: string | undefined
  for (;;) {
    const page = await client.GET('/api/v1/contacts', { params: { query: { limit: 2, cursor } } })
    t.equal(page.response.status, 200)
    seen.push(...(page.data?.data ?? []).map((c) => c.id))
    if (!page.data?.next) break
    cursor = page.data.next
  }
  t.ok(seen.includes(contact.id), 'the new contact is in the walk')
  t.equal(new Set(seen).size, seen.length, 'no repeats')

  const read = await client.GET('/api/v1/contacts/{id}', { params: { path: { id: contact.id } } })
  t.same(read.data, contact)

  const patched = await client.PATCH('/api/v1/contacts/{id}', {
    params: { path: { id: contact.id } },
    body: { stage: 'customer', lastName: null },
  })
  t.equal(patched.data?.stage, 'customer')

  const conflict = await client.POST('/api/v1/contacts', { body: { email: 'CLIENT@example.it' } })
  t.equal(conflict.response.status, 409)
  t.equal(conflict.error?.error.code, 'conflict')
  t.equal(conflict.error?.error.existing?.id, contact.id)

  // The integration features, typed: a retried create, a conditional update, a lookup by email.
  const retried = await client.POST('/api/v1/contacts', {
    params: { header: { 'idempotency-key': 'client-1' } },
    body: { email: 'retry@example.it' },
  })
  const again = await client.POST('/api/v1/contacts', {
    params: { header: { 'idempotency-key': 'client-1' } },
    body: { email: 'retry@example.it' },
  })
  t.equal(again.response.headers.get('idempotent-replayed'), 'true')
  t.same(again.data, retried.data, 'a retry gets the same contact')
  const etag = read.response.headers.get('etag') ?? ''
  const stale = await client.PATCH('/api/v1/contacts/{id}', {
    params: { path: { id: contact.id }, header: { 'if-match': etag } },
    body: { stage: 'prospect' },
  })
  t.equal(stale.response.status, 412, 'the ETag read before the first PATCH is stale')
  t.equal(stale.error?.error.code, 'precondition_failed')
  const byEmail = await client.GET('/api/v1/contacts', { params: { query: { email: 'RETRY@example.it' } } })
  t.same(
    byEmail.data?.data.map((c) => c.email),
    ['retry@example.it'],
  )

  // The batch import, typed: one result per item.
  const batch = await client.POST('/api/v1/contacts/batch', {
    body: { contacts: [{ email: 'RETRY@example.it', stage: 'customer' }, { email: 'lotto@example.it' }] },
  })
  t.same(
    batch.data?.results.map((result) => result.status),
    [200, 201],
  )
  t.equal(batch.data?.results[0]?.contact?.id, retried.data?.id, 'found by email, without regard to case')

  // The event feed, typed: the changes above, followed from the start.
  const feed = await client.GET('/api/v1/events', { params: { query: { type: 'contact.updated' } } })
  t.equal(feed.response.status, 200)
  t.ok(
    feed.data?.data.some(
      (event) => event.data.id === contact.id && 'stage' in event.data && event.data.stage === 'customer',
    ),
    'the PATCH is an event carrying the contact',
  )
  t.match(feed.data?.next, /^\d+$/)

  // A person's requests, typed: the export (the demo key is an admin's), and an erasure its scopes do not allow.
  const exported = await client.GET('/api/v1/contacts/{id}/export', { params: { path: { id: contact.id } } })
  t.equal(exported.response.status, 200)
  t.same(
    exported.data?.contact,
    (await client.GET('/api/v1/contacts/{id}', { params: { path: { id: contact.id } } })).data,
  )
  t.same(
    exported.data?.events.map((event) => event.type),
    ['contact.created', 'contact.updated'],
  )
  const erase = await client.DELETE('/api/v1/contacts/{id}', { params: { path: { id: contact.id } } })
  t.equal(erase.response.status, 403)
  t.equal(erase.error?.error.code, 'insufficient_scope')

  const missing = await client.GET('/api/v1/contacts/{id}', {
    params: { path: { id: '00000000-0000-4000-8000-000000000000' } },
  })
  t.equal(missing.response.status, 404)
  t.same(missing.error, { error: { code: 'not_found', message: 'Risorsa non trovata.' } })
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})
