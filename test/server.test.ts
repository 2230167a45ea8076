// The real entry point, as a newcomer runs it: first start on an empty embedded database, second start,
// configuration errors and a graceful stop.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { start, waitFor } from './process.ts'

t.test('first start creates the demo once, and the printed curl works', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rubrica-server-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))

  const first = start({ DATA_DIR: dataDir })
  t.teardown(() => first.child.kill('SIGKILL'))
  const [, key, url] = await waitFor(first, /curl -H 'Authorization: Bearer (svc_[0-9a-f]{48})' (\S+)/)
  const res = await fetch(url as string, { headers: { authorization: `Bearer ${key}` } })
  t.equal(res.status, 200)
  const body = (await res.json()) as { data: unknown[] }
  t.ok(body.data.length > 0, 'the demo has contacts')
  t.notMatch(first.output(), /"authorization"/i, 'no Authorization header in the logs')

  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0, 'SIGTERM closes gracefully with exit code 0')

  const second = start({ DATA_DIR: dataDir })
  t.teardown(() => second.child.kill('SIGKILL'))
  const [, secondUrl] = await waitFor(second, /Server listening at (http:\/\/[^"\s]+)/)
  const again = await fetch(`${secondUrl}/api/v1/contacts`, { headers: { authorization: `Bearer ${key}` } })
  t.equal(again.status, 200, 'the demo key still works after a restart')
  t.notMatch(second.output(), /svc_/, 'the key is printed only on the first start')
  second.child.kill('SIGINT')
  t.equal(await second.exited, 0)
})

t.test('a wrong setting stops the start with a message naming it', async (t) => {
  for (const [name, value] of [
    ['PORT', 'abc'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['RATE_LIMIT_MAX', '0'],
  ]) {
    const started = start({ [name as string]: value as string, DATA_DIR: '/nonexistent/never-created' })
    t.equal(await started.exited, 1, `${name}=${value} exits 1`)
    t.match(started.output(), new RegExp(name as string), `the message names ${name}`)
  }
})

t.test('SIGTERM lets in-flight requests finish', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rubrica-grace-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const server = start({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000' })
  t.teardown(() => server.child.kill('SIGKILL'))
  const [, key, url] = await waitFor(server, /Bearer (svc_[0-9a-f]{48})' (\S+)/)
  const headers = { authorization: `Bearer ${key}` }
  t.equal((await fetch(url as string, { headers })).status, 200, 'warm')

  let signalledAt = 0
  const inFlight = Array.from({ length: 40 }, () =>
    fetch(`${url}?limit=200&includeArchived=true`, { headers }).then(async (res) => ({
      status: res.status,
      body: await res.text(),
      at: Date.now(),
    })),
  )
  await new Promise((resolve) => setTimeout(resolve, 30))
  signalledAt = Date.now()
  server.child.kill('SIGTERM')
  const results = await Promise.allSettled(inFlight)
  const answered = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  t.ok(answered.length > 0, `${answered.length} of 40 answered`)
  for (const refused of answered.filter((r) => r.status !== 200)) {
    // Requests that reach a draining server are turned away in the envelope, for the load balancer to retry.
    t.equal(refused.status, 503)
    t.equal(JSON.parse(refused.body).error.code, 'service_unavailable')
  }
  t.ok(
    answered.some((r) => r.status === 200 && r.at >= signalledAt),
    'requests in flight at the signal were still answered',
  )
  t.equal(await server.exited, 0, 'then the process exits 0')
})
