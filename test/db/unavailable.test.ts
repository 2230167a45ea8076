// Which database errors mean "unavailable, retry" (503) rather than a bug (500).
import t from 'tap'
import { isDatabaseUnavailable } from '../../src/db/unavailable.ts'

t.test('the database gone, refusing connections, or its credentials no longer working: 503', async (t) => {
  for (const code of ['08006', '57P01', '53300', '3D000', '55000', '28P01', '28000', 'ECONNREFUSED', 'P1001']) {
    t.ok(isDatabaseUnavailable({ code }), code)
    t.ok(isDatabaseUnavailable({ cause: { code } }), `${code} as a cause`)
  }
  for (const code of ['23505', '42P01', '22003', 'P2002']) t.notOk(isDatabaseUnavailable({ code }), `${code}: a bug`)
})
