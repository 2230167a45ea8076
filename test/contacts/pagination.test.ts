import t from 'tap'
import { cursorBound } from '../../src/contacts/sql.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const LIST = '/api/v1/contacts'

async function walk(app: Parameters<typeof request>[0], key: string, query: string) {
  const seen: string[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const url: string = `${LIST}?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const res = await request(app, key, { method: 'GET', url })
    if (res.statusCode !== 200) throw new Error(`page ${pages}: ${res.statusCode} ${res.body}`)
    const body = res.json() as { data: { id: string }[]; next: string | null }
    if (body.data.length === 0) throw new Error('empty page')
    seen.push(...body.data.map((c) => c.id))
    cursor = body.next
    pages++
  } while (cursor !== null)
  return { seen, pages }
}

t.test(
  '500 contacts with colliding timestamps, created in bulk and concurrently: none lost, none repeated',
  async (t) => {
    // 250 creates queue for the pool's 4 connections: on a loaded machine the walk's first page may wait for one
    // longer than the 5 s default.
    const { app } = await build(t, { RATE_LIMIT_MAX: '100000', DATABASE_CONNECT_TIMEOUT_MS: '60000' })
    const { key, tenantId } = await createTenantWithKey(app)
    const prisma = app.db.prisma
    const instant = new Date('2026-05-01T12:00:00.000Z')

    // 250 in bulk, all asking for the same millisecond (as a seed or an import would).
    await prisma.contact.createMany({
      data: Array.from({ length: 250 }, (_, i) => ({ tenantId, email: `bulk${i}@x.io`, createdAt: instant })),
    })
    // 250 through the API, concurrently, while a walk is under way.
    const creating = Promise.all(
      Array.from({ length: 250 }, (_, i) =>
        request(app, key, { method: 'POST', url: LIST, payload: { email: `api${i}@x.io` } }),
      ),
    )
    const during = await walk(app, key, 'limit=7')
    const created = await creating
    t.ok(
      created.every((r) => r.statusCode === 201),
      'all created',
    )
    t.equal(new Set(during.seen).size, during.seen.length, 'no repeats in a walk made while creating')

    const rows = await prisma.contact.findMany({ where: { tenantId }, select: { id: true, createdAt: true } })
    t.equal(rows.length, 500)
    // Prisma reads milliseconds; createdAt is unique to the microsecond.
    const [stored] = await prisma.$queryRawUnsafe<{ distinct: number }[]>(
      `SELECT count(DISTINCT created_at)::int AS distinct FROM contacts WHERE tenant_id = '${tenantId}'::uuid`,
    )
    t.equal(stored?.distinct, 500, 'createdAt unique per tenant')
    // Everything that existed when the walk began was returned.
    const bulkIds = (
      await prisma.contact.findMany({ where: { tenantId, source: 'manual' }, select: { id: true } })
    ).map((r) => r.id)
    const seenDuring = new Set(during.seen)
    t.ok(
      bulkIds.every((id) => seenDuring.has(id)),
      'no contact that existed before the walk was lost',
    )

    const after = await walk(app, key, 'limit=7')
    t.equal(after.seen.length, 500)
    t.equal(new Set(after.seen).size, 500)
    t.same(new Set(after.seen), new Set(rows.map((r) => r.id)))
    t.equal(after.pages, Math.ceil(500 / 7))
  },
)

t.test('walks with filters return exactly the matching contacts', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const prisma = app.db.prisma
  const instant = new Date('2026-05-01T12:00:00.000Z')
  await prisma.contact.createMany({
    data: Array.from({ length: 120 }, (_, i) => ({
      tenantId,
      email: `f${i}@x.io`,
      createdAt: instant,
      stage: i % 3 === 0 ? ('customer' as const) : ('lead' as const),
      emailStatus: i % 4 === 0 ? ('bounced' as const) : ('active' as const),
      archivedAt: i % 5 === 0 ? instant : null,
    })),
  })
  const expected = await prisma.contact.count({
    where: { tenantId, stage: 'customer', emailStatus: 'active', archivedAt: null },
  })
  const { seen } = await walk(app, key, 'limit=4&stage=customer&emailStatus=active')
  t.equal(seen.length, expected)
  t.equal(new Set(seen).size, expected)
  const withArchived = await walk(app, key, 'limit=9&includeArchived=true')
  t.equal(withArchived.seen.length, 120)
})

t.test('a cursor is bounded at the microsecond createdAt is stored with', async (t) => {
  t.equal(cursorBound('2026-05-01T12:00:00.123Z'), '2026-05-01T12:00:00.123000Z')
  t.equal(cursorBound('2026-05-01T12:00:00.123456Z'), '2026-05-01T12:00:00.123456Z')
  t.equal(cursorBound('2026-05-01T12:00:00.1234560Z'), '2026-05-01T12:00:00.123456Z', 'zeros past it change nothing')
  t.equal(cursorBound('2026-05-01T12:00:00.1234561Z'), '2026-05-01T12:00:00.123457Z', 'finer: the next microsecond')
  t.equal(cursorBound('2026-05-01T12:00:00.9999991Z'), '2026-05-01T12:00:01.000000Z')
  t.equal(cursorBound('2026-05-01T14:00:00+02:00'), '2026-05-01T12:00:00.000000Z', 'offsets are read')
  t.equal(cursorBound('2026-05-01 12:00:00.5Z'), '2026-05-01T12:00:00.500000Z')
})
