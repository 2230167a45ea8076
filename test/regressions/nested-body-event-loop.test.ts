// Regression: one request of deeply nested brackets stopped every tenant for seconds.
// Found by: a load review (issue #29, "One request must not stop every tenant").
// How it showed: a batch body of `{"contacts":[` + 10,000,000 `[` + 10,000,000 `]` + `]}` (20 MB, under the
// route's limit then) kept the event loop in JSON.parse for about 10 s: /health answered after 10.9 s, and two such
// requests cut another tenant's reads from 632 answers per 5 s to 77 in a minute. Any body of millions of `{}` or
// `[]` costs the same way.
// Fix: every JSON body is scanned before it is parsed and refused (400 invalid_body) past 32 levels or 10,000
// objects and lists (src/plugins/app/json-shape.ts); the batch's body limit is 7.4 MB.
// Without the fix /health's slowest answer below was 2.3 s and a read's 3.2 s, well past the 1 s the attack may
// add to the slowest answers of the same load under blank bodies of the same size (which measures the machine's
// load and this process's own sending, and leaves out only the parsing).
import t from 'tap'
import { BATCH_BODY_LIMIT } from '../../src/contacts/batch/model.ts'
import { MAX_JSON_CONTAINERS, MAX_JSON_DEPTH } from '../../src/plugins/app/json-shape.ts'
import { listen } from '../fuzz/sockets.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const BATCH = '/api/v1/contacts/batch'
/** What the attack may add to the slowest answer of the same load under blank bodies. */
const ALLOWED_MS = 1000

/** `{"contacts":[` + `open` repeated + `close` repeated + `]}`, `bytes` long at most. */
function nestedBody(open: string, close: string, bytes: number): string {
  const frame = '{"contacts":[]}'
  const times = Math.floor((bytes - frame.length) / (open.length + close.length))
  return `{"contacts":[${open.repeat(times)}${close.repeat(times)}]}`
}

t.test('deeply nested bodies are refused unparsed, and /health and another tenant keep being answered', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000000' })
  // Two attackers: a tenant is admitted one batch of the largest size at a time.
  const attackers = [await createTenantWithKey(app), await createTenantWithKey(app, { name: 'Seconda' })]
  const other = await createTenantWithKey(app, { name: 'Altra' })
  for (let i = 0; i < 5; i++) {
    await request(app, other.key, {
      method: 'POST',
      url: '/api/v1/contacts',
      payload: { email: `altro${i}@example.it` },
    })
  }
  const base = `http://127.0.0.1:${await listen(app)}`

  const timed = async (url: string, headers: Record<string, string> = {}) => {
    const started = performance.now()
    const res = await fetch(url, { headers })
    await res.arrayBuffer()
    return { status: res.status, ms: performance.now() - started }
  }
  /** Both attackers send `bodies` three times each while /health and the other tenant's reads are timed. */
  const underFire = async (bodies: { name: string; body: string }[]) => {
    let attacking = true
    const healthTimes: number[] = []
    const reads: { status: number; ms: number }[] = []
    const watchers = [
      (async () => {
        while (attacking) {
          healthTimes.push((await timed(`${base}/health`)).ms)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      })(),
      ...[0, 1].map(async () => {
        while (attacking) reads.push(await timed(`${base}/api/v1/contacts`, { authorization: `Bearer ${other.key}` }))
      }),
    ]
    const attack = async (attacker: { key: string }) => {
      const answers: { name: string; status: number; message: string }[] = []
      for (let round = 0; round < 3; round++) {
        for (const { name, body } of bodies) {
          const res = await fetch(`${base}${BATCH}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${attacker.key}`, 'content-type': 'application/json' },
            body,
          })
          const answer = (await res.json()) as { error?: { message: string } }
          answers.push({ name, status: res.status, message: answer.error?.message ?? '' })
        }
      }
      return answers
    }
    const answers = (await Promise.all(attackers.map(attack))).flat()
    attacking = false
    await Promise.all(watchers)
    return {
      answers,
      healthTimes,
      reads,
      slowestHealth: Math.max(...healthTimes),
      slowestRead: Math.max(...reads.map((r) => r.ms)),
    }
  }

  // The yardstick: bodies of the same size that parse at once (blanks), sent the same way from this same process,
  // so that what the machine's load and the test's own sending cost is measured too, and only parsing differs.
  const blank = `{"contacts":[]${' '.repeat(BATCH_BODY_LIMIT - 20)}}`
  const calm = await underFire([{ name: 'blanks', body: blank }])
  t.same([...new Set(calm.answers.map((a) => a.status))], [400], 'the blank bodies are refused (no contact)')

  const fire = await underFire([
    { name: 'the largest nested body the limit lets in', body: nestedBody('[', ']', BATCH_BODY_LIMIT) },
    { name: 'as many objects as the limit lets in', body: nestedBody('{},', '', BATCH_BODY_LIMIT) },
  ])
  for (const { name, status, message } of fire.answers) {
    t.equal(status, 400, name)
    t.match(message, new RegExp(`più di (${MAX_JSON_DEPTH} livelli|${MAX_JSON_CONTAINERS} oggetti e liste)`), name)
  }
  t.ok(
    fire.slowestHealth < calm.slowestHealth + ALLOWED_MS,
    `/health answered ${fire.healthTimes.length} times, the slowest in ${Math.round(fire.slowestHealth)} ms ` +
      `(${Math.round(calm.slowestHealth)} ms under blank bodies)`,
  )
  t.same(
    [...new Set(fire.reads.map((r) => r.status))],
    [200],
    `the other tenant's ${fire.reads.length} reads all succeeded`,
  )
  t.ok(
    fire.slowestRead < calm.slowestRead + ALLOWED_MS,
    `the other tenant's slowest read took ${Math.round(fire.slowestRead)} ms (${Math.round(calm.slowestRead)} ms under blank bodies)`,
  )

  // The issue's own body is now larger than the batch's limit: refused on its Content-Length, unread.
  const issueBody = `{"contacts":[${'['.repeat(10_000_000)}${']'.repeat(10_000_000)}]}`
  const started = performance.now()
  const tooLarge = await fetch(`${base}${BATCH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${attackers[0]?.key}`, 'content-type': 'application/json' },
    body: issueBody,
  }).then(
    (res) => res.status,
    () => 'cut',
  )
  t.ok(tooLarge === 413 || tooLarge === 'cut', `the issue's 20 MB body: ${tooLarge}`)
  t.ok(performance.now() - started < calm.slowestRead + ALLOWED_MS, 'at once')
})
