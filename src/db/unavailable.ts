// Tells "the database cannot be reached right now" (answered with 503, retried by clients) from every other
// database error (a bug: 500). The signs differ by layer: Prisma codes, driver-adapter kinds, PostgreSQL
// SQLSTATEs, Node socket errors and node-postgres' own messages; the error chain is walked through all of them.

const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024'])
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections'])
/**
 * 08: connection exception; 57P01-57P03: shutting down or starting up; 53300: too many connections; 3D000: the
 * database is gone (dropped); 55000: not accepting connections; 28000/28P01: the credentials no longer work.
 */
const SQLSTATE = /^(08...|57P0[123]|53300|3D000|55000|28000|28P01)$/
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND'])
const PG_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/

function fields(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null
}

/**
 * Whether `test` holds for `error` or an error it wraps: its `cause`, or Prisma's driver-adapter error in `meta`
 * (four levels down at most).
 */
export function someInChain(error: unknown, test: (e: Record<string, unknown>) => boolean, depth = 0): boolean {
  const e = fields(error)
  if (!e || depth > 4) return false
  if (test(e)) return true
  const meta = fields(e.meta)
  return [e.cause, meta?.driverAdapterError].some((inner) => someInChain(inner, test, depth + 1))
}

export function isDatabaseUnavailable(error: unknown): boolean {
  return someInChain(error, (e) => {
    const code = typeof e.code === 'string' ? e.code : ''
    if (PRISMA_CODES.has(code) || SQLSTATE.test(code) || SOCKET_CODES.has(code)) return true
    if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true
    if (e.name === 'PrismaClientInitializationError') return true
    return typeof e.message === 'string' && PG_MESSAGES.test(e.message)
  })
}
