// A selective search reads its matches from an index, not the tenant's contacts one by one: the plans of the
// statements the search sends, on a tenant beside another with the same tag names and words (each index key beside
// its tenant: a bitmap holds one tenant's matches). On PGlite, PostgreSQL and Citus (where the worker plans them).
// Tenants of 20,000 contacts: in smaller tables, reading a tenant's contacts costs less than a GIN index's entries,
// as PostgreSQL rightly finds. The figures at scale are docs/performance.md's.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import type { FieldType } from '../../src/contacts/custom-fields/model.ts'
import type { Filter } from '../../src/contacts/search/model.ts'
import {
  countStatement,
  ledByTags,
  ledByWords,
  pageStatement,
  type SearchSpec,
  tagsPageStatement,
  WORDS_SCANNED,
  wordsPageStatement,
  wordsReadAgainStatement,
} from '../../src/contacts/search/sql.ts'
import { citusNodes } from '../database.ts'
import { build, createTenantWithKey } from '../helper.ts'
import { planNodes, planUnder } from '../plans.ts'

const CONTACTS = 20000

/**
 * The tenant's contacts, written by SQL three days ago: every 3rd tagged `comune`, those of `rare` tagged `raro`;
 * of the tenant's own fields, every contact a `livello` and `interessi` of common values, those of `rare` values
 * of their own, `segnato` and `grado`.
 */
async function insert(app: FastifyInstance, tenantId: string, rare: (i: number) => boolean) {
  await app.db.query(
    '',
    `INSERT INTO custom_fields (tenant_id, name, type, options) VALUES ($1, 'livello', 'enum', '{bronzo,oro,platino,diamante}'),
       ($1, 'segnato', 'boolean', NULL), ($1, 'interessi', 'multiEnum', '{vino,vela}'),
       ($1, 'grado', 'enum', '{alto,basso}')`,
    [tenantId],
  )
  await app.db.query(
    '',
    `INSERT INTO contacts (id, tenant_id, created_at, updated_at, email, first_name, last_name, phone, stage, tags, fields)
     SELECT gen_random_uuid(), $1, now() - interval '3 days' + i * interval '1 ms', now() - interval '3 days',
       'persona.' || i || '@example.it',
       CASE WHEN i % 10000 = 7 THEN 'Nicolò' ELSE 'Nome' || (i % 50) END, 'Cognome' || (i % 40),
       '+39 02 ' || (1000000 + i), (ARRAY['lead','prospect','customer'])[1 + i % 3]::stage,
       ARRAY_REMOVE(ARRAY[CASE WHEN i % 3 = 0 THEN 'comune' END, CASE WHEN i % 7 = 0 THEN 'altro' END,
         CASE WHEN i = ANY($2::int[]) THEN 'raro' END, CASE WHEN i % 11 = 0 THEN 'terzo' END], NULL),
       CASE WHEN i = ANY($2::int[]) THEN jsonb_build_object('livello', CASE WHEN i % 3 = 0 THEN 'platino' ELSE 'diamante' END,
           'segnato', true, 'interessi', '["vela"]'::jsonb, 'grado', 'alto')
         ELSE jsonb_build_object('livello', (ARRAY['bronzo', 'oro'])[1 + i % 2], 'interessi', '["vino"]'::jsonb) END
     FROM generate_series(1, ${CONTACTS}) i`,
    [tenantId, Array.from({ length: CONTACTS }, (_, i) => i + 1).filter(rare)],
  )
}

/** Rows each scan of contacts read (kept and filtered out), over every loop, a worker's included on Citus. */
function contactsRead(plan: unknown): number {
  return planNodes(plan)
    .filter((node) => String(node['Relation Name'] ?? '').startsWith('contacts'))
    .reduce(
      (sum, node) =>
        sum +
        (Number(node['Actual Rows'] ?? 0) + Number(node['Rows Removed by Filter'] ?? 0)) *
          Number(node['Actual Loops'] ?? 1),
      0,
    )
}

