// Requests that fail before routing, spoken over raw sockets as an attacker would (HTTP clients refuse to send
// most of them): each gets the Italian envelope with the right status, and nothing of the request, the API key
// least of all, reaches the log even at LOG_LEVEL=trace.
import { connect } from 'node:net'
import t from 'tap'
import { build, createTenantWithKey, request } from '../helper.ts'

/** Sends raw bytes and returns everything the server answered before closing (or `waitMs` passing). */
function exchange(port: number, chunks: string[], waitMs = 10_000): Promise<string> {
  return new Promise((resolve) => {
    let answer = ''
    const socket = connect(port, '127.0.0.1', () => {
      for (const chunk of chunks) socket.write(chunk)
    })
    const timer = setTimeout(() => socket.destroy(), waitMs)
    socket.on('data', (data) => {
      answer += data
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(answer)
    })
  })
}

function parse(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n', 2)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  )
  return { status: Number(statusLine.split(' ')[1]), headers, body }
}

t.test('malformed requests get the envelope, and no log line holds the key', async (t) => {
  const lines: string[] = []
  const { app } = await build(
    t,
    // Short enough to wait for the 408, long enough that a loaded machine (the suite runs files side by side)
    // does not turn a stall between accepting a connection and reading it into a 408 for the other cases.
    { LOG_LEVEL: 'trace', REQUEST_TIMEOUT_MS: '6000', HEADERS_TIMEOUT_MS: '6000' },
    { write: (line: string) => lines.push(line) },
  )
  const { key } = await createTenantWithKey(app)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const auth = `Authorization: Bearer ${key}\r\n`
  const get = `GET /api/v1/contacts HTTP/1.1\r\nHost: x\r\n`

  const cases: [string, string[], number, string][] = [
    [
      'Content-Length and Transfer-Encoding',
      [
        `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      ],
      400,
      'bad_request',
    ],
    [
      'a body in gzip before its chunks (found by an outside tester: read as plain JSON)',
      [
        `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n` +
          'Transfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      ],
      415,
      'unsupported_media_type',
    ],
    [
      'two Content-Types (found by an outside tester: the first was kept)',
      [
        `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n` +
          'Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
      ],
      400,
      'bad_request',
    ],
    [
      'two Content-Lengths',
      [`POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`],
      400,
      'bad_request',
    ],
    ['obs-fold', [`${get}${auth}X-Folded: a\r\n  b\r\n\r\n`], 400, 'bad_request'],
    ['bare LF', [`GET /api/v1/contacts HTTP/1.1\nHost: x\n${auth.trim()}\n\n`], 400, 'bad_request'],
    ['header block too large', [`${get}${auth}X-Big: ${'b'.repeat(20_000)}\r\n\r\n`], 431, 'headers_too_large'],
    [
      'body that never completes',
      [
        `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"em`,
      ],
      408,
      'request_timeout',
    ],
    ['unsupported Expect', [`${get}${auth}Expect: 200-ok\r\n\r\n`], 417, 'expectation_failed'],
    [
      'two Authorization headers',
      [`${get}${auth}Authorization: Bearer svc_${'b'.repeat(48)}\r\nConnection: close\r\n\r\n`],
      401,
      'invalid_key_format',
    ],
    [
      'a path out of the static files',
      ['GET /docs/static/../../package.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
      404,
      'not_found',
    ],
    [
      'an encoded path out of the static files',
      ['GET /docs/static/%2e%2e/%2e%2e/package.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
      404,
      'not_found',
    ],
    [
      'an empty Authorization, then a key',
      [`${get}Authorization: \r\n${auth}Connection: close\r\n\r\n`],
      401,
      'invalid_key_format',
    ],
    [
      'a second Authorization after 1,100 headers',
      [
        `${get}${auth}${'a0: b\r\n'.repeat(1100)}Authorization: Bearer svc_${'0'.repeat(48)}\r\nConnection: close\r\n\r\n`,
      ],
      401,
      'invalid_key_format',
    ],
    [
      'two Idempotency-Key headers',
      [
        `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nIdempotency-Key: a\r\n` +
          'Idempotency-Key: b\r\nContent-Length: 19\r\nConnection: close\r\n\r\n{"email":"ik@x.io"}',
      ],
      400,
      'invalid_header',
    ],
    ['no Host header', [`GET /api/v1/contacts HTTP/1.1\r\n${auth}Connection: close\r\n\r\n`], 400, 'bad_request'],
    [
      'two Host headers (found by an outside tester: the first was kept)',
      [`GET /api/v1/contacts HTTP/1.1\r\nHost: x\r\nHost: y\r\n${auth}Connection: close\r\n\r\n`],
      400,
      'bad_request',
    ],
    [
      'a URL that cannot be decoded',
      ['GET /api/v1/contacts/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
      400,
      'bad_request',
    ],
    [
      'a static file that is not there',
      ['GET /docs/static/nothing.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
      404,
      'not_found',
    ],
    [
      'a method the path lacks',
      [`PUT /api/v1/contacts HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`],
      405,
      'method_not_allowed',
    ],
  ]
  for (const [what, chunks, status, code] of cases) {
    const answer = parse(await exchange(port, chunks))
    t.equal(answer.status, status, `${what}: status`)
    t.equal(answer.headers['content-type'], 'application/json; charset=utf-8', `${what}: JSON`)
    t.equal(answer.headers['cache-control'], 'no-store', `${what}: no-store`)
    t.equal(answer.headers['x-content-type-options'], 'nosniff', `${what}: nosniff`)
    t.ok(answer.headers['x-request-id'], `${what}: a request id`)
    t.same(Object.keys(JSON.parse(answer.body || '{}').error ?? {}), ['code', 'message'], `${what}: the envelope`)
    t.equal(JSON.parse(answer.body || '{}').error?.code, code, `${what}: code`)
  }
  const allowed = parse(
    await exchange(port, [`PUT /api/v1/contacts/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]),
  )
  t.equal(allowed.headers.allow, 'GET, PATCH, DELETE', '405 says which methods the path has')

  const normal = parse(await exchange(port, [`${get}${auth}Connection: close\r\n\r\n`]))
  t.equal(normal.status, 200, 'a normal request at trace level')
  const keyAsId = parse(await exchange(port, [`${get}${auth}X-Request-Id: ${key}\r\nConnection: close\r\n\r\n`]))
  t.not(keyAsId.headers['x-request-id'], key, 'a key sent as request id is replaced, not echoed or logged')

  const all = lines.join('\n')
  const keyBytes = [...Buffer.from(key)]
  t.notOk(all.includes(key), 'the key is in no log line as text')
  t.notOk(all.includes(keyBytes.join(',')), 'nor as the list of its bytes')
  t.notOk(all.includes(Buffer.from(key).toString('hex')), 'nor as hex')
  t.notOk(all.includes(Buffer.from(key).toString('base64')), 'nor as base64')
  t.notOk(/rawPacket/.test(all), 'no raw packet is logged')
  t.ok(
    lines.some((line) => line.includes('malformed request refused')),
    'refusals are logged, without the bytes',
  )
})

t.test('the static index redirects to the page, whatever its query', async (t) => {
  const { app } = await build(t)
  for (const url of ['/docs/static/index.html', '/docs/static/index.html?x=1']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 302, url)
    t.equal(res.headers.location, '/docs/', `${url} goes to the page, not to itself`)
  }
})

t.test('a client that hangs up mid-body is logged as such, not as a database outage', async (t) => {
  const lines: string[] = []
  const { app } = await build(t, { LOG_LEVEL: 'info' }, { write: (line: string) => lines.push(line) })
  const { key } = await createTenantWithKey(app)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const head = `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":`
  await exchange(port, [head], 300)
  // The log line comes once the server notices the hang-up: soon, but later on a loaded machine (load 11 once
  // took it past 3 s).
  const deadline = Date.now() + 20_000
  while (!lines.some((line) => line.includes('client closed the connection')) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.ok(
    lines.some((line) => line.includes('client closed the connection')),
    'logged as a client abort',
  )
  t.notOk(
    lines.some((line) => line.includes('database unavailable')),
    'no false database alarm',
  )
  t.notOk(
    lines.some((line) => /"level":(50|60)/.test(line)),
    'nothing at error level',
  )
})

// Found by an outside tester: a query that did not decode (Latin-1's %F2, a cut sequence, %ZZ) was searched as sent
// and answered an empty page, where an undecodable path is a 400.
t.test('a query string that does not decode is 400 bad_request, as an undecodable path is', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  for (const query of ['q=nicol%F2', 'q=%E0%A4%A', 'q=a%ZZ', 'tag=vip%FF', 'email=%FF%FE@example.it', 'a%ZZ=1']) {
    const res = await request(app, key, { method: 'GET', url: `/api/v1/contacts?${query}` })
    t.equal(res.statusCode, 400, query)
    t.equal(res.json().error.code, 'bad_request', query)
  }
  const decoded = await request(app, key, { method: 'GET', url: '/api/v1/contacts?q=nicol%C3%B2' })
  t.equal(decoded.statusCode, 200, 'UTF-8 decodes')
})
