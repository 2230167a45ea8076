// Regression: a body with a JSON syntax error got a message that did not say so.
// Found by: the hostile-input fuzzing of POST and PATCH (docs/reliability-findings.md, "Failures found").
// How it showed: 400 invalid_body with a generic "corpo non valido", nothing about JSON.
// Fix: the message says the body is not valid JSON.
// Without the fix the message checks below fail.
import t from 'tap'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('malformed JSON is said to be malformed JSON', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  for (const payload of ['{', '{"email":"a@x.io",}', 'NaN']) {
    const res = await request(app, key, {
      method: 'POST',
      url: LIST,
      payload,
      headers: { 'content-type': 'application/json' },
    })
    t.equal(res.statusCode, 400)
    t.equal(res.json().error.code, 'invalid_body')
    t.match(res.json().error.message, /JSON/, `${payload}: the message says the body is not JSON`)
  }
})
