// One delivery attempt over HTTP, against endpoints on loopback that answer, refuse, hang, trickle, cut or stream:
// every attempt ends within its timeout with a short reason, once the status arrived the status decides, no more
// than WEBHOOK_LIMITS.answerBytes of an answer is read, and attempts to one host never queue behind each other.
// Also the lookup every connection uses, which refuses what registration refuses.
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { isIP, type LookupFunction } from 'node:net'
import t, { type Test } from 'tap'
import { WEBHOOK_LIMITS } from '../../src/webhooks/model.ts'
import { httpTransport } from '../../src/webhooks/transport.ts'
import { publicOnlyLookup } from '../../src/webhooks/urls.ts'
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
    // Once the status arrived, it decides: a body trickled past the timeout, cut by the endpoint or too long to
    // read changes nothing (the receiver said what it did with the event).
    ['200, then a body that never ends', (_q, r) => r.writeHead(200).write('{'), { status: 200, error: null }],
    [
      '200, then the socket cut mid-body',
      (_q, r) => {
        r.writeHead(200).write('{')
        setTimeout(() => r.socket?.destroy(), 20)
      },
      { status: 200, error: null },
    ],
    ['500, then a body that never ends', (_q, r) => r.writeHead(500).write('x'), { status: 500, error: 'HTTP 500' }],
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

/** An endpoint that counts its connections and answers each request with `bodyOf` its path. */
async function counting(t: Test, bodyOf: (path: string, response: ServerResponse) => void) {
  const seen = { connections: 0, closedAnswers: 0 }
  const server = createServer((request, response) => {
    request.resume()
    response.on('close', () => seen.closedAnswers++)
    bodyOf(request.url ?? '', response)
  })
  server.on('connection', () => seen.connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const address = server.address()
  return { base: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, seen }
}

t.test('an endless answer is cut after the first few KB at once, counted by its status', async (t) => {
  const chunk = Buffer.alloc(16 * 1024, 'x')
  let written = 0
  const { base, seen } = await counting(t, (_path, response) => {
    response.writeHead(200)
    const pump = () => {
      while (!response.destroyed) {
        written += chunk.length
        if (!response.write(chunk)) return void response.once('drain', pump)
      }
    }
    pump()
  })
  const started = performance.now()
  // A timeout of a minute: only the limit can end these attempts soon.
  const sent = await Promise.all(Array.from({ length: 8 }, () => transport.send(`${base}/`, '{}', {}, 60_000)))
  const took = performance.now() - started
  t.same(
    sent,
    Array.from({ length: 8 }, () => ({ status: 200, error: null })),
    'a 2xx with a huge body is a delivery',
  )
  t.ok(took < 5_000, `ended by the limit, not the timeout (${Math.round(took)} ms)`)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(seen.closedAnswers, 8, "every answer's socket was closed")
  t.comment(`the endpoint wrote ${written} bytes in all before its sockets closed (into the sockets' buffers)`)
})

t.test('an answer read to its end keeps its connection; one cut at the limit closes it', async (t) => {
  const { base, seen } = await counting(t, (path, response) => {
    const size = Number(path.slice(1))
    response.writeHead(200, { 'content-length': size }).end(Buffer.alloc(size, 'x'))
  })
  const sendSized = (size: number) => transport.send(`${base}/${size}`, '{}', {}, 5_000)
  t.same(await sendSized(WEBHOOK_LIMITS.answerBytes), { status: 200, error: null })
  t.same(await sendSized(0), { status: 200, error: null })
  t.equal(seen.connections, 1, 'a body of exactly the limit is read to its end: the connection is reused')
  t.same(
    await sendSized(WEBHOOK_LIMITS.answerBytes + 1),
    { status: 200, error: null },
    'one byte more still counts by status',
  )
  t.same(await sendSized(0), { status: 200, error: null })
  t.equal(seen.connections, 2, 'the connection of the answer cut at the limit was closed, not reused')
})

t.test(
  "the connections' lookup refuses an answer holding any address that is not public, in either form",
  async (t) => {
    const answering =
      (addresses: string[]): LookupFunction =>
      (_hostname, options, callback) => {
        const entries = addresses.map((address) => ({ address, family: isIP(address) }))
        if (options.all) callback(null, entries)
        else callback(null, addresses[0] ?? '', entries[0]?.family)
      }
    const ask = (addresses: string[], all: boolean) =>
      new Promise<string>((resolve) =>
        publicOnlyLookup(answering(addresses))('crm.example.it', { all }, (error) =>
          resolve(error ? error.constructor.name : 'allowed'),
        ),
      )
    for (const all of [false, true]) {
      t.equal(await ask(['93.184.216.34'], all), 'allowed', `a public address (all: ${all})`)
      t.equal(await ask(['2606:2800:220:1:248:1893:25c8:1946'], all), 'allowed', `a public IPv6 address (all: ${all})`)
      for (const address of ['::7f00:1', '::a00:1', '::ffff:7f00:1', '10.0.0.1', 'fd00::1', '169.254.169.254']) {
        t.equal(await ask([address], all), 'AddressNotAllowed', `${address} (all: ${all})`)
      }
    }
    t.equal(await ask(['93.184.216.34', '::7f00:1'], true), 'AddressNotAllowed', 'one bad address among good ones')
    t.equal(await ask([], true), 'AddressNotAllowed', 'no address at all')
  },
)

t.test('the documents state the limit the transport reads to', async (t) => {
  const limit = `${WEBHOOK_LIMITS.answerBytes / 1024} KiB`
  for (const page of ['README.md', 'docs/api-events-webhooks.md', 'docs/operations.md']) {
    t.match(readFileSync(page, 'utf8'), new RegExp(`at most (the first )?${limit}`, 'i'), `${page} says ${limit}`)
  }
})
