// The embedded database's directory: private to the service's user, and held by one process at a time.
// PGlite writes its files with mode 0666 whatever the umask, so the modes are set here: 0700 folders and 0600
// files at every open and close (the folder's own 0700 already keeps everyone else out in between).
// The lock is a file naming its owner's process. A live owner keeps the directory; a dead one (kill -9, a crash)
// is taken over at once, so a container restarted by its restart policy starts without waiting.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { chmod, mkdir, open, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises'
import { hostname } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { OperatorError } from '../config/operator-error.js'

export class DatabaseLockedError extends OperatorError {}

/** A DATA_DIR that cannot be used: not a folder, not writable, on a read-only file system. */
export class DataDirError extends OperatorError {}

const LOCK_FILE = 'rubrica.lock'
/** How often a holder refreshes its lock, and after how long a lock of another host counts as abandoned. */
const HEARTBEAT_MS = 5_000
const ABANDONED_MS = 15_000

interface LockOwner {
  pid: number
  host: string
  /** The owner process's start time (Linux), so that a reused pid is not taken for the owner. */
  started: string | null
}

/** Sets 0700 on folders and 0600 on files below `dir`; returns how many had other modes. */
export async function makePrivate(dir: string): Promise<number> {
  let changed = 0
  const visit = async (path: string, isDirectory: boolean): Promise<void> => {
    const wanted = isDirectory ? 0o700 : 0o600
    if (((await stat(path)).mode & 0o777) !== wanted) {
      await chmod(path, wanted)
      changed++
    }
    if (!isDirectory) return
    for (const entry of await readdir(path, { withFileTypes: true })) {
      if (entry.isDirectory() || entry.isFile()) await visit(join(path, entry.name), entry.isDirectory())
    }
  }
  await visit(dir, true)
  return changed
}

/**
 * Creates the missing folders of `dir`, one level at a time from the nearest existing one (Node's recursive
 * mkdir loops forever under /proc), each private to the service's user.
 */
async function makeFolders(dir: string): Promise<void> {
  const missing: string[] = []
  for (let path = resolve(dir); ; path = dirname(path)) {
    const exists = await stat(path).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false
        throw error
      },
    )
    if (exists || dirname(path) === path) break
    missing.unshift(path)
  }
  for (const path of missing) await mkdir(path, { mode: 0o700 })
}

/** Creates the folder (private) when missing, and refuses one that cannot hold a database. */
export async function prepareDataDir(dir: string): Promise<void> {
  try {
    await makeFolders(dir)
    const probe = join(dir, `.write-test-${randomBytes(4).toString('hex')}`)
    await (await open(probe, 'wx', 0o600)).close()
    await rm(probe)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const reason =
      code === 'ENOTDIR' || code === 'EEXIST'
        ? 'it is not a folder'
        : code === 'EROFS'
          ? 'it is on a read-only file system'
          : code === 'EACCES' || code === 'EPERM'
            ? 'this user may not write to it'
            : code === 'ENOENT'
              ? 'a folder on its path cannot be made there (a special or read-only file system?)'
              : String((error as Error).message)
    throw new DataDirError(`DATA_DIR ${dir} cannot hold the embedded database: ${reason}.`)
  }
}

/** Fields 3 and on of /proc/<pid>/stat (after the command name, which may hold spaces), where /proc exists. */
function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return null
  }
}

/** The start time of process `pid` in clock ticks since boot (field 22), where /proc tells it. */
function startTimeOf(pid: number): string | null {
  return procStat(pid)?.[19] ?? null
}

/** A killed process stays a zombie until its parent reaps it: it holds nothing any more. */
const isZombie = (pid: number) => ['Z', 'X'].includes(procStat(pid)?.[0] ?? '')

function isAlive(owner: LockOwner): boolean {
  // In a container the restarted service often has the dead one's pid (1): that owner is an earlier process,
  // unless it also started when this one did.
  if (owner.pid === process.pid) return owner.started !== null && owner.started === startTimeOf(process.pid)
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  if (isZombie(owner.pid)) return false
  const started = startTimeOf(owner.pid)
  return owner.started === null || started === null || started === owner.started
}

async function isAbandoned(path: string): Promise<boolean> {
  let owner: LockOwner
  try {
    owner = JSON.parse(await readFile(path, 'utf8')) as LockOwner
  } catch {
    // Unreadable: written halfway by an owner that died at that moment, or being replaced right now.
    return Date.now() - (await stat(path)).mtimeMs > ABANDONED_MS
  }
  if (owner.host === hostname()) return !isAlive(owner)
  // Another host (a shared volume): its processes cannot be asked, only its heartbeat can stop.
  return Date.now() - (await stat(path)).mtimeMs > ABANDONED_MS
}

/** Takes the directory's lock, or throws DatabaseLockedError; resolves to the function that releases it. */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE)
  const owner: LockOwner = { pid: process.pid, host: hostname(), started: startTimeOf(process.pid) }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const file = await open(path, 'wx', 0o600)
      await file.writeFile(JSON.stringify(owner))
      await file.close()
      const heartbeat = setInterval(() => {
        const now = new Date()
        utimes(path, now, now).catch(() => {})
      }, HEARTBEAT_MS).unref()
      return async () => {
        clearInterval(heartbeat)
        await rm(path, { force: true })
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    if (!(await isAbandoned(path).catch(() => false))) break
    // Moved aside under a unique name: of two processes taking over at once, only one rename succeeds.
    const aside = `${path}.abandoned-${process.pid}-${randomBytes(4).toString('hex')}`
    await rename(path, aside).then(
      () => rm(aside, { force: true }),
      () => {},
    )
  }
  throw new DatabaseLockedError(
    `The embedded database in ${dir} is in use by another rubrica process (the server?). Stop it first, or use ` +
      'PostgreSQL (DATABASE_URL) to run the server and the CLI at the same time.',
  )
}
