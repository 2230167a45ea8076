// The report on stdout: a header saying what ran where (the machine, the run's shape), then the results table,
// the comparisons of --citus and --before, start-up and idle memory, the targets of docs/performance.md (reported,
// never asserted: a miss does not change the exit code) and any errors; and the same as JSON with --out.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, resolve } from 'node:path'
import {
  BASELINE_SCENARIOS,
  type Measurement,
  measurementsOf,
  medianRound,
  ORDER,
  pairedRatio,
  referenceOf,
  TARGETS,
} from './measure.ts'
import type { BenchOptions, Mode } from './options.ts'
import { fixed, log, median, ms, POOL_SIZE, RATE_LIMIT_MAX, root, type Target } from './servers.ts'
import { SCENARIOS, type ScenarioId } from './wrk.ts'

export interface Verdict {
  label: string
  value: string
  pass: boolean
}

/** Everything a run found: printed by printHeader and printResults, written as is with --out. */
export interface RunRecord {
  mode: Mode
  options: BenchOptions
  machine: ReturnType<typeof describeMachine>
  load: { atStart: string; beforeMeasuring: string; after: string }
  seed: { reused: boolean; seconds: number; deepCursorRows: string }
  /** With --citus: the Citus database, seeded alike. */
  citus: (RunRecord['seed'] & { postgres: string; url: string }) | undefined
  startMs: { rubrica: number[]; baseline: number }
  idleRssMb: { rubrica: number; baseline: number }
  measurements: Measurement[]
  checks: Verdict[]
  problems: string[]
}

export function describeMachine(postgres: string) {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: root, encoding: 'utf8' }).stdout.trim()
  const dirty = git('status', '--porcelain', '--untracked-files=no', 'src', 'prisma') !== ''
  const wrk = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  return {
    nproc: os.availableParallelism(),
    cpu: readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? os.cpus()[0]?.model ?? '?',
    memoryGiB: Number(fixed(os.totalmem() / 2 ** 30, 1)),
    node: process.version,
    postgres,
    /** wrk's version line. */
    wrk: `${wrk.stdout}${wrk.stderr}`.split('\n')[0]?.trim() ?? '?',
    commit: `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' (with uncommitted changes in src/ or prisma/)' : ''}`,
  }
}

/** What ran, how and where: printed before the checks and the measurements. */
export function printHeader(run: Pick<RunRecord, 'mode' | 'options' | 'machine' | 'seed' | 'citus'>): void {
  const { options, machine: host, seed, citus } = run
  log(`\n# rubrica benchmark (${run.mode}): ${options.tenants} tenant(s) x ${options.contacts} contacts\n`)
  log(
    `NOTE: rubrica runs with RATE_LIMIT_MAX=${RATE_LIMIT_MAX}: its per-tenant rate limiter still runs on every ` +
      'request (in-process counters, no Redis) but never refuses; with the default (60 per minute) almost every ' +
      'request would get 429.',
  )
  log(
    `rubrica: node dist/server.js, NODE_ENV=production LOG_LEVEL=warn METRICS_ENABLED=false DEMO_ON_EMPTY=false ` +
      `DATABASE_POOL_SIZE=${POOL_SIZE}; baseline: node --import tsx bench/baseline.ts, same pool size.`,
  )
  log(
    `wrk: -t${options.threads} -c${options.connections} -d${options.duration}s, ${options.rounds} round(s), ` +
      `${options.warmup} s warm-up per scenario and target; database ${options.database}` +
      `${seed.reused ? ' (reused, --keep)' : ` (seeded in ${seed.seconds.toFixed(0)} s)`}; ` +
      `deep cursors at rows ${seed.deepCursorRows}.`,
  )
  log(
    `machine: ${host.nproc} CPUs (${host.cpu}), ${host.memoryGiB} GiB, Node ${host.node}, PostgreSQL ${host.postgres}, ` +
      `${host.wrk}; commit ${host.commit}`,
  )
  log(`scenarios: ${options.scenarios.map((s) => `${s} (${SCENARIOS[s].name})`).join(', ')}.`)
  if (citus) {
    log(
      `Citus: both targets again on ${citus.url} (PostgreSQL ${citus.postgres})` +
        `${citus.reused ? ', reused (--keep)' : `, seeded in ${citus.seconds.toFixed(0)} s`}; deep cursors at rows ` +
        `${citus.deepCursorRows}; alternating with PostgreSQL within every scenario.`,
    )
  }
}

const label = (scenario: ScenarioId) => `${scenario}. ${SCENARIOS[scenario].name}`
const ratio = (value: number | undefined) => (value === undefined ? '' : `${fixed(value, 2)}x`)

