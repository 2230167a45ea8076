// Regression: the admin CLI refused names with emoji as "control characters".
// Found by: review of the lone-surrogate fix (unprintable-text.test.ts; docs/reliability-findings.md, "Failures found").
// How it showed: a tag or tenant named with an emoji (e.g. "😀 clienti") was refused by the CLI: its admin check
// compiled PRINTABLE without the `u` flag, where every surrogate pair reads as two lone halves.
// Fix: the admin check compiles PRINTABLE in Unicode mode, as Ajv does.
// Without the fix cleanTagName throws on "😀 clienti". It tests a plain function, so it builds no app.
import t from 'tap'
import { cleanTagName } from '../../src/admin/tags.ts'

t.test('operators can name tags, tenants and keys with emoji (the admin check of PRINTABLE)', async (t) => {
  for (const name of ['😀 clienti', 'Caffè ☕', 'Zoë']) {
    t.doesNotThrow(() => cleanTagName(name), `${name} is a valid tag name`)
  }
  t.throws(() => cleanTagName('a\u0085b'), 'a C1 control character is still refused')
})
