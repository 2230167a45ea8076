// Two server processes on one PostgreSQL database and one Redis, as behind a load balancer: the tenant's
// 60 requests per minute hold across both, and a key revoked with the CLI, run without any Redis setting, is
// refused by both within a second (the change is announced on PostgreSQL itself).
import t from 'tap'
import { runCli } from '../src/cli/main.ts'
import { start, waitFor } from './process.ts'
import { startPostgres, startRedis } from './services.ts'

async function cli(argv: string[], env: Record<string, string>): Promise<Record<string, unknown>> {
  let stdout = ''
  let stderr = ''
  const code = await runCli([...argv, '--json'], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
  })
  if (code !== 0) throw new Error(`rubrica ${argv.join(' ')}: ${stderr}`)
  return JSON.parse(stdout)
}

t.test('two instances share the rate limit and see revocations at once', async (t) => {
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()])
  t.teardown(() => Promise.all([postgres.stop(), redis.stop()]))
  const env = { DATABASE_URL: postgres.url, REDIS_URL: redis.url }

  await cli(['db', 'deploy'], env)
  const tenant = await cli(['tenant', 'create', '--name', 'Scale'], env)
  const issued = await cli(
    ['key', 'create', '--tenant', String(tenant.id), '--role', 'editor', '--scopes', 'contacts:read,contacts:write'],
    env,
  )
  const headers = { authorization: `Bearer ${issued.key}` }

  const servers = [0, 1].map(() => start({ ...env, DEMO_ON_EMPTY: 'false', LOG_LEVEL: 'info', RATE_LIMIT_MAX: '60' }))
  t.teardown(() => {
    for (const server of servers) server.child.kill('SIGKILL')
  })
  const urls = await Promise.all(
    servers.map(async (server) => (await waitFor(server, /Server listening at (http:\/\/[^"\s]+)/))[1] as string),
  )
  t.not(urls[0], urls[1], 'two processes on two ports')

  const statuses = await Promise.all(
    Array.from({ length: 60 }, (_, i) => fetch(`${urls[i % 2]}/api/v1/contacts?limit=1`, { headers })),
  ).then((responses) => responses.map((r) => r.status))
  t.same([...new Set(statuses)], [200], '60 requests spread across both succeed')
  for (const url of urls) {
    const refused = await fetch(`${url}/api/v1/contacts?limit=1`, { headers })
    t.equal(refused.status, 429, `the 61st and later are refused by ${url}`)
    t.equal(((await refused.json()) as { error: { code: string } }).error.code, 'rate_limit_exceeded')
  }

  // A paying customer gets a higher limit: announced like a revocation, applied by both within a second.
  const raisedAt = Date.now()
  await cli(['tenant', 'limit', String(tenant.id), '--per-minute', '100'], { DATABASE_URL: postgres.url })
  for (const url of urls) {
    let limit = ''
    while (Date.now() - raisedAt < 1000) {
      const res = await fetch(`${url}/api/v1/contacts?limit=1`, { headers })
      limit = res.headers.get('x-ratelimit-limit') ?? ''
      if (limit === '100') {
        t.equal(res.status, 200, `${url}: served again under the raised limit`)
        break
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    t.equal(limit, '100', `${url} applies the tenant's new limit within a second`)
  }

  // Both instances have the key cached (AUTH_CACHE_TTL_MS is 5 s): the announcement must clear it.
  const revokedAt = Date.now()
  await cli(['key', 'revoke', String(issued.id)], { DATABASE_URL: postgres.url })
  for (const url of urls) {
    let status = 0
    while (Date.now() - revokedAt < 1000) {
      status = (await fetch(`${url}/api/v1/contacts?limit=1`, { headers })).status
      if (status === 401) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    t.equal(status, 401, `${url} refuses the revoked key within a second`)
  }
})
