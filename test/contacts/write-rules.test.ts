// The contacts' triggers own the rules of writing a contact for every writer
// (docs/decisions/0010-one-owner-of-contact-writes.md): SQL written by hand gets them as the API does. Two cases an
// outside tester found: an UPDATE that leaves a row as it was wrote it anyway (a version, an updatedAt and an event
// for nothing), and a row whose id changed lost its event.
import t from 'tap'
import { build, createTenantWithKey } from '../helper.ts'

t.test('SQL by hand: what changes nothing writes nothing, and every change has its event', async (t) => {
  const { app } = await build(t)
  const { tenantId } = await createTenantWithKey(app, { tags: ['vip', 'news'] })
  const sql = <Row>(text: string, ...params: unknown[]) => app.db.prisma.$queryRawUnsafe<Row[]>(text, ...params)
  const tagged = '00000000-0000-4000-8000-0000000000a1'
  const plain = '00000000-0000-4000-8000-0000000000b1'
  const moved = '00000000-0000-4000-8000-0000000000b2'
  await sql(
    `INSERT INTO contacts (id, tenant_id, email, tags) VALUES ($1::uuid, $3::uuid, 'a@example.it', '{vip,news}'),
      ($2::uuid, $3::uuid, 'b@example.it', '{}')`,
    tagged,
    plain,
    tenantId,
  )
  const state = () =>
    sql<{ id: string; version: number; updated: string; events: number; links: string[] }>(
      `SELECT c.id::text, c.version, c.updated_at::text AS updated,
        (SELECT count(*)::int FROM events e WHERE e.tenant_id = c.tenant_id AND e.contact_id = c.id) AS events,
        ARRAY(SELECT g.name FROM contact_tags l JOIN tags g ON g.tenant_id = l.tenant_id AND g.id = l.tag_id
          WHERE l.tenant_id = c.tenant_id AND l.contact_id = c.id ORDER BY g.name COLLATE "C") AS links
      FROM contacts c WHERE c.tenant_id = $1::uuid ORDER BY c.email`,
      tenantId,
    )
  const before = await state()
  t.same(
    before.map(({ version, events, links }) => ({ version, events, links })),
    [
      { version: 1, events: 1, links: ['news', 'vip'] },
      { version: 1, events: 1, links: [] },
    ],
  )

  const unchanged = await sql<{ id: string }>(
    `UPDATE contacts SET stage = stage, tags = CASE WHEN id = $2::uuid THEN '{vip,news,vip}' ELSE tags END
    WHERE tenant_id = $1::uuid RETURNING id`,
    tenantId,
    tagged,
  )
  t.same(unchanged, [], 'an UPDATE that changes nothing (same stage, same tags in another order) writes no row')
  t.same(await state(), before, 'no version, no updatedAt, no event, the same links')

  await sql(
    "UPDATE contacts SET id = $2::uuid, first_name = 'Spostato' WHERE tenant_id = $1::uuid AND id = $3::uuid",
    tenantId,
    moved,
    plain,
  )
  await sql("UPDATE contacts SET tags = '{news}' WHERE tenant_id = $1::uuid AND id = $2::uuid", tenantId, tagged)
  const after = await state()
  t.same(
    after.map(({ id, version, events, links }) => ({ id, version, events, links })),
    [
      { id: tagged, version: 2, events: 2, links: ['news'] },
      { id: moved, version: 2, events: 1, links: [] },
    ],
    'each change has its event (the moved contact under its new id), and the links follow the tags',
  )
  const [event] = await sql<{ type: string; version: number; name: string }>(
    `SELECT type::text, (contact->>'version')::int AS version, contact->>'first_name' AS name FROM events
    WHERE tenant_id = $1::uuid AND contact_id = $2::uuid`,
    tenantId,
    moved,
  )
  t.same(event, { type: 'contact.updated', version: 2, name: 'Spostato' })
})
