// The real entry point, as a newcomer runs it: a first start on an empty embedded database shows the demo key
// and a curl that works, a second start does not show it again, and SIGTERM lets in-flight requests finish.
// (Starts that fail are in test/config/startup.test.ts.)
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { PRINTED_KEY } from '../src/auth/api-key.ts'
import { type Started, start, waitFor } from './process.ts'

/** 40 list requests in flight when SIGTERM arrives: answered, or turned away in the envelope; then exit 0. */
async function stopUnderLoad(t: Test, server: Started, url: string, headers: Record<string, string>) {
  const inFlight = Array.from({ length: 40 }, () =>
    fetch(`${url}?limit=200&includeArchived=true`, { headers }).then(async (res) => ({
      status: res.status,
      body: await res.text(),
      at: Date.now(),
    })),
  )
  // The signal goes when the first answer arrives: the server is then busy with the others, which a fixed wait
  // did not ensure on a loaded machine (the requests were still connecting, and a closed listener refuses them).
  await Promise.race(inFlight.map((p) => p.catch(() => undefined)))
  const signalledAt = Date.now()
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
}

t.test('first start shows the demo key once, the printed curl works, SIGTERM drains', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rubrica-server-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))

  const first = start({ DATA_DIR: dataDir })
  t.teardown(() => first.child.kill('SIGKILL'))
  const [, key, url] = await waitFor(
    first,
    new RegExp(`curl -H 'Authorization: Bearer (${PRINTED_KEY.source})' (\\S+)`),
  )
  const res = await fetch(url as string, { headers: { authorization: `Bearer ${key}` } })
  t.equal(res.status, 200)
  const body = (await res.json()) as { data: unknown[] }
  t.ok(body.data.length > 0, 'the demo has contacts')
  t.notMatch(first.output(), /"authorization"/i, 'no Authorization header in the logs')
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0, 'SIGTERM closes gracefully with exit code 0')

  const second = start({ DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000' })
  t.teardown(() => second.child.kill('SIGKILL'))
  const [, base] = await waitFor(second, /Server listening at (http:\/\/[^"\s]+)/)
  const list = `${base}/api/v1/contacts`
  const headers = { authorization: `Bearer ${key}` }
  t.equal((await fetch(list, { headers })).status, 200, 'the demo key still works after a restart')
  t.notMatch(second.output(), /svc_/, 'the key is printed only on the first start')
  await stopUnderLoad(t, second, list, headers)
})
