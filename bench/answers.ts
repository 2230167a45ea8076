// Checks before measuring: the baseline answers what rubrica answers (otherwise the two would not be doing the
// same work): byte for byte for reads and refusals; for writes the same status and the same body apart from
// what must differ (ids, timestamps, the email of a new contact), and the baseline's written contact as rubrica
// reads it back. Then the integration features that scenarios g and h load: a POST with an Idempotency-Key gets
// 201, a GET with the sampled ETag in If-None-Match gets 304.
import { type HttpAnswer, http, type Implementation, log, type Targets } from './servers.ts'
import { BENCH_EMAIL_DOMAIN, type TenantSample } from './wrk.ts'

const MISSING_ID = '00000000-0000-4000-8000-000000000000'
/** Fields a write may answer differently on each target; the email is the one each was sent. */
const CREATED_APART = ['id', 'email', 'acquiredAt', 'createdAt', 'updatedAt']

/** Runs every check and prints its outcome; returns the problems found (none when all is well). */
export async function checkAnswers(targets: Targets, samples: TenantSample[], runId: string): Promise<string[]> {
  const tenant = samples[0]
  if (!tenant) return ['no tenant sampled']
  const problems: string[] = []
  const send = (target: Implementation, method: string, path: string, body?: object, headers = {}) =>
    http(
      `${targets[target].url}/api/v1/contacts${path}`,
      method,
      { ...headersOf(tenant, body), ...headers },
      json(body),
    )
  /** The same request (or one per target) sent to both targets at once. */
  const both = async (method: string, path: string, body?: (target: Implementation) => object) => {
    const [rubrica, baseline] = await Promise.all([
      send('rubrica', method, path, body?.('rubrica')),
      send('baseline', method, path, body?.('baseline')),
    ])
    return { rubrica, baseline }
  }
  /** The contact the baseline answered after writing it is byte for byte what rubrica reads at once. */
  const asRubricaReadsIt = async (label: string, written: HttpAnswer) => {
    const read = await send('rubrica', 'GET', `/${(JSON.parse(written.body) as { id: string }).id}`)
    if (read.status !== 200 || read.body !== written.body) {
      problems.push(`baseline ${label}: rubrica reads the contact back as ${difference(read.body, written.body)}`)
    }
  }

  // Reads: GET by id (three found, one missing) and five list shapes, on two tenants.
  for (const sample of samples.slice(0, 2)) {
    const paths = [
      ...sample.ids.slice(0, 3).map((id) => `/${id}`),
      '?limit=50',
      `?limit=50&cursor=${sample.deepCursors[0]}`,
      '?limit=50&stage=customer&emailStatus=active',
      '?limit=50&stage=ex_customer&emailStatus=complained',
      '?limit=200&includeArchived=true',
      `/${MISSING_ID}`,
    ]
    for (const path of paths) {
      const answers = await Promise.all(
        (['rubrica', 'baseline'] as const).map((target) =>
          http(`${targets[target].url}/api/v1/contacts${path}`, 'GET', { authorization: `Bearer ${sample.key}` }),
        ),
      )
      problems.push(...differences(`GET ${path}`, answers, path.includes(MISSING_ID) ? 404 : 200))
    }
  }

  // A new contact, created by each target; then an unknown tag and a taken email, refused by both. Tags sent out
  // of order: both must answer them in code-point order.
  const contact = (email: string, tags = tenant.tags.slice(0, 3).reverse()) => ({
    email,
    firstName: 'Bench',
    lastName: 'Load',
    phone: '+39 02 1234 5678',
    tags,
  })
  const email = (who: string) => `wrk-${runId}-check-${who}@${BENCH_EMAIL_DOMAIN}` // a kept database is tidied of it
  const created = await both('POST', '', (target) => contact(email(target)))
  const createProblems = differences('POST', [created.rubrica, created.baseline], 201, CREATED_APART)
  problems.push(...createProblems)
  if (createProblems.length === 0) {
    for (const target of ['rubrica', 'baseline'] as const) {
      const answer = created[target]
      const body = JSON.parse(answer.body) as { id: string; email: string }
      if (body.email !== email(target)) problems.push(`${target} POST answered the email ${body.email}`)
      if (answer.headers.location !== `/api/v1/contacts/${body.id}`) {
        problems.push(`${target} POST: Location ${answer.headers.location} for the contact ${body.id}`)
      }
    }
    await asRubricaReadsIt('POST', created.baseline)
    const refused = await both('POST', '', () => contact(email('unknown-tag'), [`no-such-tag-${runId}`]))
    problems.push(...differences('POST with an unknown tag', [refused.rubrica, refused.baseline], 400))
    const taken = await both('POST', '', () => contact(email('rubrica')))
    problems.push(...differences('POST of a taken email', [taken.rubrica, taken.baseline], 409))
  }

  // The same PATCH of the same contact on each target (the baseline's second); then a missing contact.
  const patch = { stage: 'customer', consentType: 'consent' }
  const id = tenant.ids[0] ?? MISSING_ID
  const patched = [await send('rubrica', 'PATCH', `/${id}`, patch), await send('baseline', 'PATCH', `/${id}`, patch)]
  const patchProblems = differences('PATCH', patched, 200, ['updatedAt'])
  problems.push(...patchProblems)
  if (patchProblems.length === 0) await asRubricaReadsIt('PATCH', patched[1] as HttpAnswer)
  const missing = await both('PATCH', `/${MISSING_ID}`, () => patch)
  problems.push(...differences('PATCH of a missing contact', [missing.rubrica, missing.baseline], 404))

  // What scenarios g and h rely on, on rubrica (the baseline has neither feature).
  const idempotencyKey = { 'idempotency-key': `wrk-${runId}-check-idempotent` }
  const idempotent = { email: email('idempotent'), tags: tenant.tags.slice(0, 1) }
  const stored = await send('rubrica', 'POST', '', idempotent, idempotencyKey)
  if (stored.status !== 201) problems.push(`POST with Idempotency-Key: ${stored.status} ${stored.body.slice(0, 300)}`)
  const sample = tenant.unchanged[0]
  const current = sample && (await send('rubrica', 'GET', `/${sample.id}`, undefined, { 'if-none-match': sample.etag }))
  if (current?.status !== 304) problems.push(`GET with If-None-Match ${sample?.etag}: ${current?.status}, not 304`)

  for (const problem of problems) log(`CHECK FAILED: ${problem}`)
  if (problems.length === 0) {
    log(
      'checks: the baseline answers byte-identical JSON for GET by id, 5 list shapes and a 404; POST (201, 400 ' +
        'unknown_tag, 409) and PATCH (200, 404) alike apart from ids and timestamps; Idempotency-Key 201, ' +
        'If-None-Match 304: ok.',
    )
  }
  return problems
}

