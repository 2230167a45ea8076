// The Node versions rubrica names, kept in step: .node-version is the one place naming the Node that ships (CI's
// second Node and the container check read it); the Dockerfile's default image cannot read a file, the README says
// what CI tests, and its list of npm's expected EBADENGINE warnings is scripts/engines-check.ts's EXCEPTIONS.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import semver from 'semver'
import t from 'tap'
import { checkEngines, EXCEPTIONS, type Lockfile, oldestSupported } from '../scripts/engines-check.ts'

const shipped = readFileSync('.node-version', 'utf8')
const shippedMajor = semver.major(shipped.trim())
const readme = readFileSync('README.md', 'utf8')

t.test('.node-version holds one exact version, of an LTS (even) major', async (t) => {
  t.match(shipped, /^\d+\.\d+\.\d+\n$/, 'x.y.z and a newline, nothing else')
  t.equal(shippedMajor % 2, 0, 'odd majors never become LTS')
})

t.test("the Dockerfile's default base image has .node-version's major, and every stage uses it", async (t) => {
  const dockerfile = readFileSync('Dockerfile', 'utf8')
  const image = /^ARG NODE_IMAGE=node:(\d+)[-@:]/m.exec(dockerfile)
  t.ok(image, 'ARG NODE_IMAGE=node:<major>-… before the first FROM')
  t.equal(Number(image?.[1]), shippedMajor, `node:${shippedMajor}-…, as .node-version (${shipped.trim()}) says`)
  const froms = dockerfile.match(/^FROM \S+/gm) ?? []
  t.ok(froms.length > 0, 'the Dockerfile has stages')
  t.same(
    froms.filter((from) => !/^FROM \$\{NODE_IMAGE\}$/.test(from)),
    [],
    'no stage names another image',
  )
})

t.test("the README's requirements name the Nodes CI tests", async (t) => {
  const requirements = readme.split('\n## ')[0] ?? ''
  t.match(requirements, `Node.js ${shippedMajor} LTS`, 'the shipped major, from .node-version')
  const oldest = oldestSupported()
  t.match(requirements, `${semver.major(oldest)}.${semver.minor(oldest)} or newer`, "package.json's engines")
})

/** The backquoted names of the README's first bullet list after the words `EBADENGINE`. */
function readmeExpectedWarnings(): string[] {
  const after = readme.slice(readme.indexOf('`EBADENGINE`')).split('\n')
  const first = after.findIndex((line) => line.startsWith('- '))
  const names: string[] = []
  for (const line of first < 0 ? [] : after.slice(first)) {
    const item = /^- `([^`]+)`/.exec(line)
    if (!item?.[1]) break
    names.push(item[1])
  }
  return names
}

t.test("the README's expected EBADENGINE warnings are engines-check's exceptions", async (t) => {
  const listed = readmeExpectedWarnings()
  t.ok(listed.length > 0, 'the README has the list')
  t.same(listed.toSorted(), Object.keys(EXCEPTIONS).toSorted())
})

t.test('the lockfile: on the oldest Node only the exceptions refuse, on the shipped Node nothing does', async (t) => {
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as Lockfile
  const oldest = oldestSupported()
  t.same(checkEngines(lock, oldest, [oldest, shipped.trim()]), { mismatches: [], stale: [] })
  // An exception excuses the oldest major only: the same package refusing the shipped Node is a mismatch.
  const [excepted] = Object.keys(EXCEPTIONS)
  const refusesAll: Lockfile = {
    packages: { '': {}, [`node_modules/${excepted}`]: { version: '1.0.0', engines: { node: '<1' } } },
  }
  t.same(checkEngines(refusesAll, oldest, [oldest, shipped.trim()]).mismatches, [
    `${excepted}@1.0.0: node <1 (not ${shipped.trim()})`,
  ])
  // An exception that excuses nothing is reported, so the README's list cannot keep a warning npm no longer gives.
  const acceptsAll: Lockfile = {
    packages: { [`node_modules/${excepted}`]: { version: '2.0.0', engines: { node: '*' } } },
  }
  t.same(checkEngines(acceptsAll, oldest, [oldest]).stale, [excepted])
})

// CI runs this suite on two Nodes by putting one first on PATH: npm, tap and the children spawned by name start
// from PATH, so this process runs on that Node only when the wiring holds.
t.test('this test runs on the `node` first on PATH', async (t) => {
  const env = { ...process.env, NODE_OPTIONS: '' } // without tap's instrumentation: only the version is asked
  const onPath = execFileSync('node', ['-p', 'process.version'], { encoding: 'utf8', env }).trim()
  t.equal(process.version, onPath)
})
