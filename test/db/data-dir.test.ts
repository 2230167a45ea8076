// The embedded database's folder: private to the service's user whatever PGlite and the umask do, and locked by
// a file naming its owner, so that a dead owner is taken over at once and a live one is not.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { lockDataDir, makePrivate } from '../../src/db/data-dir.ts'
import { openDatabase } from '../../src/db/database.ts'

async function temporaryDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rubrica-data-dir-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** Every mode below `dir` (itself included), counted by mode. */
async function modes(dir: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  const visit = async (path: string): Promise<void> => {
    const info = await stat(path)
    const key = `${info.isDirectory() ? 'd' : 'f'}${(info.mode & 0o777).toString(8)}`
    counts[key] = (counts[key] ?? 0) + 1
    if (info.isDirectory()) for (const name of await readdir(path)) await visit(join(path, name))
  }
  await visit(dir)
  return counts
}

const LOCKED = { message: /in use by another rubrica process/ }

const startTime = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[19] ?? null
}

t.test('a fresh DATA_DIR made under umask 022 is private, files and folders', async (t) => {
  const dir = join(await temporaryDir(t), 'data')
  const previous = process.umask(0o022)
  t.teardown(() => process.umask(previous))
  const database = await openDatabase({ dataDir: dir })
  const open = await modes(dir)
  t.same(Object.keys(open).sort(), ['d700', 'f600'], `once open: ${JSON.stringify(open)}`)
  t.ok((open.f600 ?? 0) > 100, 'PGlite wrote its files')
  await database.withSession((session) => session.exec('CREATE TABLE probe (x int); INSERT INTO probe VALUES (1)'))
  t.equal((await stat(dir)).mode & 0o777, 0o700, 'files written while open are behind a private folder')
  await database.close()
  t.same(Object.keys(await modes(dir)).sort(), ['d700', 'f600'], 'after close, files written meanwhile included')
})

t.test('an older folder with wide modes is made private at open, and said so', async (t) => {
  const dir = await temporaryDir(t)
  await mkdir(join(dir, 'pgdata', 'base'), { recursive: true })
  await writeFile(join(dir, 'pgdata', 'base', 'table'), 'rows')
  await writeFile(join(dir, 'pgdata', 'PG_VERSION'), '17')
  await chmod(join(dir, 'pgdata', 'base', 'table'), 0o666)
  await chmod(join(dir, 'pgdata'), 0o755)
  await chmod(dir, 0o777)
  t.equal(await makePrivate(dir), 5, 'two folders and a file too wide, one file already private… and the root')
  t.same(await modes(dir), { d700: 3, f600: 2 })
  t.equal(await makePrivate(dir), 0, 'nothing left to change')
})

t.test('the lock: a live owner keeps it, a dead one is taken over at once', async (t) => {
  const dir = await temporaryDir(t)
  const lockFile = join(dir, 'rubrica.lock')
  const owner = (pid: number, host = hostname(), started: string | null = startTime(pid)) =>
    writeFile(lockFile, JSON.stringify({ pid, host, started }))

  const sleeper = spawn('sleep', ['30'])
  t.teardown(() => sleeper.kill('SIGKILL'))
  const live = sleeper.pid ?? 0
  await owner(live)
  await t.rejects(lockDataDir(dir), LOCKED, 'a live process on this host keeps it')

  await owner(live, hostname(), '1')
  const release = await lockDataDir(dir)
  t.pass('a live pid that started at another time is another process: the owner is dead')
  t.same(JSON.parse(readFileSync(lockFile, 'utf8')).pid, process.pid, 'the lock now names this process')
  await t.rejects(lockDataDir(dir), LOCKED, 'held by this process, as a second opener sees it')
  await release()

  const dead = spawn('true')
  await new Promise((resolve) => dead.once('exit', resolve))
  await owner(dead.pid ?? 0, hostname(), null)
  await (await lockDataDir(dir))()
  t.pass('an exited process is taken over')

  // A process killed while its parent does not reap it stays in /proc as a zombie: it holds nothing.
  const parent = spawn('bash', ['-c', 'sleep 30 & echo $!; exec sleep 60'])
  t.teardown(() => parent.kill('SIGKILL'))
  const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d) => resolve(String(d)))))
  const zombieStarted = startTime(zombie)
  // Until bash has become `sleep 60` it would reap the child itself and no zombie would remain.
  const execed = () => readFileSync(`/proc/${parent.pid}/cmdline`, 'utf8') === 'sleep\u000060\u0000'
  while (!execed()) await new Promise((r) => setTimeout(r, 10))
  process.kill(zombie, 'SIGKILL')
  while (!/\) Z /.test(readFileSync(`/proc/${zombie}/stat`, 'utf8'))) await new Promise((r) => setTimeout(r, 20))
  await owner(zombie, hostname(), zombieStarted)
  await (await lockDataDir(dir))()
  t.pass('a killed owner not yet reaped (a zombie) is taken over')

  await owner(process.pid, hostname(), 'restarted container')
  await (await lockDataDir(dir))()
  t.pass('our own pid (a container restarted as pid 1 again) is taken over')

  await owner(4242, 'another-host', null)
  await t.rejects(lockDataDir(dir), LOCKED, "another host's fresh lock is kept")
  const old = new Date(Date.now() - 60_000)
  await utimes(lockFile, old, old)
  await (await lockDataDir(dir))()
  t.pass("another host's lock without a heartbeat for a minute is taken over")

  await writeFile(lockFile, '{"pid":')
  await t.rejects(lockDataDir(dir), LOCKED, 'a lock being written right now is kept')
  await utimes(lockFile, old, old)
  await (await lockDataDir(dir))()
  t.pass('a half-written lock left by a crash is taken over once old')
})
