// Concurrency properties: simultaneous creates of one email in varied letter case (one 201, every other a 409
// naming the winner), simultaneous full PATCHes of one contact (last writer wins whole: no mixture of fields),
// and a list walk made while contacts are being created (every contact that existed before is returned exactly
// once). On PostgreSQL the requests really run in parallel (pool of 4); on PGlite they interleave.
// FUZZ_SEED and FUZZ_RUNS set the seed and the number of cases (see docs/reliability.md).
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import t from 'tap'
import { build, createTenantWithKey } from '../helper.ts'
import { commentRunParameters, holds, runs, Stats } from './run.ts'
import type { Contact, ContactPage, ErrorBody, RequestOptions } from './support.ts'
import { checkedRequest, EMAIL_STATUSES, fail, LIST, STAGES } from './support.ts'

t.test('races', async (t) => {
  commentRunParameters(t)
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000000000' })
  const stats = new Stats()
  const { key, tenantId } = await createTenantWithKey(app, { name: 'Gara', role: 'admin' })
  let run = 0

  const send = (name: string, options: RequestOptions, as = key) => checkedRequest(app, stats, name, as, options)

  await t.test('concurrent creates of one email in varied case: one 201, the rest 409 naming it', async (t) => {
    const property = fc.asyncProperty(
      fc
        .integer({ min: 2, max: 24 })
        .chain((n) =>
          fc.tuple(
            fc.constantFrom('ann@x.io', 'bob.rossi@example.it', 'c+tag@posta.co.uk'),
            fc.array(fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }), { minLength: n, maxLength: n }),
          ),
        ),
      async ([base, masks]) => {
        const email = `r${++run}.${base}`
        const variants = masks.map((mask) =>
          [...email].map((c, i) => (mask[i % mask.length] ? c.toUpperCase() : c.toLowerCase())).join(''),
        )
        const results = await Promise.all(
          variants.map((variant, i) =>
            send('POST /contacts', { method: 'POST', url: LIST, payload: { email: variant, firstName: `N${i}` } }),
          ),
        )
        const created = results.filter((r) => r.res.statusCode === 201)
        const conflicts = results.filter((r) => r.res.statusCode === 409)
        if (created.length !== 1 || conflicts.length !== variants.length - 1) {
          fail(`${variants.length} creates of ${email}: ${results.map((r) => r.res.statusCode).join(',')}`)
        }
        const winner = created[0]?.body as Contact
        if (!variants.includes(winner.email ?? '')) fail(`winner email ${winner.email} was not sent`)
        for (const conflict of conflicts) {
          const existing = (conflict.body as ErrorBody).error.existing
          if (!isDeepStrictEqual(existing, { id: winner.id, status: 'active' })) {
            fail(`${conflict.where}: conflict names ${JSON.stringify(existing)}, the winner is ${winner.id}`)
          }
        }
        const stored = await app.db.prisma.contact.findMany({ where: { tenantId, emailKey: email.toLowerCase() } })
        if (stored.length !== 1 || stored[0]?.id !== winner.id) fail(`${stored.length} rows stored for ${email}`)
      },
    )
    await holds(t, 'concurrent creates', property, runs(0.1, 3))
  })

  await t.test('concurrent full PATCHes: every one 200, the final state is exactly one of them', async (t) => {
    const fullPatch = fc.record({
      firstName: fc.constantFrom('Anna', 'Bruno', 'Zoë'),
      lastName: fc.option(fc.constantFrom('Rossi', 'Bianchi', '李'), { nil: null }),
      emailStatus: fc.constantFrom(...EMAIL_STATUSES),
      stage: fc.constantFrom(...STAGES),
      consentType: fc.constantFrom('contract', 'consent', 'altro'),
    })
    const property = fc.asyncProperty(fc.array(fullPatch, { minLength: 2, maxLength: 12 }), async (generated) => {
      // Each patch is told apart by its firstName.
      const patches = generated.map((p, i) => ({ ...p, firstName: `${p.firstName}#${i}` }))
      const made = await send('POST /contacts', {
        method: 'POST',
        url: LIST,
        payload: { email: `p${++run}@x.io`, firstName: 'Prima', lastName: 'Ancora' },
      })
      const id = (made.body as Contact).id
      const results = await Promise.all(
        patches.map((payload) => send('PATCH /contacts/:id', { method: 'PATCH', url: `${LIST}/${id}`, payload })),
      )
      results.forEach((r, i) => {
        if (r.res.statusCode !== 200) fail(`${r.where}: ${r.res.statusCode} ${r.res.body}`)
        const shown = r.body as Contact
        for (const [field, value] of Object.entries(patches[i] ?? {})) {
          if (shown[field as keyof Contact] !== value)
            fail(`${r.where}: the response mixes in another patch: ${r.res.body}`)
        }
      })
      const final = (await send('GET /contacts/:id', { method: 'GET', url: `${LIST}/${id}` })).body as Contact
      const winner = patches.findIndex((p) => p.firstName === final.firstName)
      const patch = patches[winner] ?? fail(`final firstName ${final.firstName} is none of the patches'`)
      for (const [field, value] of Object.entries(patch)) {
        if (final[field as keyof Contact] !== value) {
          fail(`final state mixes patches: ${field} is ${final[field as keyof Contact]}, patch #${winner} set ${value}`)
        }
      }
      if (!isDeepStrictEqual(final, results[winner]?.body)) {
        fail(`final state ${JSON.stringify(final)} is not what the winning PATCH answered`)
      }
    })
    await holds(t, 'concurrent patches', property, runs(0.1, 3))
  })

  await t.test('a walk made while contacts are created returns every earlier contact exactly once', async (t) => {
    const property = fc.asyncProperty(
      fc.record({
        before: fc.integer({ min: 3, max: 40 }),
        during: fc.integer({ min: 1, max: 30 }),
        limit: fc.integer({ min: 1, max: 10 }),
        sameInstant: fc.boolean(),
        viaApi: fc.integer({ min: 0, max: 5 }),
      }),
      async ({ before, during, limit, sameInstant, viaApi }) => {
        const tenant = await createTenantWithKey(app, { name: `Walk ${++run}`, role: 'admin' })
        const instant = new Date('2026-04-01T10:00:00.000Z')
        await app.db.prisma.contact.createMany({
          data: Array.from({ length: before }, (_, i) => ({
            tenantId: tenant.tenantId,
            email: `pre${i}@x.io`,
            createdAt: sameInstant ? instant : new Date(instant.getTime() + i * 7),
          })),
        })
        for (let i = 0; i < viaApi; i++) {
          await send('POST /contacts', { method: 'POST', url: LIST, payload: { email: `api${i}@x.io` } }, tenant.key)
        }
        const existing = new Set(
          (await app.db.prisma.contact.findMany({ where: { tenantId: tenant.tenantId } })).map((c) => c.id),
        )
        const walk = async () => {
          const seen: string[] = []
          let cursor: string | null = null
          for (let page = 0; page < 1000; page++) {
            const url = `${LIST}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
            const r = await send('GET /contacts', { method: 'GET', url }, tenant.key)
            if (r.res.statusCode !== 200) fail(`${r.where}: ${r.res.statusCode} ${r.res.body}`)
            const body = r.body as ContactPage
            seen.push(...body.data.map((c) => c.id))
            cursor = body.next
            if (cursor === null) return seen
          }
          return fail('the walk does not end')
        }
        const [seen, ...created] = await Promise.all([
          walk(),
          ...Array.from({ length: during }, (_, i) =>
            send('POST /contacts', { method: 'POST', url: LIST, payload: { email: `new${i}@x.io` } }, tenant.key),
          ),
        ])
        const fresh = new Set(
          created.map((r) => {
            if (r.res.statusCode !== 201) fail(`${r.where}: ${r.res.statusCode} ${r.res.body}`)
            return (r.body as Contact).id
          }),
        )
        if (new Set(seen).size !== seen.length) fail(`the walk repeated contacts: ${seen.join(',')}`)
        const missing = [...existing].filter((id) => !seen.includes(id))
        if (missing.length > 0) fail(`the walk lost ${missing.length} of ${existing.size} earlier contacts`)
        const strange = seen.filter((id) => !existing.has(id) && !fresh.has(id))
        if (strange.length > 0) fail(`the walk returned contacts that are not the tenant's: ${strange.join(',')}`)
        const after = await walk()
        if (after.length !== existing.size + fresh.size || new Set(after).size !== after.length) {
          fail(`a walk after the burst returned ${after.length}, expected ${existing.size + fresh.size}`)
        }
      },
    )
    await holds(t, 'walk during creates', property, runs(0.05, 2))
  })

  stats.report(t, 'races')
})
