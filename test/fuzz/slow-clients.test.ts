// Slow and abusive clients on a real socket: headers trickled a byte at a time (slowloris), a body trickled a
// byte at a time, an oversized header, and 200 idle connections. With HEADERS_TIMEOUT_MS=1000 and
// REQUEST_TIMEOUT_MS=2000 the server must cut the slow ones off within those limits (plus a little slack), answer
// the oversized header with 431 or a closed connection, and keep answering a normal client promptly throughout.
// Every wait is bounded: a connection still open past its deadline fails the test and is destroyed.
import type { Socket } from 'node:net'
import t from 'tap'
import { build, createTenantWithKey } from '../helper.ts'
import { closedWithin, listen, open, sleep, trickle } from './sockets.ts'

const HEADERS_TIMEOUT_MS = 1000
const REQUEST_TIMEOUT_MS = 2000
/** Time allowed beyond a timeout for the server to notice and close the connection. */
const SLACK_MS = 1500
/** Give up on a connection after this long in any case. */
const GIVE_UP_MS = 6000

t.test('slow and abusive clients are cut off; normal clients are served meanwhile', async (t) => {
  const { app } = await build(t, {
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    RATE_LIMIT_MAX: '1000000',
  })
  const { key } = await createTenantWithKey(app)
  const port = await listen(app)
  const base = `http://127.0.0.1:${port}`
  const sockets = new Set<Socket>()
  // Whatever happens, no socket of ours outlives the test (app.close() would otherwise wait for them).
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
  })

  const normalRequest = async () => {
    const started = performance.now()
    const res = await fetch(`${base}/api/v1/contacts?limit=1`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(GIVE_UP_MS),
    })
    await res.arrayBuffer()
    return { status: res.status, ms: performance.now() - started }
  }
  t.equal((await normalRequest()).status, 200, 'the server answers before the abuse')
  // The three abuses run at the same time (subtests in parallel): each is also load for the others.
  t.jobs = 3

  t.test('headers and a body trickled a byte every 200 ms are cut off within the timeouts', async (t) => {
    const slowloris = await open(port, sockets)
    const stopHeaders = trickle(
      slowloris,
      `GET /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Slow: ${'s'.repeat(200)}\r\n\r\n`,
      200,
    )
    const slowBody = await open(port, sockets)
    const body = JSON.stringify({ email: 'lento@x.io', firstName: 'x'.repeat(150) })
    slowBody.socket.write(
      `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    )
    const stopBody = trickle(slowBody, body, 200)
    const [headersCut, bodyCut] = await Promise.all([
      closedWithin(slowloris, GIVE_UP_MS),
      closedWithin(slowBody, GIVE_UP_MS),
    ])
    stopHeaders()
    stopBody()
    t.ok(
      headersCut !== null && headersCut <= HEADERS_TIMEOUT_MS + SLACK_MS,
      `slowloris cut off after ${headersCut ?? `more than ${GIVE_UP_MS}`} ms (limit ${HEADERS_TIMEOUT_MS} + ${SLACK_MS})`,
    )
    t.ok(
      bodyCut !== null && bodyCut <= REQUEST_TIMEOUT_MS + SLACK_MS,
      `trickled body cut off after ${bodyCut ?? `more than ${GIVE_UP_MS}`} ms (limit ${REQUEST_TIMEOUT_MS} + ${SLACK_MS})`,
    )
    for (const [name, connection] of [
      ['slowloris', slowloris],
      ['slow body', slowBody],
    ] as const) {
      t.notMatch(connection.received(), /^HTTP\/1\.1 2\d\d/, `${name}: never a success`)
      connection.socket.destroy()
    }
    t.equal(await app.db.prisma.contact.count({ where: { email: 'lento@x.io' } }), 0, 'the trickled create did nothing')
  })

  t.test('an oversized header gets 431 or a closed connection, not a hang', async (t) => {
    const big = await open(port, sockets)
    big.socket.write(
      `GET /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
    )
    const cut = await closedWithin(big, 2000)
    const answer = big.received()
    t.ok(
      cut !== null || /^HTTP\/1\.1 431/.test(answer),
      `answered ${JSON.stringify(answer.split('\r\n')[0] ?? '')} and ${cut === null ? 'still open' : `closed after ${cut} ms`}`,
    )
    t.match(answer, /^(HTTP\/1\.1 431|$)/, 'a 431 or nothing at all')
    big.socket.destroy()
  })

  t.test('200 idle connections do not slow a normal client down', async (t) => {
    // Half say nothing at all, half start a request line and stop.
    const idle = await Promise.all(Array.from({ length: 200 }, () => open(port, sockets)))
    idle.forEach((connection, i) => {
      if (i % 2 === 1) connection.socket.write('GET /api/v1/contacts HTTP/1.1\r\nHost: x\r\n')
    })
    const timings: number[] = []
    for (let i = 0; i < 5; i++) {
      const answer = await normalRequest()
      t.equal(answer.status, 200, `normal request ${i + 1} answered`)
      timings.push(answer.ms)
      await sleep(100)
    }
    t.ok(Math.max(...timings) < 2000, `answered in ${timings.map((ms) => Math.round(ms)).join(', ')} ms (each < 2000)`)
    const started = idle.filter((_, i) => i % 2 === 1)
    const cut = await Promise.all(started.map((c) => closedWithin(c, HEADERS_TIMEOUT_MS + SLACK_MS)))
    const stillOpen = cut.filter((ms) => ms === null).length
    t.equal(stillOpen, 0, `all ${started.length} half-started requests cut off by the headers timeout`)
    const silent = await Promise.all(idle.filter((_, i) => i % 2 === 0).map((c) => closedWithin(c, 0)))
    t.comment(`${silent.filter((ms) => ms !== null).length} of 100 silent connections closed by the server so far`)
    for (const connection of idle) connection.socket.destroy()
    t.equal((await normalRequest()).status, 200, 'still serving after the flood')
  })
})
