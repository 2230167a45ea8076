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
