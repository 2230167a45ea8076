// Checks before measuring: the baseline answers what rubrica answers (otherwise the two would not be doing the
// same work): byte for byte for reads and refusals; for writes the same status and the same body apart from
// what must differ (ids, timestamps, the email of a new contact), and the baseline's written contact as rubrica
// reads it back. Then the integration features that scenarios g and h load: a POST with an Idempotency-Key gets
// 201, a GET with the sampled ETag in If-None-Match gets 304.
import { log } from './output.ts'
import { type HttpAnswer, http, type Server, type Implementation as Target, type Targets } from './servers.ts'
import { BENCH_EMAIL_DOMAIN, type TenantSample } from './wrk.ts'

/** Runs every check and prints its outcome; returns the problems found (none when all is well). */
export async function checkAnswers(targets: Targets, samples: TenantSample[], runId: string): Promise<string[]> {
  const tenant = samples[0]
  if (!tenant) return ['no tenant sampled']
  const problems = [
    ...(await compareReads(targets, samples)),
    ...(await compareCreates(targets, tenant, runId)),
    ...(await comparePatches(targets, tenant)),
    ...(await checkConditionalAndIdempotent(targets.rubrica, tenant, runId)),
  ]
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

const MISSING_ID = '00000000-0000-4000-8000-000000000000'

/** Fields a write may answer differently on each target; the email is the one each was sent. */
const CREATED_APART = ['id', 'email', 'acquiredAt', 'createdAt', 'updatedAt']
const PATCHED_APART = ['updatedAt']

/** The reads compared: GET by id (three found, one missing) and five list shapes. */
function readPaths(tenant: TenantSample): string[] {
  return [
    ...tenant.ids.slice(0, 3).map((id) => `/api/v1/contacts/${id}`),
    '/api/v1/contacts?limit=50',
    `/api/v1/contacts?limit=50&cursor=${tenant.deepCursors[0]}`,
    '/api/v1/contacts?limit=50&stage=customer&emailStatus=active',
    '/api/v1/contacts?limit=50&stage=ex_customer&emailStatus=complained',
    '/api/v1/contacts?limit=200&includeArchived=true',
    `/api/v1/contacts/${MISSING_ID}`,
  ]
}

async function compareReads(targets: Targets, samples: TenantSample[]): Promise<string[]> {
  const problems: string[] = []
  for (const tenant of samples.slice(0, 2)) {
    const headers = { authorization: `Bearer ${tenant.key}` }
    for (const path of readPaths(tenant)) {
      const answers = await both((target) => http(targets[target].url + path, 'GET', headers))
      const status = path.includes(MISSING_ID) ? 404 : 200
      problems.push(...differences(`GET ${path}`, answers, status))
    }
  }
  return problems
}

/** The same request (or one per target) sent to both targets at once. */
async function both(send: (target: Target) => Promise<HttpAnswer>): Promise<Record<Target, HttpAnswer>> {
  const [rubrica, baseline] = await Promise.all([send('rubrica'), send('baseline')])
  return { rubrica, baseline }
}

/** What is wrong with two answers that should have `status` and the same body, apart from the fields `apart`. */
function differences(label: string, answers: Record<Target, HttpAnswer>, status: number, apart: string[] = []) {
  for (const target of ['rubrica', 'baseline'] as const) {
    const answer = answers[target]
    if (answer.status !== status) return [`${target} ${label}: ${answer.status} ${answer.body.slice(0, 300)}`]
  }
  const [a, b] = [without(answers.rubrica.body, apart), without(answers.baseline.body, apart)]
  return a === b ? [] : [`${label}: ${difference(a, b)}`]
}

/** The body with the fields `apart` blanked out (the body as it is when there are none). */
function without(body: string, apart: string[]): string {
  if (apart.length === 0) return body
  const parsed = JSON.parse(body) as Record<string, unknown>
  for (const field of apart) if (field in parsed) parsed[field] = '…'
  return JSON.stringify(parsed)
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

/** The check's own email of `who`: in the bench domain, so a kept database is tidied of it. */
const checkEmail = (runId: string, who: string) => `wrk-${runId}-check-${who}@${BENCH_EMAIL_DOMAIN}`

const jsonHeaders = (tenant: TenantSample) => ({
  authorization: `Bearer ${tenant.key}`,
  'content-type': 'application/json',
})

/** A new contact, created by each target; then an unknown tag and a taken email, refused by both. */
async function compareCreates(targets: Targets, tenant: TenantSample, runId: string): Promise<string[]> {
  // Tags sent out of order: both must answer them in code-point order.
  const contact = (email: string, tags = tenant.tags.slice(0, 3).reverse()) =>
    JSON.stringify({ email, firstName: 'Bench', lastName: 'Load', phone: '+39 02 1234 5678', tags })
  const post = (target: Target, body: string) =>
    http(`${targets[target].url}/api/v1/contacts`, 'POST', jsonHeaders(tenant), body)

  const created = await both((target) => post(target, contact(checkEmail(runId, target))))
  const problems = differences('POST', created, 201, CREATED_APART)
  if (problems.length > 0) return problems
  for (const target of ['rubrica', 'baseline'] as const) problems.push(...createdAsSent(target, created[target], runId))
  problems.push(...(await asRubricaReadsIt(targets.rubrica, tenant, 'POST', created.baseline)))

  const unknownTag = contact(checkEmail(runId, 'unknown-tag'), [`no-such-tag-${runId}`])
  const refused = await both((target) => post(target, unknownTag))
  problems.push(...differences('POST with an unknown tag', refused, 400))
  const taken = await both((target) => post(target, contact(checkEmail(runId, 'rubrica'))))
  problems.push(...differences('POST of a taken email', taken, 409))
  return problems
}

/** A 201 of `target` that names the email it was sent, and its own id in Location. */
function createdAsSent(target: Target, answer: HttpAnswer, runId: string): string[] {
  const body = JSON.parse(answer.body) as { id: string; email: string }
  const problems: string[] = []
  if (body.email !== checkEmail(runId, target)) problems.push(`${target} POST answered the email ${body.email}`)
  if (answer.headers.location !== `/api/v1/contacts/${body.id}`) {
    problems.push(`${target} POST: Location ${answer.headers.location} for the contact ${body.id}`)
  }
  return problems
}

/** The contact the baseline answered after writing it is byte for byte what rubrica reads at once. */
async function asRubricaReadsIt(rubrica: Server, tenant: TenantSample, label: string, written: HttpAnswer) {
  const { id } = JSON.parse(written.body) as { id: string }
  const read = await http(`${rubrica.url}/api/v1/contacts/${id}`, 'GET', { authorization: `Bearer ${tenant.key}` })
  if (read.status === 200 && read.body === written.body) return []
  return [`baseline ${label}: rubrica reads the contact back as ${difference(read.body, written.body)}`]
}

/** The same PATCH of the same contact on each target (the baseline's second); then a missing contact. */
async function comparePatches(targets: Targets, tenant: TenantSample): Promise<string[]> {
  const patch = (target: Target, id: string) =>
    http(
      `${targets[target].url}/api/v1/contacts/${id}`,
      'PATCH',
      jsonHeaders(tenant),
      JSON.stringify({ stage: 'customer', consentType: 'consent' }),
    )
  const id = tenant.ids[0] ?? MISSING_ID
  const patched = { rubrica: await patch('rubrica', id), baseline: await patch('baseline', id) }
  const problems = differences('PATCH', patched, 200, PATCHED_APART)
  if (problems.length === 0)
    problems.push(...(await asRubricaReadsIt(targets.rubrica, tenant, 'PATCH', patched.baseline)))
  const missing = await both((target) => patch(target, MISSING_ID))
  return [...problems, ...differences('PATCH of a missing contact', missing, 404)]
}

/** What scenarios g and h rely on, on rubrica (the baseline has neither feature). */
async function checkConditionalAndIdempotent(rubrica: Server, tenant: TenantSample, runId: string) {
  const problems: string[] = []
  const email = checkEmail(runId, 'idempotent')
  const created = await http(
    `${rubrica.url}/api/v1/contacts`,
    'POST',
    { ...jsonHeaders(tenant), 'idempotency-key': email.split('@')[0] ?? email },
    JSON.stringify({ email, tags: tenant.tags.slice(0, 1) }),
  )
  if (created.status !== 201)
    problems.push(`POST with Idempotency-Key: ${created.status} ${created.body.slice(0, 300)}`)
  const sample = tenant.unchanged[0]
  if (!sample) return [...problems, 'no unchanged contact sampled']
  const headers = { authorization: `Bearer ${tenant.key}`, 'if-none-match': sample.etag }
  const current = await http(`${rubrica.url}/api/v1/contacts/${sample.id}`, 'GET', headers)
  if (current.status !== 304) problems.push(`GET with If-None-Match ${sample.etag}: ${current.status}, not 304`)
  return problems
}
