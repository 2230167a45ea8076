// Regressions: a PATCH that waited behind a batch adding a tag answered the tags from before the batch under the
// ETag of its own write, while GET answered the new tags with that same ETag: a client keeping the PATCH's answer
// then got 304 on the wrong tags.
// Found by: issue #29 (2 of 213 PATCHes racing batches on PostgreSQL; every time when the batch's tag write is
// held open, as here).
// How it showed: in READ COMMITTED the PATCH's UPDATE, having waited for the batch's lock on the row, writes over
// the batch's version of the row, but the tags subquery of its RETURNING reads the snapshot taken before the
// wait, without the batch's link.
// Fix: a contact's tags are a column of its row (issue #30): the UPDATE that waited writes over the batch's version
// of the row and answers the row it wrote, tags included. (First fixed by reading the contact again when another
// writer came in between.)
// Without the fix, on PostgreSQL, the first test's PATCH answers "tags": [] with the ETag GET answers ["vip"] with.
// Found with it, measuring PATCH answers against the events of their versions: a batch whose transaction began
// before the contact's last write added a tag without moving the version (its updated_at, GREATEST(now(),
// updated_at), left the row identical, and the version moves only when the row changes): the same ETag before and
// after, with other tags. Fix: the tags are in the row, so adding one changes the row (third test).
// On PGlite, which has one connection, the PATCH's statement waits for the whole batch transaction and starts after
// it: there is no race to lose, and these tests check on PGlite only that the same answers hold without one.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { citusNodes } from '../database.ts'
import { build, createTenantWithKey, request } from '../helper.ts'
import { until } from '../wait.ts'

const LIST = '/api/v1/contacts'

/**
 * Runs the batch `items` in a transaction held open until `during` resolves: `during` gets a promise that
 * resolves once a PATCH of the app reached the repository and, on PostgreSQL, its statement waits for a lock.
 */
async function batchHeldOpen(
  app: FastifyInstance,
  tenantId: string,
  items: unknown[],
  during: (patchWaits: Promise<void>) => Promise<void>,
): Promise<void> {
  let reached!: () => void
  const patchReached = new Promise<void>((resolve) => {
    reached = resolve
  })
  const update = app.contacts.update.bind(app.contacts)
  app.contacts.update = (...args) => {
    reached()
    return update(...args)
  }
  let written!: () => void
  const batchWritten = new Promise<void>((resolve) => {
    written = resolve
  })
  const patchWaits = (async () => {
    await batchWritten
    await patchReached
    // PGlite queues the PATCH's statement behind the transaction: nothing to watch there, and no other statement
    // could run to watch it.
    if (app.db.kind !== 'postgres') return
    // On Citus the PATCH waits on the node of the tenant's rows: citus_stat_activity sees every node.
    const activity = citusNodes().length > 0 ? 'citus_stat_activity' : 'pg_stat_activity'
    await until(async () => {
      const [row] = await app.db.query<{ waiting: number }>(
        'test_lock_waits',
        `SELECT count(*)::int AS waiting FROM ${activity} WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        [],
      )
      return (row?.waiting ?? 0) > 0
    }, 'the PATCH waiting for the row the batch locked')
  })()
  const held = app.db.transaction(async (query) => {
    await app.batches.upsert(tenantId, items, query)
    written()
    await during(patchWaits)
  })
  await held
  app.contacts.update = update
}

t.test('a PATCH that waited behind a batch adding a tag answers the tags of its ETag', async (t) => {
  const { app } = await build(t)
  const { key, tenantId } = await createTenantWithKey(app, { tags: ['vip'] })
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'anna@example.it' } })
  const id = created.json().id as string

  let patched: Promise<Awaited<ReturnType<typeof request>>> | undefined
  await batchHeldOpen(app, tenantId, [{ email: 'anna@example.it', tags: ['vip'] }], async (patchWaits) => {
    patched = request(app, key, { method: 'PATCH', url: `${LIST}/${id}`, payload: { firstName: 'Anna' } })
    await patchWaits
  })
  const patch = await (patched as Promise<Awaited<ReturnType<typeof request>>>)
  t.equal(patch.statusCode, 200)
  t.equal(patch.headers.etag, '"v3"', 'the PATCH wrote over the batch: v1, the batch v2, the PATCH v3')
  t.same(patch.json().tags, ['vip'], 'the PATCH answers the tag the batch added before its write')
  t.equal(patch.json().firstName, 'Anna')

  const get = await request(app, key, { method: 'GET', url: `${LIST}/${id}` })
  t.equal(get.headers.etag, patch.headers.etag, 'nothing wrote since')
  t.same(patch.json(), get.json(), 'one ETag, one representation')
  const cached = await request(app, key, {
    method: 'GET',
    url: `${LIST}/${id}`,
    headers: { 'if-none-match': String(patch.headers.etag) },
  })
  t.equal(cached.statusCode, 304, 'the client that kept the PATCH answer keeps the right tags')
})

t.test('a batch adding a tag moves the version even when its transaction began before the last write', async (t) => {
  const { app } = await build(t)
  const { key, tenantId } = await createTenantWithKey(app, { tags: ['vip'] })
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'carla@example.it' } })
  const id = created.json().id as string
  const patch = () => request(app, key, { method: 'PATCH', url: `${LIST}/${id}`, payload: { firstName: 'Carla' } })

  // The batch's transaction starts, and with it its now(); on PostgreSQL a PATCH commits after that instant and
  // before the batch writes, so that the contact's updatedAt is later than the batch's now(). (PGlite runs one
  // transaction at a time: there the PATCH comes first.)
  let patched: Awaited<ReturnType<typeof request>> | undefined
  if (app.db.kind !== 'postgres') patched = await patch()
  await app.db.transaction(async (query) => {
    await query('test_begin', 'SELECT now()', [])
    if (app.db.kind === 'postgres') patched = await patch()
    await app.batches.upsert(tenantId, [{ email: 'carla@example.it', tags: ['vip'] }], query)
  })
  const get = await request(app, key, { method: 'GET', url: `${LIST}/${id}` })
  t.same(get.json().tags, ['vip'])
  t.not(get.headers.etag, patched?.headers.etag, 'the tag the batch added moved the ETag')
  const cached = await request(app, key, {
    method: 'GET',
    url: `${LIST}/${id}`,
    headers: { 'if-none-match': String(patched?.headers.etag) },
  })
  t.equal(cached.statusCode, 200, 'a client holding the PATCH answer gets the new tags, not a 304')
})
