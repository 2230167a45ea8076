// How an instance shares its batch writers out, and what lets one tenant's batches write at once: a tenant alone
// takes every writer's place, a place that frees goes to the tenant writing least, and two batches of one tenant
// whose clocks read the same instant still give their contacts distinct createdAt, each in one INSERT, without
// waiting for the other; and batches of one tenant naming the same emails, sent all at once, each answer 200 and
// leave one contact per email (on PostgreSQL, where transactions run at once).
import t from 'tap'
import { BatchAdmission } from '../../src/contacts/batch/admission.ts'
import { BatchRepository } from '../../src/contacts/batch/repository.ts'
import { batchSql } from '../../src/contacts/batch/sql.ts'
import type { Query } from '../../src/db/database.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

/** A batch's work that ends when `finish` is called, recording when it started. */
function heldWork(started: string[], name: string) {
  let finish = () => {}
  const ended = new Promise<void>((resolve) => {
    finish = resolve
  })
  return {
    work: async () => {
      started.push(name)
      await ended
      return name
    },
    finish: () => finish(),
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

t.test("a tenant alone takes every writer's place; a place that frees goes to the tenant writing least", async (t) => {
  const admission = new BatchAdmission({ budgetBytes: 1e9, minimumBytes: 1, bodyLimit: 1e9, writers: 2 })
  const started: string[] = []
  const a = ['a1', 'a2', 'a3', 'a4'].map((name) => heldWork(started, name))
  const b = heldWork(started, 'b1')
  const answers = a.map((held) => admission.inTurn('A', held.work))
  await settle()
  t.same(started, ['a1', 'a2'], "tenant A's first two batches write at once")
  t.equal(admission.writingFor('A'), 2)

  const answerB = admission.inTurn('B', b.work)
  await settle()
  t.same(started, ['a1', 'a2'], 'B waits: both places are taken')
  a[1]?.finish()
  await settle()
  t.same(started, ['a1', 'a2', 'b1'], "the freed place goes to B, which writes nothing, before A's earlier a3")
  t.equal(admission.writingFor('B'), 1)

  a[0]?.finish()
  await settle()
  t.same(started, ['a1', 'a2', 'b1', 'a3'], 'then A again, in the order its batches came')
  b.finish()
  await settle()
  t.same(started, ['a1', 'a2', 'b1', 'a3', 'a4'])
  for (const held of a) held.finish()
  t.same(await Promise.all([...answers, answerB]), ['a1', 'a2', 'a3', 'a4', 'b1'], 'each batch answers its own')
  t.equal(admission.writingFor('A') + admission.writingFor('B'), 0, 'no place is left taken')
})

t.test("a tenant's batches naming the same contacts take turns; the others write at once", async (t) => {
  const admission = new BatchAdmission({ budgetBytes: 1e9, minimumBytes: 1, bodyLimit: 1e9, writers: 4 })
  const started: string[] = []
  const first = heldWork(started, 'x,y')
  const same = heldWork(started, 'y,z')
  const apart = heldWork(started, 'w')
  const otherTenant = heldWork(started, 'other x')
  const answers = [
    admission.inTurn('A', first.work, new Set(['x', 'y'])),
    admission.inTurn('A', same.work, new Set(['y', 'z'])),
    admission.inTurn('A', apart.work, new Set(['w'])),
    admission.inTurn('B', otherTenant.work, new Set(['x'])),
  ]
  await settle()
  t.same(started, ['x,y', 'w', 'other x'], 'the batch naming y again waits; the others write at once')
  first.finish()
  await answers[0]
  await settle()
  t.same(started, ['x,y', 'w', 'other x', 'y,z'], 'it writes once the earlier one naming y has ended')
  for (const held of [same, apart, otherTenant]) held.finish()
  await Promise.all(answers)
})

t.test('a batch whose work fails gives its place back', async (t) => {
  const admission = new BatchAdmission({ budgetBytes: 1e9, minimumBytes: 1, bodyLimit: 1e9, writers: 1 })
  await t.rejects(
    admission.inTurn('A', async () => {
      throw new Error('no')
    }),
  )
  t.equal(await admission.inTurn('A', async () => 'next'), 'next')
})

if (process.env.TEST_DATABASE_URL) {
  t.test(
    'two batches of a tenant whose clocks read the same instant create at distinct instants, at once',
    { timeout: 60_000 },
    async (t) => {
      const { app } = await build(t)
      const { tenantId } = await createTenantWithKey(app)
      const repository = new BatchRepository(app.db, app.erasedEmails, app.customFieldRegistry)
      // The tenant's first batch makes its event_feeds row, which a second would wait for until the first commits.
      t.equal((await repository.upsert(tenantId, [{ email: 'prima@example.it' }])).created, 1)
      const inserts = [0, 0]
      /** The instant both clocks answer: the first one read, as if both were read in the same microsecond. */
      let sameInstant: string | undefined
      let clocksRead = 0
      let bothRead = () => {}
      const bothClocksRead = new Promise<void>((resolve) => {
        bothRead = resolve
      })
      /** Each batch's statements, its clock answered with `sameInstant`, held until both batches have read theirs. */
      const watched =
        (batch: number, query: Query): Query =>
        async <Row>(name: string, sql: string, params: unknown[]) => {
          if (sql === batchSql.INSERT.sql) inserts[batch] = (inserts[batch] ?? 0) + 1
          const rows = await query<Row>(name, sql, params)
          if (sql !== batchSql.CLOCK.sql) return rows
          sameInstant ??= (rows[0] as { at: string }).at
          if (++clocksRead === 2) bothRead()
          await bothClocksRead
          return [{ at: sameInstant }] as Row[]
        }
      const items = (side: string) => Array.from({ length: 300 }, (_, i) => ({ email: `${side}.${i}@example.it` }))
      const answers = await Promise.all(
        ['a', 'b'].map((side, batch) =>
          app.db.transaction((query) => repository.upsert(tenantId, items(side), watched(batch, query))),
        ),
      )
      t.same(
        answers.map(({ created, failed }) => ({ created, failed })),
        [
          { created: 300, failed: 0 },
          { created: 300, failed: 0 },
        ],
      )
      t.same(inserts, [1, 1], 'each batch created its contacts in one INSERT: none of its instants was taken')
      // createdAt is answered to the millisecond; the database holds it to the microsecond.
      const [stored] = await app.db.transaction((query) =>
        query<{ instants: number }>(
          'batch_turns_instants',
          'SELECT count(DISTINCT created_at)::int AS instants FROM contacts WHERE tenant_id = $1',
          [tenantId],
        ),
      )
      t.equal(stored?.instants, 601, 'every contact has an instant of its own')
    },
  )

  t.test(
    "a tenant's batches naming the same emails, all at once, each answered 200, one contact per email",
    async (t) => {
      const { app } = await build(t, { RATE_LIMIT_MAX: '1000000', BATCH_CONCURRENCY: '6', DATABASE_POOL_SIZE: '8' })
      const { tenantId, key } = await createTenantWithKey(app)
      // Eight batches of 200 items over 300 addresses, each in an order of its own: their creates, updates and second
      // rounds cross, and PostgreSQL may roll one back to break a circle of waits (it then runs again).
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, b) =>
          request(app, key, {
            method: 'POST',
            url: '/api/v1/contacts/batch',
            payload: {
              contacts: Array.from({ length: 200 }, (_, i) => ({
                email: `p.${(i * 7 + b * 37) % 300}@example.it`,
                firstName: `N${b}`,
              })),
            },
          }),
        ),
      )
      t.same(
        answers.map((answer) => answer.statusCode),
        Array(8).fill(200),
        answers.find((answer) => answer.statusCode !== 200)?.body ?? 'every batch answered 200',
      )
      const outcomes = answers.flatMap((answer) =>
        answer.json().results.map((result: { status: number }) => result.status),
      )
      t.ok(
        outcomes.every((status: number) => status === 200 || status === 201),
        'every item created or updated',
      )
      const [stored] = await app.db.transaction((query) =>
        query<{ contacts: number; created: number }>(
          'batch_turns_overlap',
          `SELECT (SELECT count(*)::int FROM contacts WHERE tenant_id = $1) AS contacts,
          (SELECT count(*)::int FROM events WHERE tenant_id = $1 AND type = 'contact.created') AS created`,
          [tenantId],
        ),
      )
      const addresses = new Set(
        Array.from({ length: 8 }, (_, b) => Array.from({ length: 200 }, (_, i) => (i * 7 + b * 37) % 300)).flat(),
      )
      t.same(
        stored,
        { contacts: addresses.size, created: addresses.size },
        'one contact and one created event per email',
      )
      t.equal(
        outcomes.filter((status: number) => status === 201).length,
        addresses.size,
        'each email answered 201 once',
      )
    },
  )
}
