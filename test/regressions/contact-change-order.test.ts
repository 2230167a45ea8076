// Regression: a contact's events could come out of the order of its changes, and two of its states could show the
// same updatedAt.
// Found by: an outside tester (issue #30), following the feed while batches and PATCHes changed the same contacts:
// version 3 of a contact came before version 2, both with the same updatedAt, and a copy kept the older state.
// How it showed: an event's position was its transaction's id, handed out when the transaction first writes. A
// transaction that had written something else first, and changed the contact after another transaction (with a
// later id) had changed it and committed, recorded its event before the other's. `updated_at = GREATEST(now(),
// updated_at)` gave the later change the other's instant.
// Fix: first, the contacts trigger refused such a change (40001) and rubrica ran the transaction again. Since
// decision 0009, a transaction takes its position once it is found committed, after every position given, in the
// order of its last event: a change that waited for another's commit follows it by construction, and is no longer
// refused. updatedAt moves by a millisecond at least on each change. What a refusal (40001, 40P01) still gets,
// from a deadlock or a serialization failure: the statement or transaction runs again.
import pg from 'pg'
import t from 'tap'
import type { Query } from '../../src/db/database.ts'
import { build, createTenantWithKey, request } from '../helper.ts'
import { feed } from '../privacy/support.ts'

const LIST = '/api/v1/contacts'

/** A refusal as node-postgres throws it for a serialization failure (40001). */
const changedFirst = () => Object.assign(new Error('could not serialize access'), { code: '40001' })

t.test('quick changes of a contact show updatedAt in order, each different', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const { key } = await createTenantWithKey(app)
  const position = (await request(app, key, { method: 'GET', url: '/api/v1/events?after=now' })).json().next
  const created = (
    await request(app, key, { method: 'POST', url: LIST, payload: { email: 'svelta@example.it' } })
  ).json()
  const answers = [created.updatedAt]
  for (const firstName of ['Uno', 'Due', 'Tre', 'Quattro']) {
    const patched = await request(app, key, { method: 'PATCH', url: `${LIST}/${created.id}`, payload: { firstName } })
    answers.push(patched.json().updatedAt)
  }
  const batch = await request(app, key, {
    method: 'POST',
    url: `${LIST}/batch`,
    payload: { contacts: [{ email: 'svelta@example.it', firstName: 'Cinque' }] },
  })
  answers.push(batch.json().results[0].contact.updatedAt)
  t.same([...answers].sort(), answers, 'each answer later than the one before')
  t.equal(new Set(answers).size, answers.length, `no two alike: ${answers.join(', ')}`)
  const updates = (await feed(app, key, position)).data.map((event) => event.data.updatedAt)
  t.same(updates, answers, 'the feed shows them in the same order')
})

t.test('a PATCH, a batch and an erasure refused with 40001 run again', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const { key } = await createTenantWithKey(app, {
    role: 'admin',
    scopes: ['contacts:read', 'contacts:write', 'contacts:erase'],
  })
  const created = (
    await request(app, key, { method: 'POST', url: LIST, payload: { email: 'riprova@example.it' } })
  ).json()
  // The first statement of each, refused once as the trigger would.
  let refusals = 0
  const query = app.db.query.bind(app.db)
  app.db.query = (async (name: string, sql: string, params: unknown[]) => {
    if (refusals > 0 && /^\s*UPDATE contacts/.test(sql)) {
      refusals--
      throw changedFirst()
    }
    return query(name, sql, params)
  }) as typeof app.db.query
  refusals = 1
  const patched = await request(app, key, {
    method: 'PATCH',
    url: `${LIST}/${created.id}`,
    payload: { firstName: 'Ri' },
  })
  t.equal(patched.statusCode, 200, patched.body)
  t.equal(refusals, 0, 'the PATCH was refused once')

  const transaction = app.db.transaction.bind(app.db)
  app.db.transaction = (async <T>(work: (query: Query) => Promise<T>) => {
    if (refusals > 0) {
      refusals--
      throw changedFirst()
    }
    return transaction(work)
  }) as typeof app.db.transaction
  refusals = 1
  const batch = await request(app, key, {
    method: 'POST',
    url: `${LIST}/batch`,
    payload: { contacts: [{ email: 'riprova@example.it', lastName: 'Lotto' }] },
  })
  t.equal(batch.statusCode, 200, batch.body)
  t.equal(batch.json().updated, 1)
  refusals = 1
  const erased = await request(app, key, { method: 'DELETE', url: `${LIST}/${created.id}` })
  t.equal(erased.statusCode, 204, erased.body)
  t.equal(refusals, 0, 'the erasure was refused once')

  refusals = 5
  const stuck = await request(app, key, {
    method: 'POST',
    url: `${LIST}/batch`,
    payload: { contacts: [{ email: 'sempre@example.it' }] },
  })
  t.equal(stuck.statusCode, 503, 'refused every time: 503, to be sent again')
})

t.test('a transaction that began writing first and changes a contact after another did follows it', async (t) => {
  const { app, db } = await build(t, { RATE_LIMIT_MAX: '100000' })
  if (!db.url) {
    t.comment('the embedded database runs one transaction at a time: nothing can come between')
    return
  }
  const { key, tenantId } = await createTenantWithKey(app)
  const post = (email: string) => request(app, key, { method: 'POST', url: LIST, payload: { email } })
  const x = (await post('ics@example.it')).json()
  const y = (await post('ipsilon@example.it')).json()
  const position = (await request(app, key, { method: 'GET', url: '/api/v1/events?after=now' })).json().next

  const early = new pg.Client({ connectionString: db.url })
  await early.connect()
  t.teardown(() => early.end())
  const rename = (id: string, firstName: string) =>
    early.query('UPDATE contacts SET first_name = $3 WHERE tenant_id = $1 AND id = $2', [tenantId, id, firstName])
  // The early transaction writes another contact first, then a PATCH changes X and commits, then the early one
  // changes X too, and commits last.
  await early.query('BEGIN')
  await rename(y.id, 'Prima')
  const patched = await request(app, key, { method: 'PATCH', url: `${LIST}/${x.id}`, payload: { firstName: 'Patch' } })
  t.equal(patched.statusCode, 200)
  const between = (await feed(app, key, position)).data
  t.same(
    between.map((event) => event.data.firstName),
    ['Patch'],
    'the feed shows the PATCH, not the early transaction still open',
  )
  await rename(x.id, 'Tardi')
  await early.query('COMMIT')

  const current = (await request(app, key, { method: 'GET', url: `${LIST}/${x.id}` })).json()
  const events = (await feed(app, key, position)).data
  const ofX = events.filter((event) => event.data.id === x.id)
  t.same(
    ofX.map((event) => event.data.firstName),
    ['Patch', 'Tardi'],
    "X's events in the order of its changes",
  )
  t.same(ofX.at(-1)?.data, current, 'the last event of X is X as it is')
  t.same(
    events.map((event) => event.data.firstName),
    ['Patch', 'Prima', 'Tardi'],
    'the early transaction comes after the position already served, whole',
  )
})
