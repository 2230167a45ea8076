// npm run engines:check: every package the lockfile installs declares a Node range that holds the oldest Node
// this project supports (package.json's engines) and the Node running the check; npm only warns (EBADENGINE),
// this fails. CI runs it on the machine's Node 20 and on the Node of .node-version (24), the one that ships.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import semver from 'semver'

/**
 * Packages allowed to refuse the oldest supported major (Node 20, past its end of life), and why they cannot be
 * pinned to a version that accepts it. On any newer major nothing is excused, and an exception that no longer
 * excuses anything fails the check. README.md lists the same names as npm's expected warnings on Node 20
 * (test/node-versions.test.ts).
 */
export const EXCEPTIONS: Record<string, string> = {
  '@prisma/streams-local':
    'every published version wants Node 22; prisma 7.10.0 (pinned with @prisma/client) depends on it for ' +
    '`prisma dev` only, which this project never runs',
}

interface Locked {
  version?: string
  engines?: { node?: string } | string[]
}

export interface Lockfile {
  packages: Record<string, Locked>
}

export interface EnginesReport {
  /** `name@version: node range (not versions)` for each package that refuses a Node it must accept. */
  mismatches: string[]
  /** Exceptions that excused nothing: drop them (and their line in README.md). */
  stale: string[]
}

/** Checks each locked package's engines.node against `nodes`; EXCEPTIONS excuse refusals of `oldest`'s major only. */
export function checkEngines(lock: Lockfile, oldest: string, nodes: string[]): EnginesReport {
  const excusedMajor = semver.major(oldest)
  const mismatches: string[] = []
  const used = new Set<string>()
  for (const [path, locked] of Object.entries(lock.packages)) {
    const range = Array.isArray(locked.engines) ? undefined : locked.engines?.node
    if (path === '' || range === undefined) continue
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
    let refused = nodes.filter((node) => !semver.satisfies(node, range))
    if (name in EXCEPTIONS) {
      const excused = refused.filter((node) => semver.major(node) === excusedMajor)
      if (excused.length > 0) used.add(name)
      refused = refused.filter((node) => !excused.includes(node))
    }
    if (refused.length > 0) mismatches.push(`${name}@${locked.version}: node ${range} (not ${refused.join(', ')})`)
  }
  return { mismatches, stale: Object.keys(EXCEPTIONS).filter((name) => !used.has(name)) }
}

/** The oldest Node package.json's engines accept. */
export function oldestSupported(): string {
  const project = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }
  const oldest = semver.minVersion(project.engines.node)?.version
  if (!oldest) throw new Error(`package.json engines.node is not a range: ${project.engines.node}`)
  return oldest
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const oldest = oldestSupported()
  const nodes = [...new Set([oldest, process.versions.node])]
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as Lockfile
  const { mismatches, stale } = checkEngines(lock, oldest, nodes)
  if (mismatches.length > 0) {
    console.error(`Packages whose engines exclude Node ${nodes.join(' or ')}:\n  ${mismatches.join('\n  ')}`)
  }
  if (stale.length > 0) console.error(`Exceptions that excuse nothing (remove them here and in README.md): ${stale}`)
  if (mismatches.length > 0 || stale.length > 0) process.exit(1)
  console.log(
    `Every locked package accepts Node ${nodes.join(' and ')}, except on Node ${semver.major(oldest)}: ` +
      `${Object.keys(EXCEPTIONS).join(', ')}.`,
  )
}