/** Everything after the measurements; returns how many requests failed during the scenarios. */
export function printResults(run: RunRecord): number {
  const { measurements, startMs, idleRssMb, load } = run
  const range = run.options.rounds > 1
  log(
    "\n| scenario | target | req/s | p50 ms | p99 ms | errors | ratio to baseline (g-m: to rubrica's plain scenario) | " +
      `RSS peak MB | server CPU ms/req | PostgreSQL CPU ms/req | other CPU (cores) |${range ? ' req/s range |' : ''}`,
  )
  log(`| --- | --- |${' ---: |'.repeat(range ? 10 : 9)}`)
  for (const scenario of ORDER) {
    for (const target of TARGETS) {
      const m = medianRound(measurements, scenario, target)
      if (!m) continue
      const same = measurementsOf(measurements, scenario, target)
      const all = same.map((x) => x.rps)
      const sum = (value: (x: Measurement) => number) => same.reduce((total, x) => total + value(x), 0)
      log(
        `| ${label(scenario)} | ${target} | ${fixed(m.rps, 0)} | ${ms(m.wrk.p50)} | ${ms(m.wrk.p99)} | ` +
          `${sum((x) => x.errors)} | ${ratioCell(measurements, scenario, target)} | ` +
          `${fixed(Math.max(...same.map((x) => x.rssPeakMb)), 0)} | ${fixed(m.cpuMsPerRequest, 3)} | ` +
          `${fixed(m.postgresMsPerRequest, 3)} | ${fixed(sum((x) => x.otherCores) / same.length, 2)} |` +
          (range ? ` ${fixed(Math.min(...all), 0)}-${fixed(Math.max(...all), 0)} |` : ''),
      )
    }
  }
  if (run.citus) {
    log('\nOn Citus against PostgreSQL (req/s, medians of per-round ratios; rubrica / baseline on Citus above):')
    pairTable(measurements, ['rubrica-citus', 'rubrica'], ['baseline-citus', 'baseline'])
  }
  if (run.options.before !== undefined) {
    log(
      `\nThis checkout against the build in ${run.options.before} (medians of per-round ratios; each build ` +
        'against the baseline above):',
    )
    pairTable(measurements, ['rubrica', 'rubrica-before'])
  }
  log(
    `\nstart (spawn to first 200 on /health): rubrica ${startMs.rubrica.map((x) => fixed(x, 0)).join(', ')} ms ` +
      `(median ${fixed(median(startMs.rubrica) ?? 0, 0)} ms); baseline ${fixed(startMs.baseline, 0)} ms`,
  )
  log(`RSS idle after start: rubrica ${fixed(idleRssMb.rubrica, 0)} MB, baseline ${fixed(idleRssMb.baseline, 0)} MB`)
  log(
    `load average (1, 5, 15 min): at start ${load.atStart}; before measuring ${load.beforeMeasuring}; after ${load.after}`,
  )
  const busiest = Math.max(...measurements.map((m) => m.otherCores))
  if (busiest > 0.2) {
    log(
      `WARNING: the machine was shared: other processes used up to ${fixed(busiest, 2)} of ${run.machine.nproc} ` +
        'CPUs during the scenarios (column "other CPU"); absolute figures are lower and noisier than on a quiet machine.',
    )
  }
  log('\ntargets (reported, not asserted):')
  for (const c of run.checks) log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.label}: ${c.value}`)
  const failed = measurements.filter((x) => x.errors > 0)
  if (failed.length > 0) log('\nERRORS during scenarios (connect/read/write/timeout errors and statuses >= 400):')
  for (const { scenario, target, round, wrk: w } of failed) {
    log(
      `  ${scenario} ${target} round ${round}: status>=400 ${w.status}, connect ${w.connect}, read ${w.read}, ` +
        `write ${w.write}, timeout ${w.timeout}`,
    )
  }
  return failed.reduce((sum, m) => sum + m.errors, 0)
}

/** rubrica's req/s against its reference (referenceOf), named when it is not the baseline. */
function ratioCell(measurements: Measurement[], scenario: ScenarioId, target: Target): string {
  const reference = target.startsWith('rubrica') ? referenceOf(scenario, target) : undefined
  const value = reference && pairedRatio(measurements, [scenario, target], reference)
  if (reference === undefined || value === undefined) return ''
  return reference[1].startsWith('baseline') ? ratio(value) : `${ratio(value)} of ${reference[0]}`
}

/** Per scenario, each pair's x / y in req/s, for the scenarios where the first pair's x ran. */
function pairTable(measurements: Measurement[], ...pairs: [Target, Target][]): void {
  log(`\n| scenario |${pairs.map(([x, y]) => ` ${x} / ${y} |`).join('')}`)
  log(`| --- |${' ---: |'.repeat(pairs.length)}`)
  for (const scenario of ORDER) {
    if (measurementsOf(measurements, scenario, pairs[0]?.[0] ?? 'rubrica').length === 0) continue
    const cells = pairs.map(([x, y]) => ` ${ratio(pairedRatio(measurements, [scenario, x], [scenario, y]))} |`)
    log(`| ${label(scenario)} |${cells.join('')}`)
  }
}

// The baseline is the fastest honest implementation of the same endpoints (bench/baseline.ts): rubrica's reads
// within 10% of it, its writes within 20%. One tenant's writes at least 0.9x of the same load spread over every
// tenant: nothing per tenant queues. A first page filtered by a tag, three tags and a stage, or words: at least
// half the unfiltered one's rate. Each: rubrica's scenario, what it is measured against, the least ratio.
const RATIO_TARGETS: [ScenarioId, ScenarioId | 'baseline', number][] = [
  ['a', 'baseline', 0.9],
  ['b', 'baseline', 0.9],
  ['c', 'baseline', 0.9],
  ['e', 'baseline', 0.8],
  ['f', 'baseline', 0.8],
  ['i', 'e', 0.9],
  ['j', 'f', 0.9],
  ['k', 'b', 0.5],
  ['l', 'b', 0.5],
  ['m', 'b', 0.5],
]
const RSS_LIMIT = 1.5

export function judgeTargets(measurements: Measurement[], mode: Mode, options: BenchOptions, startMs: number[]) {
  const how = options.rounds > 1 ? `median of ${options.rounds} per-round ratios` : 'one round'
  const verdicts: Verdict[] = RATIO_TARGETS.flatMap(([scenario, against, minimum]) => {
    const y: [ScenarioId, Target] = against === 'baseline' ? [scenario, 'baseline'] : [against, 'rubrica']
    const value = pairedRatio(measurements, [scenario, 'rubrica'], y)
    const [a, b] = [medianRound(measurements, scenario, 'rubrica'), medianRound(measurements, ...y)]
    if (value === undefined || !a || !b) return []
    const detail =
      against === 'baseline'
        ? `server CPU per request ${fixed(a.cpuMsPerRequest / b.cpuMsPerRequest, 2)}x the baseline's`
        : `p99 ${ms(a.wrk.p99)} ms against ${ms(b.wrk.p99)} ms`
    return {
      label: `${SCENARIOS[scenario].name} >= ${minimum}x ${against === 'baseline' ? 'baseline' : SCENARIOS[against].name} (req/s)`,
      value: `${fixed(value, 2)}x (${how}; ${detail})`,
      pass: value >= minimum,
    }
  })
  // Peak RSS (highest over rounds) of rubrica against the baseline's, in every scenario both ran.
  const peak = (scenario: ScenarioId, target: Target) =>
    Math.max(0, ...measurementsOf(measurements, scenario, target).map((m) => m.rssPeakMb))
  const rss = BASELINE_SCENARIOS.flatMap((scenario) => {
    const [rubrica, baseline] = [peak(scenario, 'rubrica'), peak(scenario, 'baseline')]
    return rubrica > 0 && baseline > 0 ? [{ scenario, rubrica, baseline, ratio: rubrica / baseline }] : []
  })
  if (rss.length > 0) {
    verdicts.push({
      label: `RSS peak <= ${RSS_LIMIT}x the baseline's in every scenario`,
      value: rss
        .map((r) => `${r.scenario} ${ratio(r.ratio)} (${fixed(r.rubrica, 0)}/${fixed(r.baseline, 0)} MB)`)
        .join(', '),
      pass: rss.every((r) => r.ratio <= RSS_LIMIT),
    })
  }
  const start = median(startMs) ?? 0
  verdicts.push({
    label: 'start < 1 s (spawn to first 200 on /health, median)',
    value: `${fixed(start, 0)} ms`,
    pass: start < 1000,
  })
  // --large only: the lists' p99 at the run's connections.
  for (const scenario of mode === 'large' ? (['b', 'c', 'd'] as const) : []) {
    const [m, baseline] = [
      medianRound(measurements, scenario, 'rubrica'),
      medianRound(measurements, scenario, 'baseline'),
    ]
    if (!m) continue
    verdicts.push({
      label: `${SCENARIOS[scenario].name}: p99 < 20 ms at ${options.connections} connections`,
      value: `${ms(m.wrk.p99)} ms${baseline ? ` (baseline ${ms(baseline.wrk.p99)} ms)` : ''}`,
      pass: m.wrk.p99 < 20_000,
    })
  }
  return verdicts
}

/** --out: the whole record as JSON. */
export function writeRecord(file: string, run: RunRecord): void {
  // bench/results/ is ignored by git, so a fresh clone does not have it.
  mkdirSync(dirname(resolve(file)), { recursive: true })
  writeFileSync(resolve(file), `${JSON.stringify(run, null, 2)}\n`)
}
