// Opens the service's database: PostgreSQL through @prisma/adapter-pg when a URL is given, otherwise the
// embedded PGlite kept in a directory. Both expose the same Prisma client and a single-connection session.
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import type { Config } from '../config/config.js'
import { PrismaClient } from '../generated/prisma/client.js'
import { lockDataDir, makePrivate, prepareDataDir } from './data-dir.js'
import { type ListenState, listenPglite, listenPostgres, type OnChange, type Unsubscribe } from './notifications.js'
import { pgliteSession, pgSession, type SqlSession } from './sql-session.js'
import { statementName } from './statement-name.js'
import { TCP_KEEPALIVE } from './tcp-keepalive.js'
import { isDatabaseUnavailable } from './unavailable.js'

export type DatabaseKind = 'postgres' | 'pglite'

/**
 * The extensions an embedded database loads: those the migrations create (btree_gin, for the search's indexes).
 * PostgreSQL servers have them as contrib extensions.
 */
export const PGLITE_EXTENSIONS = { btree_gin }

/** A statement by name (prepared where the driver can) and its parameters. */
export type Query = <Row>(name: string, sql: string, params: unknown[]) => Promise<Row[]>

export interface Database {
  kind: DatabaseKind
  /** The folder of an embedded database opened from DATA_DIR; null otherwise (PostgreSQL, or in memory). */
  dataDir: string | null
  prisma: PrismaClient
  /** Connections of the PostgreSQL pool (for metrics); null on the embedded database. */
  poolStats(): { total: number; idle: number; waiting: number } | null
  /**
   * A statement for the request paths, below Prisma: the contacts' reads and writes, the API-key bookkeeping,
   * the idempotency keys. On PostgreSQL a named (prepared) statement through the same pool, planned once per
   * connection instead of on every request. The admin CLI and the demo go through Prisma's models.
   */
  query<Row>(name: string, sql: string, params: unknown[]): Promise<Row[]>
  /**
   * Runs `work` in one transaction on one connection, its statements through `query` (committed when `work`
   * resolves, rolled back when it throws). On the embedded database other statements wait for it to end.
   */
  transaction<T>(work: (query: Query) => Promise<T>): Promise<T>
  /**
   * Subscribes to a notification channel (NOTIFY). `onChange` runs on each notification, with its payload, and
   * whenever the subscription (re)starts, without one, since notifications sent while it was down are lost. `onState` hears when its
   * connection is lost and when it listens again (PostgreSQL only: the embedded database has no connection).
   */
  listen(channel: string, onChange: OnChange, onState?: ListenState): Promise<Unsubscribe>
  /**
   * Statements and transactions for work in the background (webhook deliveries), on connections of their own: on
   * PostgreSQL a second pool of `BACKGROUND_CONNECTIONS`, so that such work never queues behind requests (an
   * instance busy with imports held a webhook round's every statement in the request pool's queue), nor requests
   * behind it. The embedded database has one connection for everything.
   */
  background: Pick<Database, 'query' | 'transaction'>
  /** Runs work on one dedicated connection (migrations need that for their lock). */
  withSession<T>(work: (session: SqlSession) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** Connections of the background pool (Database.background), beside DATABASE_POOL_SIZE's. */
export const BACKGROUND_CONNECTIONS = 2

export type DatabaseOptions =
  | { url: string; poolSize: number; connectTimeoutMs?: number }
  /**
   * An embedded database kept in a directory, locked against a second process. `onPrivate` hears how many files
   * and folders had modes wider than the service's own and were made private (folders from older versions).
   */
  | { dataDir: string; onPrivate?: (changed: number) => void }
  /** An already open PGlite instance (tests load a migrated template into memory). */
  | { pglite: PGlite }

/** The one reading of the configuration shared by the server and the CLI: a URL wins over DATA_DIR. */
export function databaseOptionsFrom(
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_SIZE' | 'DATA_DIR'> &
    Partial<Pick<Config, 'DATABASE_CONNECT_TIMEOUT_MS'>>,
  onPrivate?: (changed: number) => void,
): DatabaseOptions {
  return config.DATABASE_URL
    ? {
        url: config.DATABASE_URL,
        poolSize: config.DATABASE_POOL_SIZE,
        connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      }
    : { dataDir: config.DATA_DIR, onPrivate }
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if ('url' in options) return openPostgres(options.url, options.poolSize, options.connectTimeoutMs ?? 5000)
  if ('pglite' in options) return wrapPglite(options.pglite, null, async () => {})
  return openPgliteDirectory(options.dataDir, options.onPrivate ?? (() => {}))
}

function openPostgres(url: string, poolSize: number, connectTimeoutMs: number): Database {
  const pool = fixedPool(url, poolSize, connectTimeoutMs)
  const background = fixedPool(url, BACKGROUND_CONNECTIONS, connectTimeoutMs)
  // Prisma's statements named by their text, so that each is planned once per connection like the repository's.
  const statementNameGenerator = ({ sql }: { sql: string }) => statementName('prisma', sql)
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { statementNameGenerator }) })
  return {
    kind: 'postgres',
    dataDir: null,
    prisma,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    ...poolStatements(pool),
    background: poolStatements(background),
    listen: (channel, onChange, onState) => listenPostgres(url, channel, onChange, connectTimeoutMs, onState),
    withSession: (work) => checkedOut(pool, (client) => work(pgSession(client))),
    async close() {
      await prisma.$disconnect()
      await Promise.all([pool.end(), background.end()])
    },
  }
}

