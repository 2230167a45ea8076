// Regression: a client trickling its headers was cut off only after about 30 s, not after HEADERS_TIMEOUT_MS.
// Found by: the slow-clients suite (test/fuzz/slow-clients.test.ts; docs/reliability-findings.md, "Failures found").
// How it showed: Node checks its headers and request timeouts only every `connectionsCheckingInterval`, 30 s by
// default, so a connection sending a header byte every 200 ms stayed open long past the 1 s limit.
// Fix: the server's `connectionsCheckingInterval` is set to 1 s.
// Without the fix the connection is still open when the test gives up after 4 s.
import type { Socket } from 'node:net'
import t from 'tap'
import { closedWithin, listen, open, trickle } from '../fuzz/sockets.ts'
import { LIST } from '../fuzz/support.ts'
import { build } from '../helper.ts'

t.test('a slowloris connection is cut off within HEADERS_TIMEOUT_MS, not 30 s later', async (t) => {
  const { app } = await build(t, { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' })
  const sockets = new Set<Socket>()
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
  })
  const slowloris = await open(await listen(app), sockets)
  t.teardown(trickle(slowloris, `GET ${LIST} HTTP/1.1\r\nHost: x\r\nX-Slow: ${'s'.repeat(100)}`, 200))
  const cutAfter = await closedWithin(slowloris, 4000)
  t.ok(cutAfter !== null && cutAfter <= 2500, `closed after ${cutAfter ?? 'more than 4000'} ms (limit 1000 + 1500)`)
})
