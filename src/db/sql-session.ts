import type { PGlite } from '@electric-sql/pglite'
import type pg from 'pg'

/**
 * One database session (a single connection) for work that must stay on one connection: migrations hold a
 * session-level advisory lock. Implemented over a `pg` client and over PGlite.
 */
export interface SqlSession {
  query<Row>(sql: string, params?: unknown[]): Promise<Row[]>
  /** Runs a script of several statements. Errors are raised, never swallowed. */
  exec(script: string): Promise<void>
}

export function pgSession(client: pg.ClientBase): SqlSession {
  return {
    async query<Row>(sql: string, params: unknown[] = []) {
      const result = await client.query(sql, params)
      return result.rows as Row[]
    },
    async exec(script: string) {
      await client.query(script)
    },
  }
}

export function pgliteSession(client: PGlite): SqlSession {
  return {
    async query<Row>(sql: string, params: unknown[] = []) {
      const result = await client.query<Row>(sql, params)
      return result.rows
    },
    async exec(script: string) {
      await client.exec(script)
    },
  }
}
