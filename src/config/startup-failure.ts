// Why the server could not start, as the one line an operator acts on (no stack trace): the configuration, the
// data folder, PostgreSQL (unreachable, credentials, missing database, schema not migrated), a port in use.
import { type Config, withoutPassword } from './config.js'
import { OperatorError } from './operator-error.js'

interface Failure {
  code?: unknown
  message?: unknown
  cause?: unknown
  port?: unknown
  address?: unknown
  syscall?: unknown
  hostname?: unknown
  path?: unknown
}

/** PostgreSQL's and Node's codes, wherever the driver or Prisma put them in the error chain. */
function codesOf(error: unknown, depth = 0): string[] {
  if (typeof error !== 'object' || error === null || depth > 4) return []
  const failure = error as Failure
  const own = typeof failure.code === 'string' ? [failure.code] : []
  return [...own, ...codesOf(failure.cause, depth + 1)]
}

function postgresAt(config: Config | undefined): string {
  if (!config?.DATABASE_URL) return 'PostgreSQL'
  try {
    const url = new URL(config.DATABASE_URL)
    return `PostgreSQL at ${url.hostname}:${url.port || 5432} (database "${url.pathname.slice(1) || url.username}", user "${url.username}")`
  } catch {
    return `PostgreSQL at ${withoutPassword(config.DATABASE_URL)}`
  }
}

/** Failures of the API server's own listen (its address or port), told apart from the database's. */
function describeListen(code: string, error: Failure, config: Config | undefined): string | undefined {
  if (error.syscall === 'getaddrinfo' && error.hostname === config?.HOST) {
    return `HOST ${config?.HOST} cannot be resolved (${code}): set HOST to an address of this machine.`
  }
  if (error.syscall !== 'listen') return undefined
  const where = `${String(error.address ?? config?.HOST)}:${String(error.port ?? config?.PORT)}`
  if (code === 'EADDRINUSE') return `${where} is already in use: stop the other process, or set PORT to a free port.`
  if (code === 'EACCES') return `this user may not listen on ${where}: set PORT to 1024 or above.`
  return `cannot listen on ${where} (${code}): check HOST and PORT.`
}

function describeCode(code: string, error: Failure, config: Config | undefined): string | undefined {
  const postgres = postgresAt(config)
  const listen = describeListen(code, error, config)
  if (listen) return listen
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied${error.path ? ` on ${String(error.path)}` : ''}: run as a user that may use it.`
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EHOSTUNREACH':
    case 'ETIMEDOUT':
      return `cannot reach ${postgres} (${code}): is it running, and is DATABASE_URL right?`
    case '28P01':
    case '28000':
      return `${postgres} refused the credentials: check the user and password in DATABASE_URL.`
    case '3D000':
      return `${postgres}: the database does not exist. Create it (createdb), or fix DATABASE_URL.`
  }
  return undefined
}

export function describeStartupFailure(error: unknown, config: Config | undefined): string {
  if (error instanceof OperatorError) return error.message
  const failure = (typeof error === 'object' && error !== null ? error : {}) as Failure
  for (const code of codesOf(error)) {
    const described = describeCode(code, failure, config)
    if (described) return described
  }
  const message = String(failure.message ?? error)
  if (/timeout exceeded when trying to connect|Connection terminated/i.test(message)) {
    return `cannot reach ${postgresAt(config)} in time: is it running, and is DATABASE_URL right?`
  }
  // Only the first line: messages of some libraries go on with internals.
  return message.split('\n', 1)[0] ?? 'unknown error'
}
