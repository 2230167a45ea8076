// Regression: errors raised by Fastify itself, before any route runs, in its own English body.
// Found by: the hostile-input fuzzing of every endpoint (docs/reliability-findings.md, "Failures found").
// How it showed: a path with an undecodable percent-escape, or an id over 100 characters, was answered with
// Fastify's own English 400 body instead of the Italian error envelope.
// Fix: framework errors are mapped to the envelope (`frameworkErrors`). Since the contract audit, a path that
// cannot be decoded is 400 bad_request (a malformed request), and ids of any length are routed, so an over-long
// one is the usual 404 after authentication. Without the fix the envelope checks below fail on Fastify's body.
import t from 'tap'
import { assertEnvelope, LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test(
  'a path with bad percent-encoding or an over-long id gets the envelope, not Fastify’s English body',
  async (t) => {
    const { app } = await build(t)
    const { key } = await createTenantWithKey(app)
    for (const [segment, status] of [
      ['%zz', 400],
      ['%E0%A4%A', 400],
      ['%ED%A0%80', 400],
      ['a'.repeat(150), 404],
      ['b'.repeat(5000), 404],
    ] as const) {
      const res = await request(app, key, { method: 'GET', url: `${LIST}/${segment}` })
      t.doesNotThrow(() => assertEnvelope(res.json(), res.statusCode, segment), `${segment.slice(0, 20)}: envelope`)
      t.equal(res.statusCode, status, `${segment.slice(0, 20)}: ${status}`)
    }
  },
)
