// One delivery attempt over HTTP, against endpoints on loopback that answer, refuse, hang, trickle or cut: every
// attempt ends within its timeout with a short reason, and attempts to one host never queue behind each other.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import { httpTransport } from '../../src/webhooks/transport.ts'
import { freePort } from '../services.ts'

const TIMEOUT = 300

async function endpoint(t: Test, handle: (request: IncomingMessage, response: ServerResponse) => void) {
  const server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const address = server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`
}

const transport = httpTransport({ allowInsecure: true })
t.teardown(() => transport.close())
const send = (url: string, signal?: AbortSignal) => transport.send(url, '{}', {}, TIMEOUT, signal)

t.test('each kind of answer, and each kind of silence, ends as it should', async (t) => {
  const cases: [string, (request: IncomingMessage, response: ServerResponse) => void, object][] = [
    ['204', (_q, r) => r.writeHead(204).end(), { status: 204, error: null }],
    ['500', (_q, r) => r.writeHead(500).end('no'), { status: 500, error: 'HTTP 500' }],
    [
      'a redirect, not followed',
      (_q, r) => r.writeHead(301, { location: '/x' }).end(),
      { status: 301, error: 'HTTP 301' },
    ],
    ['no answer', () => {}, { status: null, error: `no answer within ${TIMEOUT} ms` }],
    [
      'headers, then a body that never ends',
      (_q, r) => r.writeHead(200).write('{'),
      { status: 200, error: `no answer within ${TIMEOUT} ms` },
    ],
    ['the socket cut', (q) => q.socket.destroy(), { status: null, error: 'connection reset' }],
  ]
  for (const [what, handle, expected] of cases) {
    const url = await endpoint(t, handle)
    const started = performance.now()
    t.same(await send(url), expected, what)
    t.ok(performance.now() - started < TIMEOUT + 1000, `${what}: ended within the timeout`)
  }
  t.same(await send(`http://127.0.0.1:${await freePort()}/`), { status: null, error: 'connection refused' })
})

t.test('forty hanging attempts to one host are all sent: none waits for a socket another holds', async (t) => {
  let arrived = 0
  const url = await endpoint(t, () => {
    arrived++
  })
  const results = await Promise.all(Array.from({ length: 40 }, () => send(url)))
  t.ok(results.every((r) => r.error === `no answer within ${TIMEOUT} ms`))
  t.equal(arrived, 40, 'the endpoint saw every attempt')
})

t.test('stopping the server ends attempts in flight at once', async (t) => {
  const url = await endpoint(t, () => {})
  const stop = new AbortController()
  const started = performance.now()
  const attempt = transport.send(url, '{}', {}, 60_000, stop.signal)
  setTimeout(() => stop.abort(), 50)
  t.equal((await attempt).status, null)
  t.ok(performance.now() - started < 5_000, 'ended by the stop, not by its 60 s timeout')
})
