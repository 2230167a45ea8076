// The receiver docs/api-events-webhooks.md shows (examples/webhook-receiver.mjs), run as its reader would: it takes rubrica's
// deliveries, refuses a forged one, and prints each event once. It listens on loopback.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { addKey, build, createTenantWithKey, request } from '../helper.ts'
import { freePort } from '../services.ts'

const EXAMPLE = 'examples/webhook-receiver.mjs'

t.test('docs/api-events-webhooks.md shows the example receiver as it is in examples/', async (t) => {
  const page = readFileSync('docs/api-events-webhooks.md', 'utf8')
  t.ok(page.includes(readFileSync(EXAMPLE, 'utf8').trim()), 'docs/api-events-webhooks.md holds the file verbatim')
})

t.test('the example receiver verifies rubrica deliveries, refuses a forgery, and prints each event', async (t) => {
  const port = await freePort()
  const { app } = await build(t, {
    WEBHOOKS_ENABLED: 'true',
    WEBHOOKS_ALLOW_INSECURE: 'true',
    WEBHOOKS_RETRY_SCHEDULE: '1,1,1',
  })
  const { tenantId, key } = await createTenantWithKey(app)
  const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const url = `http://127.0.0.1:${port}/`
  const { secret } = (await request(app, admin, { method: 'POST', url: '/api/v1/webhooks', payload: { url } })).json()

  const receiver = spawn(process.execPath, [EXAMPLE], {
    env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.teardown(() => receiver.kill())
  let printed = ''
  receiver.stdout.on('data', (chunk) => (printed += chunk))

  const created = await request(app, key, {
    method: 'POST',
    url: '/api/v1/contacts',
    payload: { email: 'ricevuta@example.it' },
  })
  await request(app, key, {
    method: 'PATCH',
    url: `/api/v1/contacts/${created.json().id}`,
    payload: { stage: 'customer' },
  })
  const deadline = Date.now() + 20_000
  while (printed.split('\n').length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  // Deliveries to one webhook run side by side, and a retry comes later: the order is not promised.
  t.same(printed.trim().split('\n').sort(), [
    `contact.created ${created.json().id} ricevuta@example.it`,
    `contact.updated ${created.json().id} ricevuta@example.it`,
  ])

  const event = JSON.stringify({
    id: 'forged',
    type: 'contact.created',
    occurredAt: new Date().toISOString(),
    data: {},
  })
  const forged = await fetch(url, {
    method: 'POST',
    body: event,
    headers: {
      'webhook-id': 'forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
    },
  })
  t.equal(forged.status, 400, 'a wrong signature is refused')
})
