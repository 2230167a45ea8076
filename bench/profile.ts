// Summarises V8 .cpuprofile files (node --cpu-prof): self time by function, time by package both as self time
// and as "on the stack" (a sample counts for every package with a frame anywhere in its stack), and a comparison
// of two profiles per request (rubrica against the baseline under the same load), so that the difference in
// CPU per request can be pinned on packages.
//
//   tsx bench/profile.ts <file.cpuprofile> [top] [fromUs toUs]   (window on V8's clock, as bench/run.ts prints it)
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}

interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}

export interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface Window {
  fromUs: number
  toUs: number
}

export interface ProfileSummary {
  /** Milliseconds of samples, idle excluded. */
  busyMs: number
  idleMs: number
  functions: { name: string; where: string; package: string; selfMs: number; share: number }[]
  packages: { package: string; selfMs: number; selfShare: number; stackMs: number; stackShare: number }[]
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)'])

/**
 * What a frame belongs to: an npm package, a file of rubrica's dist/, node's JavaScript internals, or a native
 * function (kept by name: "writev" and "utf8Slice" say more than "native").
 */
export function packageOf(frame: CallFrame): string {
  const url = frame.url
  if (url === '') return SPECIAL.has(frame.functionName) ? frame.functionName : `(native) ${frame.functionName}`
  if (url.startsWith('node:')) return 'node (core JS)'
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (match?.[1]) return match[1]
  if (/\/dist\/generated\//.test(url)) return 'rubrica dist/generated (Prisma client)'
  if (/\/dist\//.test(url)) return `rubrica ${url.replace(/^.*\/dist\//, 'dist/')}`
  if (/\/bench\//.test(url)) return `baseline ${url.replace(/^.*\/bench\//, 'bench/')}`
  return url.replace(/^file:\/\//, '')
}

function where(frame: CallFrame): string {
  if (frame.url === '') return ''
  const path = frame.url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, '')
  return `${path.replace(/^.*\/dist\//, 'dist/').replace(/^.*\/bench\//, 'bench/')}:${frame.lineNumber + 1}`
}

/** The call tree of a profile: nodes by id, and each node's parent. */
interface CallTree {
  byId: Map<number, ProfileNode>
  parent: Map<number, number>
}

/** Time of the samples taken within the window, in microseconds. */
interface SampleTimes {
  /** By node id: the sample's leaf frame. */
  selfUs: Map<number, number>
  /** By package, counted once per sample whatever the depth. */
  stackUs: Map<string, number>
  idleUs: number
  busyUs: number
}

/**
 * `window` keeps only the samples taken between two instants of the monotonic clock that V8 stamps samples with
 * (process.hrtime in microseconds), e.g. the measured load without the start-up and the warm-up.
 */
export function summariseProfile(profile: CpuProfile, top = 25, window?: Window): ProfileSummary {
  const tree = callTree(profile)
  const { selfUs, stackUs, idleUs, busyUs } = sampleTimes(profile, tree, window)
  const { functions, packageSelf } = selfTimeByFunction(tree, selfUs)
  const share = (us: number) => (busyUs > 0 ? us / busyUs : 0)
  return {
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    functions: [...functions.values()]
      .sort((a, b) => b.selfUs - a.selfUs)
      .slice(0, top)
      .map((f) => ({
        name: f.name,
        where: f.where,
        package: f.package,
        selfMs: f.selfUs / 1000,
        share: share(f.selfUs),
      })),
    packages: [...new Set([...packageSelf.keys(), ...stackUs.keys()])]
      .map((pkg) => ({
        package: pkg,
        selfMs: (packageSelf.get(pkg) ?? 0) / 1000,
        selfShare: share(packageSelf.get(pkg) ?? 0),
        stackMs: (stackUs.get(pkg) ?? 0) / 1000,
        stackShare: share(stackUs.get(pkg) ?? 0),
      }))
      .filter((p) => p.package !== '(root)')
      .sort((a, b) => b.selfMs - a.selfMs),
  }
}

function callTree(profile: CpuProfile): CallTree {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  return { byId, parent }
}

function sampleTimes(profile: CpuProfile, tree: CallTree, window?: Window): SampleTimes {
  // Sample i lasts until the next sample's timestamp (the last one gets the mean interval).
  const mean = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length)
  const times: SampleTimes = { selfUs: new Map(), stackUs: new Map(), idleUs: 0, busyUs: 0 }
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0
    if (window && (at < window.fromUs || at > window.toUs)) return
    const duration = profile.timeDeltas[i + 1] ?? mean
    const node = tree.byId.get(id)
    if (!node) return
    if (node.callFrame.functionName === '(idle)') {
      times.idleUs += duration
      return
    }
    times.busyUs += duration
    times.selfUs.set(id, (times.selfUs.get(id) ?? 0) + duration)
    for (const pkg of packagesOnStack(tree, id)) times.stackUs.set(pkg, (times.stackUs.get(pkg) ?? 0) + duration)
  })
  return times
}

