// Checks before measuring: the baseline answers byte for byte what rubrica answers (otherwise the two would not be
// doing the same work), and the write scenarios get 201 and 200 (otherwise wrk would measure error answers).
import { log } from './output.ts'
import { http, type Server, type Targets } from './servers.ts'
import { BENCH_EMAIL_DOMAIN, type TenantSample } from './wrk.ts'

/** Runs both checks and prints their outcome; returns the problems found (none when all is well). */
export async function checkAnswers(targets: Targets, samples: TenantSample[], runId: string): Promise<string[]> {
  const problems = [
    ...(await compareAnswers(targets, samples)),
    ...(await checkWrites(targets.rubrica, samples, runId)),
  ]
  for (const problem of problems) log(`CHECK FAILED: ${problem}`)
  if (problems.length === 0) {
    log('checks: the baseline answers byte-identical JSON for GET by id and 5 list shapes; POST 201 and PATCH 200 ok.')
  }
  return problems
}

const MISSING_ID = '00000000-0000-4000-8000-000000000000'

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

async function compareAnswers({ rubrica, baseline }: Targets, samples: TenantSample[]): Promise<string[]> {
  const problems: string[] = []
  for (const tenant of samples.slice(0, 2)) {
    const headers = { authorization: `Bearer ${tenant.key}` }
    for (const path of readPaths(tenant)) {
      const [a, b] = await Promise.all([
        http(rubrica.url + path, 'GET', headers),
        http(baseline.url + path, 'GET', headers),
      ])
      const expectedStatus = path.includes(MISSING_ID) ? 404 : 200
      if (a.status !== expectedStatus) problems.push(`rubrica GET ${path}: ${a.status} ${a.body.slice(0, 300)}`)
      else if (b.status !== expectedStatus) problems.push(`baseline GET ${path}: ${b.status} ${b.body.slice(0, 300)}`)
      else if (expectedStatus === 200 && a.body !== b.body) problems.push(`GET ${path}: ${difference(a.body, b.body)}`)
    }
  }
  return problems
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

async function checkWrites(rubrica: Server, samples: TenantSample[], runId: string): Promise<string[]> {
  const problems: string[] = []
  const tenant = samples[0]
  if (!tenant) return ['no tenant sampled']
  const headers = { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' }
  const created = await http(
    `${rubrica.url}/api/v1/contacts`,
    'POST',
    headers,
    JSON.stringify({
      email: `wrk-${runId}-check-0@${BENCH_EMAIL_DOMAIN}`,
      firstName: 'Bench',
      lastName: 'Load',
      phone: '+39 02 1234 5678',
      tags: [tenant.tags[0]],
    }),
  )
  if (created.status !== 201) problems.push(`POST: ${created.status} ${created.body.slice(0, 300)}`)
  const patched = await http(
    `${rubrica.url}/api/v1/contacts/${tenant.ids[0]}`,
    'PATCH',
    headers,
    JSON.stringify({ stage: 'customer', consentType: 'consent' }),
  )
  if (patched.status !== 200) problems.push(`PATCH: ${patched.status} ${patched.body.slice(0, 300)}`)
  return problems
}
