// Figures the docs write that derive from code are checked against it: the webhook retries (the default of
// WEBHOOKS_RETRY_SCHEDULE), the batch import's body limit (BATCH_BODY_LIMIT), the Prisma models listed, the
// windows of the feed and the webhooks. A change of
// the code fails here until the sentences follow it.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ConfigSchema } from '../../src/config/config.ts'
import { BATCH_BODY_LIMIT } from '../../src/contacts/batch/model.ts'
import { CUSTOM_FIELD_LIMITS } from '../../src/contacts/custom-fields/model.ts'
import { CACHE_MS } from '../../src/contacts/custom-fields/registry.ts'
import { CUSTOM_OPERATORS, PRESENCE_BY_VALUES } from '../../src/contacts/custom-fields/search.ts'
import { RECLAIMED_PER_STATEMENT } from '../../src/contacts/custom-fields/sql.ts'
import { SEARCH_PER_TENANT, WAIT_MS } from '../../src/contacts/search/admission.ts'
import { CONTACT_SEARCH_FIELDS, operatorsOf, SEARCH_LIMITS } from '../../src/contacts/search/model.ts'
import { WORDS_SCANNED } from '../../src/contacts/search/sql.ts'
import { BACKGROUND_CONNECTIONS } from '../../src/db/database.ts'
import { ROLLED_BACK_ATTEMPTS } from '../../src/db/deadlock.ts'
import { FIELD_VALUES_BYTES } from '../../src/errors/catalogue.ts'
import { FEED_WINDOW } from '../../src/events/model.ts'
import { CAUGHT_UP_MS, CONCURRENCY, PER_ROUND, WAVES_PER_LEASE } from '../../src/webhooks/deliverer.ts'
import { LOOK_WINDOW } from '../../src/webhooks/sql.ts'

const read = (path: string) => readFileSync(path, 'utf8')

/** Files below `dir`, generated code left out. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (path === join('src', 'generated')) return []
    return statSync(path).isDirectory() ? filesBelow(path) : [path]
  })
}

/** Seconds as the docs write a wait: 5 s, 5 min, 2 h. */
function wait(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${seconds / 60} min`
  return `${seconds / 3600} h`
}

t.test('the retries of a webhook delivery are the default schedule, and span what it adds up to', async (t) => {
  const defaultSchedule = String(ConfigSchema.properties.WEBHOOKS_RETRY_SCHEDULE.default)
  const schedule = defaultSchedule.split(',').map(Number)
  const hours = (schedule.reduce((sum, seconds) => sum + seconds, 0) / 3600).toFixed(1)
  const waits = schedule.map(wait)
  const listed = `${waits.slice(0, -1).join(', ')} and ${waits.at(-1)}`

  const says = (file: string, text: string) =>
    t.ok(read(file).replace(/\s+/g, ' ').includes(text), `${file} says: ${text}`)
  says('README.md', `retried for ${hours} hours (by default)`)
  says('docs/api-events-webhooks.md', `is retried after ${listed} (\`WEBHOOKS_RETRY_SCHEDULE\`), ${hours} hours in all`)
  says('docs/operations.md', `| \`WEBHOOKS_RETRY_SCHEDULE\` | \`${defaultSchedule}\` |`)
})

t.test("every figure of the batch import's body limit is BATCH_BODY_LIMIT's", async (t) => {
  // In MB of 10^6 bytes, to two significant digits: what "about N MB" says.
  const expected = Number((BATCH_BODY_LIMIT / 1e6).toPrecision(2))
  const found: string[] = []
  for (const file of ['README.md', ...filesBelow('docs'), ...filesBelow('src')]) {
    // A paragraph (or a block of code) that speaks of the batch's body limit.
    for (const paragraph of read(file).split(/\n\s*\n/)) {
      if (!/batch/i.test(paragraph) || !/body limit|own limit|BATCH_BODY_LIMIT/i.test(paragraph)) continue
      for (const [figure, megabytes] of paragraph.matchAll(/(\d+(?:\.\d+)?) ?MB\b/g)) {
        found.push(file)
        t.equal(Number(megabytes), expected, `${file}: "${figure}" is BATCH_BODY_LIMIT (${BATCH_BODY_LIMIT} bytes)`)
      }
    }
  }
  t.ok(found.includes('README.md') && found.includes(join('docs', 'api.md')), `figures found in ${found.join(', ')}`)
})

