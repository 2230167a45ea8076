// The per-instance counters: fixed windows that start with their first request, and tenants counted apart from
// client addresses so that no number of addresses can hand a tenant a fresh window.
import FakeTimers from '@sinonjs/fake-timers'
import t from 'tap'
import { LocalCounters } from '../../../src/plugins/app/rate-limit-store.ts'

const WINDOW = 60_000

t.test('a window counts from its first request and ends after the window', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: 1_000_000 })
  t.teardown(() => clock.uninstall())
  const counters = new LocalCounters()
  t.same(counters.incr('tenant:a', WINDOW), { current: 1, ttl: WINDOW })
  clock.tick(20_000)
  t.same(counters.incr('tenant:a', WINDOW), { current: 2, ttl: 40_000 })
  t.same(counters.read('tenant:a', WINDOW), { current: 2, ttl: 40_000 }, 'read counts nothing')
  clock.tick(40_000)
  t.same(counters.read('tenant:a', WINDOW), { current: 0, ttl: WINDOW }, 'the window is over')
  t.same(counters.incr('tenant:a', WINDOW), { current: 1, ttl: WINDOW }, 'a new one starts')
})

t.test("requests from 20,000 addresses do not reset a tenant's window", async (t) => {
  const counters = new LocalCounters()
  for (let i = 0; i < 5; i++) counters.incr('tenant:busy', WINDOW)
  for (let i = 0; i < 20_000; i++) counters.incr(`address:10.0.${i >> 8}.${i & 255}`, WINDOW)
  t.equal(counters.incr('tenant:busy', WINDOW).current, 6, 'the tenant keeps its count')
})
