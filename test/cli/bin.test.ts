// The real `rubrica` command in a child process, end to end: build check, configuration from the environment,
// migrations of the embedded database, JSON on stdout, and the message when the embedded database is locked.
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { openDatabase } from '../../src/db/database.ts'
import { createTestDatabase } from '../database.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
// The first run may build dist/ (about 15 s) and initialise an embedded database (several seconds).
t.setTimeout(180_000)

interface Run {
  code: number
  stdout: string
  stderr: string
}

function node(script: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  // Run as an operator runs it: no database settings or tap instrumentation inherited from this process.
  const inherited = { ...process.env }
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'NODE_OPTIONS']) delete inherited[name]
  return new Promise((resolve) => {
    // tap instruments child processes even so; coverage of dist/ through source maps would blur the report.
    const options = { cwd: root, env: { ...inherited, _TAPJS_PROCESSINFO_COVERAGE_: '0', ...env } }
    // This process's Node, not whichever `node` comes first on PATH: CI runs the suite on two Nodes.
    execFile(process.execPath, [script, ...args], options, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })
    })
  })
}

const rubrica = (args: string[], env: Record<string, string>) => node('bin/rubrica.js', args, env)

function jsonOf(t: Test, run: Run): Record<string, unknown> {
  t.equal(run.code, 0, `exit code 0 (stderr: ${run.stderr})`)
  t.equal(run.stdout.split('\n').length, 2, 'exactly one line on stdout')
  return JSON.parse(run.stdout)
}

// The command builds dist/ itself when the sources changed; building first keeps a build failure apart from the
// command's own failures, and the build's output out of the runs checked below.
t.test('dist/ is built (or up to date)', async (t) => {
  const build = await node('scripts/build-if-needed.js', [])
  t.equal(build.code, 0, `build-if-needed succeeds (stderr: ${build.stderr})`)
  t.equal(build.stdout, '', 'the build writes nothing on stdout')
})

t.test('embedded database in DATA_DIR', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rubrica-bin-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))

  const create = ['tenant', 'create', '--name', 'Bin S.r.l.', '--json']
  const created = jsonOf(t, await rubrica(create, { DATA_DIR: dataDir }))
  t.match(created, { name: 'Bin S.r.l.', status: 'active' })

  // This process now holds the directory, as a running server would; what the command wrote is there.
  const holder = await openDatabase({ dataDir })
  t.teardown(() => holder.close())
  t.match(await holder.prisma.tenant.findMany(), [{ id: created.id, name: 'Bin S.r.l.' }], 'migrated and written')

  const locked = await rubrica(['tenant', 'list', '--json'], { DATA_DIR: dataDir })
  t.equal(locked.code, 1)
  t.equal(locked.stdout, '', 'nothing on stdout')
  t.match(locked.stderr, `error: The embedded database in ${dataDir} is in use by another rubrica process`)
  t.match(locked.stderr, /use PostgreSQL \(DATABASE_URL\)/)
})

if (process.env.TEST_DATABASE_URL) {
  t.test('PostgreSQL from DATABASE_URL', async (t) => {
    const database = await createTestDatabase()
    t.teardown(() => database.close())
    const env = { DATABASE_URL: database.url ?? '' }
    const deployed = jsonOf(t, await rubrica(['db', 'deploy', '--json'], env))
    t.same(deployed.applied, [], 'already migrated by the test helper')
    const created = jsonOf(t, await rubrica(['tenant', 'create', '--name', 'Pg S.p.A.', '--json'], env))
    const listed = jsonOf(t, await rubrica(['tenant', 'list', '--json'], env))
    t.match(listed, { tenants: [{ id: created.id, name: 'Pg S.p.A.' }] })
    t.equal(await database.database.prisma.tenant.count(), 1, 'written to that database')
  })
}
