// The configuration: docs/operations.md's table lists exactly what src/config/config.ts accepts, and a wrong value
// is refused with a line naming the variable, the value (never a password) and what is allowed.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { ConfigError, ConfigSchema, loadConfig } from '../../src/config/config.ts'

t.test("docs/operations.md's configuration table lists every variable, and only those", async (t) => {
  const page = readFileSync('docs/operations.md', 'utf8')
  const start = page.indexOf('## Configuration')
  t.not(start, -1, "docs/operations.md's configuration section is found")
  // Up to the next section of the same level, or the end of the page.
  const end = page.indexOf('\n## ', start)
  const section = page.slice(start, end === -1 ? undefined : end)
  const documented = [...section.matchAll(/^\| `([A-Z_]+)` +\|/gm)].map((match) => match[1]).sort()
  t.same(documented, Object.keys(ConfigSchema.properties).sort())
})

t.test('a wrong value names the variable, the value and what is allowed', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: 'abc' }, /^PORT: "abc" is not valid; expected a whole number from 0 to 65535\.$/],
    [{ RATE_LIMIT_MAX: '0' }, /^RATE_LIMIT_MAX: "0" is not valid; expected a whole number of at least 1\.$/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: "loud" is not valid; expected one of fatal, error, warn, info/],
    [{ MIGRATE_ON_START: 'yes' }, /^MIGRATE_ON_START: "yes" is not valid; expected true or false\.$/],
    [
      { DATABASE_URL: 'mysql://app:s3cret@db/app' },
      /^DATABASE_URL: "mysql:\/\/app:\*\*\*@db\/app" is not valid; expected a postgres/,
    ],
    [{ TRUST_PROXY: 'everyone' }, /^TRUST_PROXY: "everyone" is not valid; expected true, false, a number of proxies/],
  ]
  for (const [env, expected] of cases) {
    let error: unknown
    try {
      loadConfig(env)
    } catch (thrown) {
      error = thrown
    }
    t.ok(error instanceof ConfigError, `${Object.keys(env)[0]}: a ConfigError`)
    t.match(String((error as Error)?.message), expected)
    t.notMatch(String((error as Error)?.message), /s3cret/, 'no password')
  }
})
