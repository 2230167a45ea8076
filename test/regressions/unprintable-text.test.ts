// Regression: text that cannot be stored as sent was stored altered and answered 201.
// Found by: the hostile-input fuzzing of POST and PATCH (docs/reliability-findings.md, "Failures found").
// How it showed: a lone surrogate ("\ud800", legal in JSON) became U+FFFD once stored as UTF-8; U+0085 and the
// other C1 control characters were accepted; a leading U+FEFF in a name was dropped by PGlite. Each was answered
// 201 with the text as sent, unlike what was stored.
// Fix: such text is refused with 400 invalid_body naming the field (PRINTABLE in src/schemas/common.ts).
// Without the fix the lone surrogates and C1 characters below are answered 201, not 400.
import t from 'tap'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('text that cannot be stored as sent', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'base@x.io' } })
  const id: string = created.json().id

  await t.test('a lone surrogate or a C1 control character is refused, not silently changed', async (t) => {
    for (const [n, raw] of ['"\\ud800x"', '"x\\udc00"', '"a\\u0085b"', '"\\u009f"'].entries()) {
      const res = await request(app, key, {
        method: 'POST',
        url: LIST,
        payload: `{"email":"s${n}@x.io","firstName":${raw}}`,
        headers: { 'content-type': 'application/json' },
      })
      t.equal(res.statusCode, 400, `firstName ${raw}: refused`)
      t.match(res.json().error?.message, /"firstName"/, `firstName ${raw}: named`)
      const patch = await request(app, key, {
        method: 'PATCH',
        url: `${LIST}/${id}`,
        payload: `{"consentType":${raw}}`,
        headers: { 'content-type': 'application/json' },
      })
      t.equal(patch.statusCode, 400, `PATCH consentType ${raw}: refused`)
    }
  })

  await t.test('a name starting with U+FEFF is refused or read back unchanged (PGlite drops it)', async (t) => {
    for (const [n, firstName] of ['\ufeffAnna', '\ufeff'].entries()) {
      const res = await request(app, key, { method: 'POST', url: LIST, payload: { email: `bom${n}@x.io`, firstName } })
      if (res.statusCode === 400) {
        t.pass(`${JSON.stringify(firstName)} refused`)
        continue
      }
      t.equal(res.statusCode, 201)
      t.equal(res.json().firstName, firstName, `${JSON.stringify(firstName)}: the created contact shows it as sent`)
      const read = await request(app, key, { method: 'GET', url: `${LIST}/${res.json().id}` })
      t.equal(read.json().firstName, firstName, `${JSON.stringify(firstName)}: read back as sent`)
    }
  })
})
