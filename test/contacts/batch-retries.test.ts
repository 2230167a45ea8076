// The batch against what runs beside it: a deadlock's victim runs again (found by an outsider: two instances'
// batches racing on the same emails deadlocked about once in 30-60 batches, answered 500), and a tag deleted while
// a batch runs is not carried by its contacts (the batch's creates skip the trigger that checks tags).
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t from 'tap'
import { mayRunAgain, retryRolledBack } from '../../src/db/deadlock.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const BATCH = '/api/v1/contacts/batch'

/** What node-postgres throws for a deadlock's victim. */
const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' })

/** What node-postgres throws for a change the contacts trigger refused (a later transaction changed it first). */
const changedFirst = () => Object.assign(new Error('contact changed by a later transaction'), { code: '40001' })

t.test('mayRunAgain reads the SQLSTATE, also of a wrapped error', async (t) => {
  t.ok(mayRunAgain(deadlock()))
  t.ok(mayRunAgain(changedFirst()))
  t.ok(mayRunAgain(new Error('wrapped', { cause: deadlock() })))
  t.notOk(mayRunAgain(Object.assign(new Error('unique'), { code: '23505' })))
  t.notOk(mayRunAgain(null))
})

t.test(
  'retryRolledBack runs the work again after a deadlock or a refused change, never after another error, at most 5 times',
  async (t) => {
    let calls = 0
    t.equal(
      await retryRolledBack(async () => {
        calls++
        if (calls < 5) throw calls % 2 ? deadlock() : changedFirst()
        return 'done'
      }),
      'done',
    )
    t.equal(calls, 5)
    calls = 0
    await t.rejects(
      retryRolledBack(async () => {
        calls++
        throw deadlock()
      }),
      { code: '40P01' },
    )
    t.equal(calls, 5, 'the fifth deadlock is thrown')
    calls = 0
    await t.rejects(
      retryRolledBack(async () => {
        calls++
        throw new Error('other')
      }),
      { message: 'other' },
    )
    t.equal(calls, 1, 'another error is not retried')
  },
)

t.test('a batch whose transaction was a deadlock victim runs again; one that stays a victim is 503', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app, { name: 'Vittima' })
  const upsert = app.batches.upsert.bind(app.batches)
  let deadlocks = 0
  app.batches.upsert = async (...args) => {
    if (deadlocks > 0) {
      deadlocks--
      throw deadlock()
    }
    return upsert(...args)
  }
  const send = (email: string, headers: Record<string, string> = {}) =>
    request(app, key, { method: 'POST', url: BATCH, payload: { contacts: [{ email }] }, headers })

  deadlocks = 1
  const once = await send('una@example.it')
  t.equal(once.statusCode, 200, once.body)
  t.equal(once.json().created, 1)

  deadlocks = 1
  const keyed = await send('due@example.it', { 'idempotency-key': 'lotto-1' })
  t.equal(keyed.statusCode, 200, keyed.body)
  const replay = await send('due@example.it', { 'idempotency-key': 'lotto-1' })
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.equal(replay.body, keyed.body)

  deadlocks = 5
  const stuck = await send('tre@example.it')
  t.equal(stuck.statusCode, 503)
  t.equal(stuck.json().error.code, 'service_unavailable')
  const emails = (await app.db.prisma.contact.findMany({ where: { tenantId }, select: { email: true } })).map(
    (c) => c.email,
  )
  t.same(emails.sort(), ['due@example.it', 'una@example.it'], 'each created once; the one that failed not at all')
})

if (process.env.TEST_DATABASE_URL) {
  t.test('a tag deleted while a batch checks it is refused to the batch, not stored on its contact', async (t) => {
    const { app, db } = await build(t, { RATE_LIMIT_MAX: '1000' })
    const { key, tenantId } = await createTenantWithKey(app, { name: 'Etichette', tags: ['vip', 'condannato'] })
    // Another transaction about to delete the tag: it holds the row, as a DELETE does until it commits.
    const deleter = new pg.Client({ connectionString: db.url })
    await deleter.connect()
    t.teardown(() => deleter.end())
    await deleter.query('BEGIN')
    await deleter.query(`SELECT 1 FROM tags WHERE tenant_id = $1 AND name = 'condannato' FOR UPDATE`, [tenantId])

    const answer = request(app, key, {
      method: 'POST',
      url: BATCH,
      payload: { contacts: [{ email: 'segnato@example.it', tags: ['condannato', 'vip'] }] },
    })
    await sleep(500)
    await deleter.query(`DELETE FROM tags WHERE tenant_id = $1 AND name = 'condannato'`, [tenantId])
    await deleter.query('COMMIT')

    const res = await answer
    t.equal(res.statusCode, 200, res.body)
    const [result] = res.json().results
    t.equal(result.status, 400, JSON.stringify(result))
    t.equal(result.error?.code, 'unknown_tag')
    const stored = await app.db.prisma.contact.findMany({ where: { tenantId }, select: { tags: true } })
    t.same(stored, [], 'no contact carries the deleted tag')
  })
}
