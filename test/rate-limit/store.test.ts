// The per-instance counters: fixed windows that start with their first request, and tenants counted apart from
// client addresses so that no number of addresses can hand a tenant a fresh window. And the store in front of
// them: Redis while it answers, process memory otherwise.
import FakeTimers from '@sinonjs/fake-timers'
import t from 'tap'
import type { RedisLink } from '../../src/plugins/app/redis.ts'
import { CounterStore, LocalCounters, RedisCounters } from '../../src/rate-limit/store.ts'

const WINDOW = 60_000

t.test('a window counts from its first request and ends after the window', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: 1_000_000 })
  t.teardown(() => clock.uninstall())
  const counters = new LocalCounters()
  t.same(counters.incr('tenant:a', WINDOW), { current: 1, ttl: WINDOW })
  clock.tick(20_000)
  t.same(counters.incr('tenant:a', WINDOW), { current: 2, ttl: 40_000 })
  counters.refund('tenant:a', WINDOW)
  t.same(counters.incr('tenant:a', WINDOW), { current: 2, ttl: 40_000 }, 'a refund takes one request back')
  clock.tick(39_999)
  t.same(counters.incr('tenant:a', WINDOW), { current: 3, ttl: 1 }, 'the window lasts its whole length')
  clock.tick(1)
  counters.refund('tenant:a', WINDOW)
  t.same(counters.incr('tenant:a', WINDOW), { current: 1, ttl: WINDOW }, 'then a new one starts, refunds or not')
})

t.test("requests from 20,000 addresses do not reset a tenant's window", async (t) => {
  const counters = new LocalCounters()
  for (let i = 0; i < 5; i++) counters.incr('tenant:busy', WINDOW)
  for (let i = 0; i < 20_000; i++) counters.incr(`address:10.0.${i >> 8}.${i & 255}`, WINDOW)
  t.equal(counters.incr('tenant:busy', WINDOW).current, 6, 'the tenant keeps its count')
})

/** A link whose every command answers `answer` (or fails with it), with `available` as given. */
function fakeLink(available: boolean, answer: [number, number] | Error): RedisLink {
  const evalScript = async () => {
    if (answer instanceof Error) throw answer
    return answer
  }
  return { available, client: { eval: evalScript } } as unknown as RedisLink
}

t.test('the store counts in process memory without a promise, and in Redis while it answers', async (t) => {
  const local = new CounterStore(null)
  const counted0 = local.count('tenant:a', WINDOW)
  t.notOk(counted0 instanceof Promise, 'no Redis: the count itself, not a promise')
  t.match(counted0, { current: 1 })

  const shared = new CounterStore(new RedisCounters(fakeLink(true, [7, 1500])))
  const counted = shared.count('tenant:a', WINDOW)
  t.ok(counted instanceof Promise, 'Redis: a promise')
  t.same(await counted, { current: 7, ttl: 1500 }, "Redis's count")

  const down = new CounterStore(new RedisCounters(fakeLink(false, [7, 1500])))
  t.match(down.count('tenant:a', WINDOW), { current: 1 }, 'Redis known to be down: counted in memory, at once')
})

t.test(
  "@fastify/rate-limit's store interface: incr answers through its callback, child is the same store",
  async (t) => {
    const incr = (store: CounterStore) =>
      new Promise((resolve, reject) =>
        store.incr('tenant:a', (error, result) => (error ? reject(error) : resolve(result)), WINDOW),
      )
    const local = new CounterStore(null)
    t.match(await incr(local), { current: 1 })
    t.match(await incr(local), { current: 2 })
    t.equal(local.child(), local, 'every limiter counts in the same counters')
    t.same(await incr(new CounterStore(new RedisCounters(fakeLink(true, [7, 1500])))), { current: 7, ttl: 1500 })
  },
)

t.test('a Redis command that fails is counted in process memory instead, never failing the request', async (t) => {
  const store = new CounterStore(new RedisCounters(fakeLink(true, new Error('connection lost'))))
  t.equal((await store.count('tenant:a', WINDOW)).current, 1)
  t.equal((await store.count('tenant:a', WINDOW)).current, 2, 'the local window goes on')
  await t.resolves(store.refund('tenant:a', WINDOW), 'a refund that fails in Redis is not an error either')
})