/**
 * A pool of `size` connections that stay open (min = max). pg-pool's default closes one after 10 s idle, so the
 * first requests after a quiet spell paid a new connection and re-planned every statement on a fresh backend
 * (docs/performance.md); and each release armed and each acquire cleared an idle timer. A connection that fails
 * is still dropped and replaced on demand; keepalives stop a firewall or NAT from silently forgetting one that
 * stays quiet.
 */
function fixedPool(url: string, size: number, connectTimeoutMs: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: size,
    min: size,
    connectionTimeoutMillis: connectTimeoutMs,
    ...TCP_KEEPALIVE,
  })
  // An idle client's error (database restarted) must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  // A connection cut while no one listens on its client must not either: node-postgres reports it as an 'error'
  // event on the client, and there are moments when neither pg-pool (which listens while the client is idle) nor
  // the work that checked it out listens, e.g. a client handed from a finished query straight to a waiting
  // transaction while the rest of the socket's data, the server's FATAL included, is still being parsed. This
  // listener stays for the client's life: the failure still reaches the work in flight through its query, and
  // pg-pool discards a client that is no longer queryable when it is released.
  pool.on('connect', (client) => client.on('error', () => {}))
  return pool
}

/** Named (prepared) statements and transactions on `pool`'s connections. */
function poolStatements(pool: pg.Pool): Pick<Database, 'query' | 'transaction'> {
  return {
    async query<Row>(name: string, sql: string, params: unknown[]) {
      const result = await pool.query({ name, text: sql, values: params })
      return result.rows as Row[]
    },
    transaction: (work) =>
      checkedOut(pool, async (client) => {
        await client.query('BEGIN')
        try {
          const result = await work(async (name, text, values) => (await client.query({ name, text, values })).rows)
          await client.query('COMMIT')
          return result
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {})
          throw error
        }
      }),
  }
}

/**
 * Runs `work` on a connection taken from the pool. A connection that failed (a backend terminated, a failover)
 * is given back with its error, so that pg-pool discards it rather than hand it to the next request; the cut
 * itself reaches `work` through its failed statement (a 503 for a request), never the process (see the pool's
 * 'connect' listener).
 */
async function checkedOut<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let failure: unknown
  try {
    return await work(client)
  } catch (error) {
    failure = error
    throw error
  } finally {
    client.release(isDatabaseUnavailable(failure) ? (failure as Error) : undefined)
  }
}

/** How often files PGlite created meanwhile (mode 0666) are made private; the folder's 0700 guards them until then. */
const PRIVATE_SWEEP_MS = 60_000

async function openPgliteDirectory(dataDir: string, onPrivate: (changed: number) => void): Promise<Database> {
  const dir = resolve(dataDir)
  await prepareDataDir(dir)
  // PGlite is a single-process database: a second process opening the same directory would corrupt it.
  const unlock = await lockDataDir(dir)
  const sweep = setInterval(() => makePrivate(dir).catch(() => {}), PRIVATE_SWEEP_MS).unref()
  const release = async () => {
    clearInterval(sweep)
    await makePrivate(dir)
    await unlock()
  }
  try {
    // Before PGlite opens it (a folder from an older version), and after (what a first start's initdb wrote).
    const changed = await makePrivate(dir)
    if (changed > 0) onPrivate(changed)
    const client = await PGlite.create({ dataDir: join(dir, 'pgdata'), extensions: PGLITE_EXTENSIONS })
    await makePrivate(dir)
    return wrapPglite(client, dir, release)
  } catch (error) {
    await release()
    throw error
  }
}

function wrapPglite(client: PGlite, dataDir: string | null, release: () => Promise<void>): Database {
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(client) })
  const statements: Pick<Database, 'query' | 'transaction'> = {
    async query<Row>(_name: string, sql: string, params: unknown[]) {
      return (await client.query<Row>(sql, params)).rows
    },
    transaction: (work) =>
      client.transaction((tx) =>
        work(async <Row>(_name: string, sql: string, params: unknown[]) => (await tx.query<Row>(sql, params)).rows),
      ),
  }
  return {
    kind: 'pglite',
    dataDir,
    prisma,
    poolStats: () => null,
    ...statements,
    background: statements,
    listen: (channel, onChange) => listenPglite(client, channel, onChange),
    withSession: (work) => work(pgliteSession(client)),
    async close() {
      await prisma.$disconnect()
      await client.close()
      await release()
    },
  }
}