const headersOf = (tenant: TenantSample, body?: object): Record<string, string> =>
  body === undefined
    ? { authorization: `Bearer ${tenant.key}` }
    : { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' }
const json = (body: object | undefined) => (body === undefined ? undefined : JSON.stringify(body))

/** What is wrong with rubrica's and the baseline's answers that should have `status` and the same body, but `apart`. */
function differences(label: string, answers: HttpAnswer[], status: number, apart: string[] = []): string[] {
  const names = ['rubrica', 'baseline']
  for (const [i, answer] of answers.entries()) {
    if (answer.status !== status) return [`${names[i]} ${label}: ${answer.status} ${answer.body.slice(0, 300)}`]
  }
  const [a = '', b = ''] = answers.map(({ body }) => {
    if (apart.length === 0) return body
    const parsed = JSON.parse(body) as Record<string, unknown>
    for (const field of apart) if (field in parsed) parsed[field] = '…'
    return JSON.stringify(parsed)
  })
  return a === b ? [] : [`${label}: ${difference(a, b)}`]
}

/** Where two bodies part, with 80 characters of each from there. */
function difference(rubricaBody: string, baselineBody: string): string {
  let at = 0
  while (at < rubricaBody.length && rubricaBody[at] === baselineBody[at]) at++
  return (
    `bodies differ at character ${at}: rubrica …${rubricaBody.slice(at, at + 80)}… ` +
    `baseline …${baselineBody.slice(at, at + 80)}…`
  )
}