/** The packages with a frame anywhere from node `id` up to the root, each once. */
function packagesOnStack(tree: CallTree, id: number): Set<string> {
  const seen = new Set<string>()
  for (let up: number | undefined = id; up !== undefined; up = tree.parent.get(up)) {
    const frame = tree.byId.get(up)?.callFrame
    if (frame) seen.add(packageOf(frame))
  }
  return seen
}

/** Self time summed by function (name and position) and by package. */
function selfTimeByFunction(tree: CallTree, selfUs: Map<number, number>) {
  const functions = new Map<string, { name: string; where: string; package: string; selfUs: number }>()
  const packageSelf = new Map<string, number>()
  for (const [id, us] of selfUs) {
    const frame = tree.byId.get(id)?.callFrame
    if (!frame) continue
    const pkg = packageOf(frame)
    packageSelf.set(pkg, (packageSelf.get(pkg) ?? 0) + us)
    const key = `${frame.functionName}|${frame.url}|${frame.lineNumber}|${frame.columnNumber}`
    const entry = functions.get(key) ?? {
      name: frame.functionName || '(anonymous)',
      where: where(frame),
      package: pkg,
      selfUs: 0,
    }
    entry.selfUs += us
    functions.set(key, entry)
  }
  return { functions, packageSelf }
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`
/** Milliseconds over `requests` requests, as microseconds per request. */
const perRequest = (totalMs: number, requests: number) => (requests > 0 ? ((totalMs * 1000) / requests).toFixed(1) : '')

/** Top functions and packages; with `requests`, also microseconds of CPU per request. */
export function formatProfile(summary: ProfileSummary, requests = 0, packages = 20): string {
  const usPerReq = requests > 0 ? `, ${perRequest(summary.busyMs, requests)} µs of CPU per request` : ''
  const lines = [
    `busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms${usPerReq} (shares are of busy time)`,
    '',
    '| self | function | where | package |',
    '| ---: | --- | --- | --- |',
    ...summary.functions.map((f) => `| ${pct(f.share)} | ${f.name} | ${f.where} | ${f.package} |`),
    '',
    `| package | self | on the stack |${requests > 0 ? ' self µs/req |' : ''}`,
    `| --- | ---: | ---: |${requests > 0 ? ' ---: |' : ''}`,
    ...summary.packages
      .slice(0, packages)
      .map(
        (p) =>
          `| ${p.package} | ${pct(p.selfShare)} | ${pct(p.stackShare)} |` +
          (requests > 0 ? ` ${perRequest(p.selfMs, requests)} |` : ''),
      ),
  ]
  return `${lines.join('\n')}\n`
}

/**
 * Self CPU per request by package for two profiles of the same load (e.g. rubrica and the baseline), largest
 * differences first: where the first one spends the CPU the second one does not.
 */
export function formatComparison(
  names: [string, string],
  a: { summary: ProfileSummary; requests: number },
  b: { summary: ProfileSummary; requests: number },
  rows = 25,
): string {
  const us = (summary: ProfileSummary, requests: number, pkg: string) =>
    requests > 0 ? ((summary.packages.find((p) => p.package === pkg)?.selfMs ?? 0) * 1000) / requests : 0
  const packages = [...new Set([...a.summary.packages, ...b.summary.packages].map((p) => p.package))]
    .map((pkg) => ({ pkg, a: us(a.summary, a.requests, pkg), b: us(b.summary, b.requests, pkg) }))
    .sort((x, y) => Math.abs(y.a - y.b) - Math.abs(x.a - x.b))
    .slice(0, rows)
  const total = (s: ProfileSummary, requests: number) => (requests > 0 ? (s.busyMs * 1000) / requests : 0)
  const lines = [
    `| package (self CPU) | ${names[0]} µs/req | ${names[1]} µs/req | difference |`,
    '| --- | ---: | ---: | ---: |',
    `| **all (busy time)** | ${total(a.summary, a.requests).toFixed(1)} | ${total(b.summary, b.requests).toFixed(1)} | ` +
      `${(total(a.summary, a.requests) - total(b.summary, b.requests)).toFixed(1)} |`,
    ...packages.map((p) => `| ${p.pkg} | ${p.a.toFixed(1)} | ${p.b.toFixed(1)} | ${(p.a - p.b).toFixed(1)} |`),
  ]
  return `${lines.join('\n')}\n`
}

export function readProfile(path: string): CpuProfile {
  return JSON.parse(readFileSync(path, 'utf8')) as CpuProfile
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const [file, top, from, to] = process.argv.slice(2)
  if (!file) {
    console.error('usage: tsx bench/profile.ts <file.cpuprofile> [top] [fromUs toUs]')
    process.exit(2)
  }
  const window = from && to ? { fromUs: Number(from), toUs: Number(to) } : undefined
  process.stdout.write(formatProfile(summariseProfile(readProfile(file), Number(top ?? 25), window)))
}
