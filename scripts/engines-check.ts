// npm run engines:check: every package the lockfile installs declares a Node range that holds the oldest Node
// this project supports (package.json's engines) and the Node running the check; npm only warns (EBADENGINE),
// this fails. A package that cannot be pinned to a matching version is listed below with the reason.
import { readFileSync } from 'node:fs'
import semver from 'semver'

/** Packages allowed to declare a newer Node, and why they cannot be pinned to one that does not. */
const EXCEPTIONS: Record<string, string> = {
  '@prisma/streams-local':
    'every published version wants Node 22; prisma 7.10.0 (pinned with @prisma/client) depends on it for ' +
    '`prisma dev` only, which this project never runs',
}

interface Locked {
  version?: string
  engines?: { node?: string } | string[]
}

const project = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }
const oldest = semver.minVersion(project.engines.node)?.version
if (!oldest) throw new Error(`package.json engines.node is not a range: ${project.engines.node}`)
const nodes = [oldest, process.versions.node]

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, Locked> }
const mismatches: string[] = []
for (const [path, locked] of Object.entries(lock.packages)) {
  const range = Array.isArray(locked.engines) ? undefined : locked.engines?.node
  if (path === '' || range === undefined) continue
  const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
  if (name in EXCEPTIONS) continue
  const refused = nodes.filter((node) => !semver.satisfies(node, range))
  if (refused.length > 0) mismatches.push(`${name}@${locked.version}: node ${range} (not ${refused.join(', ')})`)
}
if (mismatches.length > 0) {
  console.error(`Packages whose engines exclude Node ${nodes.join(' or ')}:\n  ${mismatches.join('\n  ')}`)
  process.exit(1)
}
console.log(
  `Every locked package accepts Node ${nodes.join(' and ')} (exceptions: ${Object.keys(EXCEPTIONS).join(', ')}).`,
)
