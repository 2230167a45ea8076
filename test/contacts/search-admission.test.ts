// A tenant runs SEARCH_PER_TENANT searches at once on an instance, the instance one less than its connections: the
// others wait their turn, a tenant's turn is not held by another tenant's queue, and a wait past WAIT_MS is refused.
import t from 'tap'
import { SEARCH_PER_TENANT, SearchAdmission, WAIT_MS } from '../../src/contacts/search/admission.ts'
import { CATALOGUE } from '../../src/errors/catalogue.ts'

const busy = () => new Error('busy')

/** A search that runs until `release` is called; `started` tells whether it began. */
function held() {
  let release = () => {}
  const state = { started: false }
  const done = new Promise<void>((resolve) => {
    release = resolve
  })
  return {
    state,
    release: () => release(),
    run: async () => {
      state.started = true
      await done
    },
  }
}

t.test('a tenant past its searches at once waits; another tenant does not', async (t) => {
  const admission = new SearchAdmission(3)
  const mine = Array.from({ length: SEARCH_PER_TENANT + 1 }, held)
  const running = mine.map((search) => admission.inTurn('a', search.run, busy))
  await new Promise((resolve) => setImmediate(resolve))
  t.same(
    mine.map((search) => search.state.started),
    [true, true, false],
    'the third of the tenant waits',
  )
  const theirs = held()
  const other = admission.inTurn('b', theirs.run, busy)
  await new Promise((resolve) => setImmediate(resolve))
  t.ok(theirs.state.started, "another tenant's search starts: the instance runs 3")
  mine[0]?.release()
  await running[0]
  await new Promise((resolve) => setImmediate(resolve))
  t.ok(mine[2]?.state.started, 'the waiting one takes the freed turn')
  for (const search of [...mine, theirs]) search.release()
  await Promise.all([...running, other])
})

t.test('a search that waits past WAIT_MS is refused, and leaves no turn taken', async (t) => {
  const admission = new SearchAdmission(1)
  const first = held()
  const running = admission.inTurn('a', first.run, busy)
  const started = Date.now()
  await t.rejects(
    admission.inTurn('b', async () => {}, busy),
    /busy/,
  )
  t.ok(Date.now() - started >= WAIT_MS - 50, `refused after ${Date.now() - started} ms`)
  first.release()
  await running
  t.equal(await admission.inTurn('b', async () => 'ran', busy), 'ran', 'the instance runs the next at once')
})

t.test('the error table states the turns', async (t) => {
  const when = CATALOGUE.server_busy.when
  t.ok(when.includes(`waited ${WAIT_MS / 1000} s`), 'the wait')
  t.ok(when.includes(`(${SEARCH_PER_TENANT} at once)`), "a tenant's searches at once")
})
