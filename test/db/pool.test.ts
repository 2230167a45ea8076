// The PostgreSQL pool keeps its connections: pg-pool closes a connection after 10 s idle unless told otherwise,
// and the first requests after a quiet spell then paid a new backend and re-planned their statements. Kept
// connections send TCP keepalives, and one lost anyway is replaced.
import { execFileSync } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { type Database, openDatabase } from '../../src/db/database.ts'
import { startPostgres } from '../services.ts'

/** pg-pool's default idle timeout (node_modules/pg-pool/index.js), which the pool must outlast. */
const PG_POOL_IDLE_TIMEOUT_MS = 10_000

/** The backends of two statements run at once (each holds its connection for a moment, so they need two). */
async function backendsOfTwoQueries(db: Database): Promise<number[]> {
  const run = async () => {
    const [row] = await db.query<{ pid: number }>('pool_test_pid', 'SELECT pg_backend_pid() AS pid, pg_sleep(0.2)', [])
    if (!row) throw new Error('no row')
    return row.pid
  }
  return (await Promise.all([run(), run()])).sort((a, b) => a - b)
}

/** The timers of this process's TCP connections to `port`, as `ss -o` prints them (keepalive, on, …). */
function socketTimers(port: number): string[] {
  const out = execFileSync('ss', ['-tnoH', 'state', 'established', `dport = :${port}`], { encoding: 'utf8' })
  return out
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => /timer:\((\w+)/.exec(line)?.[1] ?? 'none')
}

t.test('connections open on demand, stay open past the idle timeout, keep alive, and are replaced', async (t) => {
  const postgres = await startPostgres()
  t.teardown(() => postgres.stop())
  const db = await openDatabase({ url: postgres.url, poolSize: 2 })
  t.teardown(() => db.close())
  t.same(db.poolStats(), { total: 0, idle: 0, waiting: 0 }, 'no connection before the first statement')

  const first = await backendsOfTwoQueries(db)
  t.equal(new Set(first).size, 2, 'two connections were opened')
  t.same(socketTimers(postgres.port), ['keepalive', 'keepalive'], 'both sockets send TCP keepalives')
  await sleep(PG_POOL_IDLE_TIMEOUT_MS + 1500)
  t.same(db.poolStats(), { total: 2, idle: 2, waiting: 0 }, 'both still open after the idle timeout')
  t.same(await backendsOfTwoQueries(db), first, 'the same backends serve the next requests')

  // Both backends terminated from outside (an administrator, a failover): the pool drops them and opens others.
  const admin = await openDatabase({ url: postgres.url, poolSize: 1 })
  t.teardown(() => admin.close())
  await admin.query('pool_test_terminate', 'SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [first])
  for (let waited = 0; waited < 5000 && (db.poolStats()?.total ?? 0) > 0; waited += 20) await sleep(20)
  t.equal(db.poolStats()?.total, 0, 'the terminated connections were dropped')
  const replaced = await backendsOfTwoQueries(db)
  t.equal(new Set(replaced).size, 2, 'two connections again')
  t.notOk(
    replaced.some((pid) => first.includes(pid)),
    'on new backends',
  )
})