t.test('docs/contributing.md names every Prisma model, and only those', async (t) => {
  const models = [...read('prisma/schema.prisma').matchAll(/^model (\w+) \{/gm)].map((match) => match[1]).sort()
  const page = read('docs/contributing.md').replace(/\s+/g, ' ')
  const sentence = /`prisma\/schema\.prisma` holds the model: (.*?)\. /.exec(page)?.[1] ?? ''
  const named = [...sentence.matchAll(/`(\w+)`/g)].map((match) => match[1]).sort()
  t.ok(models.length > 0, 'the schema has models')
  t.same(named, models)
})

t.test('the windows a follower of some event types reads are FEED_WINDOW and LOOK_WINDOW', async (t) => {
  const text = read('docs/api-events-webhooks.md').replace(/\s+/g, ' ')
  const figure = (n: number) => n.toLocaleString('en-US')
  t.ok(text.includes(`With \`type\`, a page reads ${figure(FEED_WINDOW)} events at most`), 'the feed’s window')
  t.ok(text.includes(`A look reads ${figure(LOOK_WINDOW)} events at most`), 'the webhooks’ window')
})

t.test("docs/api-search.md's limits, operators and count timeout are the search's", async (t) => {
  const page = read('docs/api-search.md').replace(/\s+/g, ' ')
  const limits = SEARCH_LIMITS
  const sentence =
    `**Limits**: ${limits.groups} groups, ${limits.filtersPerGroup} filters in a group, ${limits.filters} filters in ` +
    `all, ${limits.values} values in a list, \`query\` of ${limits.query} characters`
  t.ok(page.includes(sentence), `says: ${sentence}`)
  t.ok(page.includes(`up to ${limits.groups} groups`), 'the groups in the body table')
  t.ok(page.includes(`take 1 to ${limits.values} values`), 'the values of a list')
  // Each field's row of the operators table lists its kind's operators, in the code's order.
  const rows = read('docs/api-search.md')
    .split('\n')
    .filter((line) => /^\| `\w+`/.test(line))
  for (const field of CONTACT_SEARCH_FIELDS) {
    const row = rows.find((line) => line.split('|')[1]?.includes(`\`${field.name}\``))
    const listed = row
      ?.split('|')[3]
      ?.match(/`(\w+)`/g)
      ?.map((op) => op.slice(1, -1))
    t.same(listed, operatorsOf(field.kind), `${field.name}: ${operatorsOf(field.kind).join(', ')}`)
  }
  const timeout = Number(ConfigSchema.properties.SEARCH_COUNT_TIMEOUT_MS.default).toLocaleString('en-US')
  t.ok(page.includes(`\`SEARCH_COUNT_TIMEOUT_MS\` (${timeout} ms by default)`), `the count's timeout, ${timeout} ms`)
  t.ok(page.includes(`an instance runs ${SEARCH_PER_TENANT} of a tenant's at once`), 'the searches at once')
  t.ok(page.includes(`waits for its turn ${WAIT_MS / 1000} s at most`), 'the wait for a turn')
})

t.test("an instance's connections and a round's groups of deliveries are the code's", async (t) => {
  const flat = (file: string) => read(file).replace(/\s+/g, ' ')
  t.ok(
    flat('docs/operations.md').includes(
      `\`DATABASE_POOL_SIZE\` PostgreSQL connections for requests, plus ${BACKGROUND_CONNECTIONS} for webhook deliveries`,
    ),
    'operations.md: the background pool',
  )
  t.ok(
    flat('docs/deployment.md').includes(`instances × (pool size + ${BACKGROUND_CONNECTIONS + 1})`),
    'deployment.md: connections per instance, the notifications one included',
  )
  t.ok(flat('docs/api-privacy.md').includes(`Deliveries go out ${CONCURRENCY} at once`), 'api-privacy.md: the groups')
  t.ok(
    flat('docs/api-events-webhooks.md').includes(`(${PER_ROUND} at most, ${CONCURRENCY} at once)`),
    'api-events-webhooks.md: a round',
  )
  t.ok(
    flat('docs/api-events-webhooks.md').includes(`(but ${CAUGHT_UP_MS} ms at least after a look that delivered all`),
    'api-events-webhooks.md: the pause after a round that caught up',
  )
  const timeout = Number(ConfigSchema.properties.WEBHOOKS_TIMEOUT_MS.default)
  const lease = (WAVES_PER_LEASE * timeout + timeout) / 1000
  t.ok(
    flat('docs/operations.md').includes(
      `a lease of ${WAVES_PER_LEASE} attempts' \`WEBHOOKS_TIMEOUT_MS\` and one more (${lease} s with the default timeout), posts up to ${PER_ROUND} events after its position and its retries due, ${CONCURRENCY} at once`,
    ),
    'operations.md: a round and its lease',
  )
})

t.test("the fault tests' and the batch's figures, as the docs give them", async (t) => {
  const flat = (file: string) => read(file).replace(/\s+/g, ' ')
  const cuts = /^const CUTS = (\d+)$/m.exec(read('test/faults/connections.test.ts'))?.[1]
  t.ok(cuts, 'the connection test states its cuts')
  t.ok(flat('docs/operations.md').includes(`cuts every connection ${cuts} times`), 'operations.md: the cuts')
  t.ok(flat('docs/reliability.md').includes(`database connections ${cuts} times`), 'reliability.md: the cuts')
  t.ok(
    flat('docs/api-batch.md').includes(`runs again, up to ${ROLLED_BACK_ATTEMPTS} times in all`),
    'api-batch.md: the runs of a rolled-back batch',
  )
  const perBatch = Number(/within (\d+) MB × \(`BATCH_CONCURRENCY` \+ 1\)/.exec(flat('docs/operations.md'))?.[1])
  t.ok(perBatch > 0, 'operations.md: the bound per batch')
  t.ok(flat('docs/operations.md').includes(`(1: ${perBatch * 2} MB)`), 'operations.md: BATCH_CONCURRENCY 1')
  t.ok(
    flat('docs/deployment.md').includes(`(batches then add at most ${perBatch * 2} MB`),
    'deployment.md: BATCH_CONCURRENCY 1',
  )
})

t.test('the words a page of one word reads at most are WORDS_SCANNED', async (t) => {
  const page = read('docs/decisions/0008-search-indexes.md').replace(/\s+/g, ' ')
  const figure = WORDS_SCANNED.toLocaleString('en-US')
  t.ok(page.includes(`at most \`WORDS_SCANNED\` (${figure}) of them`), `decision 0008 says ${figure}`)
  t.ok(page.includes(`and at most ${figure} words more`), `decision 0008 says ${figure} again`)
})

t.test('the figures of the tenant’s own fields are the code’s', async (t) => {
  const page = read('docs/api-fields.md').replace(/\s+/g, ' ')
  const says = (text: string) => t.ok(page.includes(text), `docs/api-fields.md says: ${text}`)
  const thousands = (n: number) => n.toLocaleString('en-US')
  says(`\`maxLength\` 1 to ${thousands(CUSTOM_FIELD_LIMITS.text)} (default ${thousands(CUSTOM_FIELD_LIMITS.text)})`)
  says(`\`options\`: 1 to ${CUSTOM_FIELD_LIMITS.options} names, each 1 to ${CUSTOM_FIELD_LIMITS.option} characters`)
  says(`at most ${CUSTOM_FIELD_LIMITS.name} characters`)
  says(`At most ${CUSTOM_FIELD_LIMITS.perTenant} fields per organisation`)
  says(`up to ${CUSTOM_FIELD_LIMITS.label} characters`)
  says(`${RECLAIMED_PER_STATEMENT} contacts a statement`)
  says(`within ${CACHE_MS / 1000} seconds (\`CACHE_MS\`)`)
  says(`at most ${thousands(CUSTOM_FIELD_LIMITS.valuesBytes)} bytes`)
  says(`an \`enum\` of at most ${PRESENCE_BY_VALUES} options`)
  t.equal(FIELD_VALUES_BYTES, CUSTOM_FIELD_LIMITS.valuesBytes, 'the error message’s limit is the model’s')
  // The trigger's own limit (the migration custom_fields, as prisma/functions.sql holds it now).
  t.match(read('prisma/functions.sql'), `octet_length(NEW.fields::TEXT) > ${CUSTOM_FIELD_LIMITS.valuesBytes}`)
  // The table of operators: each type's row names exactly its operators.
  const section = read('docs/api-fields.md').split('## Searching by them')[1] ?? ''
  const rows = section.split('\n').filter((line) => line.startsWith('| `'))
  for (const [type, ops] of Object.entries(CUSTOM_OPERATORS)) {
    const [types = '', listed = ''] =
      rows
        .find((row) => row.split('|')[1]?.includes(`\`${type}\``))
        ?.split('|')
        .slice(1) ?? []
    t.ok(types.includes(`\`${type}\``), `${type} has a row`)
    t.same(
      [...listed.matchAll(/`(\w+)`/g)].map((m) => m[1]),
      ops,
      `${type}: its operators`,
    )
  }
})