const indexesOf = (plan: unknown) =>
  new Set(
    planNodes(plan).flatMap((node) =>
      typeof node['Index Name'] === 'string' ? [node['Index Name'].replace(/_\d+$/, '')] : [],
    ),
  )

t.test('selective searches read their matches through an index, beside another tenant of the same tags', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000', SEARCH_COUNT_TIMEOUT_MS: '10' })
  const tags = ['comune', 'altro', 'raro', 'terzo']
  const tenant = await createTenantWithKey(app, { tags })
  const other = await createTenantWithKey(app, { tags })
  await insert(app, tenant.tenantId, (i) => i % 4000 === 5)
  await insert(app, other.tenantId, (i) => i % 4000 === 6)
  // The last hour's changes: a few contacts changed now, the rest three days ago.
  await app.db.query(
    '',
    `UPDATE contacts SET stage = 'ex_customer', updated_at = now() WHERE tenant_id = $1
       AND id IN (SELECT id FROM contacts WHERE tenant_id = $1 ORDER BY created_at LIMIT 4)`,
    [tenant.tenantId],
  )
  // VACUUM too, as autovacuum does after inserts: without the visibility map, reading contact_words in order, each row
  // a heap page, may cost more than reading and sorting a prefix's words (the embedded database has no autovacuum).
  if (citusNodes().length === 0) await app.db.query('', 'VACUUM ANALYZE contacts, contact_words', [])
  else {
    for (const table of ['contacts', 'contact_words']) {
      await app.db.query('', `SELECT run_command_on_shards('${table}', 'VACUUM ANALYZE %s')`, [])
    }
  }

  const hourAgo = new Date(Date.now() - 3_600_000).toISOString()
  const group = (...filters: Filter[]): SearchSpec => ({
    groups: [filters],
    includeArchived: false,
    sort: '-createdAt',
  })
  const own = (name: string, type: FieldType, op: string, value?: unknown, options?: string[]): Filter => ({
    field: `fields.${name}`,
    op,
    ...(value !== undefined && { value }),
    definition: { name, type, label: null, createdAt: hourAgo, updatedAt: hourAgo, ...(options && { options }) },
  })
  const cases: { what: string; spec: SearchSpec; index: string; matches: number }[] = [
    {
      what: 'a rare value of a field of the tenant’s own',
      spec: group(own('livello', 'enum', 'eq', 'platino')),
      index: 'contacts_fields_idx',
      matches: 2,
    },
    {
      what: 'rare values of a field of the tenant’s own (in)',
      spec: group(own('livello', 'enum', 'in', ['platino', 'diamante'])),
      index: 'contacts_fields_idx',
      matches: 5,
    },
    {
      what: 'a field of the tenant’s own that few contacts have',
      spec: group(own('segnato', 'boolean', 'exists')),
      index: 'contacts_fields_idx',
      matches: 5,
    },
    {
      what: 'a field of the tenant’s own that few contacts have, an enum (exists: its options ORed)',
      spec: group(own('grado', 'enum', 'exists', undefined, ['alto', 'basso'])),
      index: 'contacts_fields_idx',
      matches: 5,
    },
    {
      what: 'a rare option of a multiEnum (hasAny)',
      spec: group(own('interessi', 'multiEnum', 'hasAny', ['vela'])),
      index: 'contacts_fields_idx',
      matches: 5,
    },
    {
      what: 'a rare option of a multiEnum and a stage (hasAll)',
      spec: group(own('interessi', 'multiEnum', 'hasAll', ['vela']), { field: 'stage', op: 'eq', value: 'customer' }),
      index: 'contacts_fields_idx',
      matches: 2,
    },
    {
      what: 'a rare tag',
      spec: group({ field: 'tags', op: 'hasAll', value: ['raro'] }),
      index: 'contacts_tags_idx',
      matches: 5,
    },
    {
      what: 'three tags and a stage',
      spec: group(
        { field: 'tags', op: 'hasAll', value: ['raro', 'comune', 'terzo'] },
        { field: 'stage', op: 'eq', value: 'lead' },
      ),
      index: 'contacts_tags_idx',
      matches: 1,
    },
    {
      what: 'a name prefix',
      spec: group({ field: 'firstName', op: 'prefix', value: 'nicol' }),
      index: 'contacts_search_words_idx',
      matches: 2,
    },
    { what: 'words', spec: { ...group(), query: 'nicolo persona' }, index: 'contacts_search_words_idx', matches: 2 },
    {
      what: 'a phone',
      spec: group({ field: 'phone', op: 'eq', value: '+39 02 1000707' }),
      index: 'contacts_search_words_idx',
      matches: 1,
    },
    {
      what: 'the last hour’s changes',
      spec: { ...group({ field: 'updatedAt', op: 'gte', value: hourAgo }), sort: '-updatedAt' },
      index: 'contacts_tenant_id_updated_at_created_at_idx',
      matches: 4,
    },
  ]
  for (const { what, spec, index, matches } of cases) {
    const count = countStatement(spec)
    const [found] = await app.db.query<{ total: number }>(count.name, count.sql, [tenant.tenantId, ...count.params])
    t.equal(found?.total, matches, `${what}: ${matches} contacts`)
    for (const statement of [pageStatement(spec, 51), countStatement(spec)]) {
      const plan = await planUnder(app, [], statement.sql, [tenant.tenantId, ...statement.params])
      const read = contactsRead(plan)
      t.ok(indexesOf(plan).has(index), `${what}: through ${index} (${[...indexesOf(plan)].join(', ')})`)
      t.ok(read <= 60, `${what}: ${read} rows of contacts read, not the tenant's ${CONTACTS}`)
    }
  }

  // A search of one word alone reads its matches in createdAt's order from contact_words: a page of a frequent
  // word (nome1: Nome1 and Nome10 to Nome19, 11 contacts in 50) stops at the page's last; a rare one reads its two.
  // A word rare among those of its first three characters (examplez, where every contact has example) reads no more
  // than WORDS_SCANNED words there and no contact; its page is then read as PostgreSQL plans it (the repository).
  const wordsRead = (plan: unknown) =>
    planNodes(plan)
      .filter((node) => node['Relation Name'] === 'contact_words')
      .reduce((sum, node) => sum + Number(node['Actual Rows'] ?? 0) * Number(node['Actual Loops'] ?? 1), 0)
  for (const [word, matches, capped] of [
    ['nome1', 4400, true],
    ['nicolo', 2, false],
    ['examplez', 0, true],
  ] as const) {
    for (const sort of ['-createdAt', 'createdAt'] as const) {
      const spec: SearchSpec = { groups: [], query: word, includeArchived: false, sort }
      t.ok(ledByWords(spec), `${word}: led by contact_words`)
      const count = countStatement(spec)
      const [found] = await app.db.query<{ total: number }>(count.name, count.sql, [tenant.tenantId, ...count.params])
      t.equal(found?.total, matches, `${word}: ${matches} contacts`)
      const page = wordsPageStatement(spec, 51)
      const plan = await planUnder(app, [], page.sql, [tenant.tenantId, ...page.params])
      t.ok(indexesOf(plan).has('contact_words_pkey'), `${word}, ${sort}: through contact_words`)
      t.ok(contactsRead(plan) <= Math.min(matches, 51), `${word}, ${sort}: ${contactsRead(plan)} rows of contacts read`)
      t.ok(wordsRead(plan) <= WORDS_SCANNED, `${word}, ${sort}: ${wordsRead(plan)} words read`)
      // A short page is read again only where the words under its first three characters were not all read.
      const again = wordsReadAgainStatement(spec)
      const [check] = await app.db.query<{ readAgain: boolean }>(again.name, again.sql, [
        tenant.tenantId,
        ...again.params,
      ])
      t.equal(check?.readAgain, capped, `${word}, ${sort}: a short page read again: ${capped}`)
    }
  }

  // A word sparse among those of its first three characters (nome7: 2% of the nom… words, fewer than a page of 51 in
  // WORDS_SCANNED) still walks every match once: its short pages are read again as PostgreSQL plans them.
  const walked: string[] = []
  let cursor: string | undefined
  do {
    const page = await app.contactSearch.search(tenant.tenantId, {
      query: 'nome7',
      limit: 100,
      ...(cursor && { cursor }),
    })
    walked.push(...page.data.map((contact) => contact.firstName ?? ''))
    cursor = page.next ?? undefined
  } while (cursor !== undefined)
  t.equal(walked.length, 398, 'nome7: every match walked')
  t.ok(
    walked.every((name) => name === 'Nome7'),
    'nome7: only matches',
  )

  // Tags and a stage (comune, altro, lead: every 21st contact, 952) walk the stage's contacts in order in its index
  // alone, by their tags' signature, and read from the table only the page's candidates.
  const tagsAndStage = (sort: SearchSpec['sort']): SearchSpec => ({
    ...group({ field: 'tags', op: 'hasAll', value: ['comune', 'altro'] }, { field: 'stage', op: 'eq', value: 'lead' }),
    sort,
  })
  t.ok(ledByTags(tagsAndStage('-createdAt')), 'tags and a stage: led by the stage’s index')
  const led = tagsPageStatement(tagsAndStage('-createdAt'), 51)
  const ledPlan = await planUnder(app, [], led.sql, [tenant.tenantId, ...led.params])
  const indexOnly = planNodes(ledPlan).filter((node) => node['Node Type'] === 'Index Only Scan')
  t.ok(
    indexOnly.some((node) => String(node['Index Name']).startsWith('contacts_stage_signature_idx')),
    'tags and a stage: an index-only scan of contacts_stage_signature_idx',
  )
  const fromTable = contactsRead(ledPlan) - contactsRead({ Plan: { Plans: indexOnly } })
  t.ok(fromTable <= 2 * 51, `tags and a stage: ${fromTable} contacts read from the table`)
  for (const sort of ['-createdAt', 'createdAt'] as const) {
    const seen: string[] = []
    let next: string | undefined
    do {
      const page = await app.contactSearch.search(tenant.tenantId, {
        filterGroups: [{ filters: tagsAndStage(sort).groups[0] as Filter[] }],
        sort,
        limit: 200,
        ...(next && { cursor: next }),
      })
      t.ok(
        page.data.every((c) => c.stage === 'lead' && c.tags.includes('comune') && c.tags.includes('altro')),
        `tags and a stage, ${sort}: only matches`,
      )
      seen.push(...page.data.map((c) => c.createdAt))
      next = page.next ?? undefined
    } while (next !== undefined)
    t.equal(seen.length, 952, `tags and a stage, ${sort}: every match walked`)
    t.equal(new Set(seen).size, 952, `tags and a stage, ${sort}: each once`)
    const ordered = [...seen].sort()
    t.same(seen, sort === 'createdAt' ? ordered : ordered.reverse(), `tags and a stage, ${sort}: in order`)
  }

  // A count that reads every contact of both tenants (no index serves a prefix of `source`) takes longer than 10 ms
  // on a server: the page comes back without its total. The embedded database has no statement timeout.
  const slow = await app.contactSearch.count(tenant.tenantId, group({ field: 'source', op: 'prefix', value: 'zzz' }))
  if (app.db.kind === 'postgres') t.equal(slow, undefined, 'a count past SEARCH_COUNT_TIMEOUT_MS is left out')
  else t.equal(slow, 0, 'the embedded database counts to the end')
})
