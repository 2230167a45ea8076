// The report on stdout: a header saying what ran where (the machine, the run's shape), then the results table,
// where the CPU went, start-up and idle memory, the targets and any errors; and the same as JSON
// with --out.
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
import { median } from './median.ts'
import type { BenchOptions, Mode } from './options.ts'
import { fixed, log, ms } from './output.ts'
import { POOL_SIZE, RATE_LIMIT_MAX, root, type Target } from './servers.ts'
import type { Verdict } from './verdicts.ts'
import { SCENARIOS, type ScenarioId } from './wrk.ts'

export interface Machine {
  nproc: number
  cpu: string
  memoryGiB: number
  node: string
  postgres: string
  /** wrk's version line. */
  wrk: string
  commit: string
}

/** Everything a run found: printed by printResults, written as is by writeRecord. */
export interface RunRecord {
  mode: Mode
  options: BenchOptions
  machine: Machine
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

export function describeMachine(postgresVersion: string): Machine {
  const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? os.cpus()[0]?.model ?? '?'
  const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim()
  const dirty =
    spawnSync('git', ['status', '--porcelain', '--untracked-files=no', 'src', 'prisma'], {
      cwd: root,
      encoding: 'utf8',
    }).stdout.trim() !== ''
  const wrk = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  return {
    nproc: os.availableParallelism(),
    cpu,
    memoryGiB: Number(fixed(os.totalmem() / 2 ** 30, 1)),
    node: process.version,
    postgres: postgresVersion,
    wrk: `${wrk.stdout}${wrk.stderr}`.split('\n')[0]?.trim() ?? '?',
    commit: `${git}${dirty ? ' (with uncommitted changes in src/ or prisma/)' : ''}`,
  }
}

/** What ran, how and where: printed before the checks and the measurements. */
export function printHeader(run: Pick<RunRecord, 'mode' | 'options' | 'machine' | 'seed' | 'citus'>): void {
  const { options, machine: host, seed, citus } = run
  log()
  log(`# rubrica benchmark (${run.mode}): ${options.tenants} tenant(s) x ${options.contacts} contacts`)
  log()
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

/** Everything after the measurements; returns how many requests failed during the scenarios. */
export function printResults(run: RunRecord): number {
  log()
  for (const row of resultsTable(run.measurements, run.options.rounds)) log(row)
  log()
  if (run.citus) {
    log('On Citus beside PostgreSQL (req/s, median round; ratios: medians of per-round ratios):')
    log()
    for (const row of citusTable(run.measurements)) log(row)
    log()
  }
  if (run.options.before !== undefined) {
    log(
      `This checkout against the build in ${run.options.before}, in the same rounds (ratios: medians of per-round ratios):`,
    )
    log()
    for (const row of beforeTable(run.measurements)) log(row)
    log()
  }
  log('Where the CPU went (medians over rounds; milliseconds of CPU per request, and cores on average):')
  log()
  for (const row of cpuTable(run.measurements)) log(row)
  log()
  printStartAndLoad(run)
  log()
  log('targets (reported, not asserted):')
  for (const c of run.checks) log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.label}: ${c.value}`)
  const scenarioErrors = printErrors(run.measurements)
  return scenarioErrors
}

/** Each scenario and target present, every row in ORDER, rubrica before the baseline. */
function eachRow(measurements: Measurement[], row: (scenario: ScenarioId, target: Target) => void) {
  for (const scenario of ORDER) {
    for (const target of TARGETS) {
      if (measurementsOf(measurements, scenario, target).length > 0) row(scenario, target)
    }
  }
}

const scenarioLabel = (scenario: ScenarioId) => `${scenario}. ${SCENARIOS[scenario].name}`

function resultsTable(measurements: Measurement[], rounds: number): string[] {
  const range = rounds > 1
  const rows = [
    "| scenario | target | req/s | p50 ms | p99 ms | errors | ratio to baseline (g, h: to rubrica's e, a) | " +
      `RSS peak MB | server CPU ms/req | other CPU (cores) |${range ? ' req/s range |' : ''}`,
    `| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |${range ? ' ---: |' : ''}`,
  ]
  eachRow(measurements, (scenario, target) => {
    const m = medianRound(measurements, scenario, target)
    if (!m) return
    const ratio = target.startsWith('rubrica') ? ratioCell(measurements, scenario, target) : ''
    const same = measurementsOf(measurements, scenario, target)
    const all = same.map((x) => x.rps)
    const errors = same.reduce((sum, x) => sum + x.errors, 0)
    const rss = Math.max(...same.map((x) => x.rssPeakMb))
    const others = same.reduce((sum, x) => sum + x.otherCores, 0) / same.length
    rows.push(
      `| ${scenarioLabel(scenario)} | ${target} | ${fixed(m.rps, 0)} | ${ms(m.wrk.p50)} | ${ms(m.wrk.p99)} | ` +
        `${errors} | ${ratio} | ${fixed(rss, 0)} | ${fixed(m.cpuMsPerRequest, 3)} | ${fixed(others, 2)} |` +
        (range ? ` ${fixed(Math.min(...all), 0)}-${fixed(Math.max(...all), 0)} |` : ''),
    )
  })
  return rows
}

/** rubrica's req/s against its reference (referenceOf), named when it is not the baseline. */
function ratioCell(measurements: Measurement[], scenario: ScenarioId, rubrica: Target): string {
  const reference = referenceOf(scenario, rubrica)
  const ratio = reference && pairedRatio(measurements, [scenario, rubrica], reference)
  if (reference === undefined || ratio === undefined) return ''
  return reference[1].startsWith('baseline') ? `${fixed(ratio, 2)}x` : `${fixed(ratio, 2)}x of ${reference[0]}`
}

/** The req/s of the median round of one scenario on one target, as a table cell ('' when not measured). */
function medianRps(measurements: Measurement[], scenario: ScenarioId, target: Target): string {
  const m = medianRound(measurements, scenario, target)
  return m ? fixed(m.rps, 0) : ''
}

/** Per scenario both databases served: each target's req/s on both, Citus against PostgreSQL, and the ratios. */
function citusTable(measurements: Measurement[]): string[] {
  const rows = [
    '| scenario | rubrica, PostgreSQL | rubrica, Citus | Citus / PostgreSQL | baseline, PostgreSQL | baseline, Citus | ' +
      'Citus / PostgreSQL | rubrica / baseline, PostgreSQL | rubrica / baseline, Citus |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  const rps = (scenario: ScenarioId, target: Target) => medianRps(measurements, scenario, target)
  const ratio = (scenario: ScenarioId, x: Target, y: Target) => {
    const r = pairedRatio(measurements, [scenario, x], [scenario, y])
    return r === undefined ? '' : `${fixed(r, 2)}x`
  }
  for (const scenario of ORDER) {
    if (!BASELINE_SCENARIOS.includes(scenario)) continue
    if (measurementsOf(measurements, scenario, 'rubrica-citus').length === 0) continue
    rows.push(
      `| ${scenarioLabel(scenario)} | ${rps(scenario, 'rubrica')} | ${rps(scenario, 'rubrica-citus')} | ` +
        `${ratio(scenario, 'rubrica-citus', 'rubrica')} | ${rps(scenario, 'baseline')} | ` +
        `${rps(scenario, 'baseline-citus')} | ${ratio(scenario, 'baseline-citus', 'baseline')} | ` +
        `${ratio(scenario, 'rubrica', 'baseline')} | ${ratio(scenario, 'rubrica-citus', 'baseline-citus')} |`,
    )
  }
  return rows
}

/** Per scenario: each build against the baseline (or its plain scenario), and this checkout against the earlier one. */
function beforeTable(measurements: Measurement[]): string[] {
  const rows = [
    '| scenario | before: req/s | ratio | after: req/s | ratio | after / before |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ]
  const rps = (scenario: ScenarioId, target: Target) => medianRps(measurements, scenario, target)
  for (const scenario of ORDER) {
    if (measurementsOf(measurements, scenario, 'rubrica-before').length === 0) continue
    const change = pairedRatio(measurements, [scenario, 'rubrica'], [scenario, 'rubrica-before'])
    rows.push(
      `| ${scenarioLabel(scenario)} | ${rps(scenario, 'rubrica-before')} | ` +
        `${ratioCell(measurements, scenario, 'rubrica-before')} | ${rps(scenario, 'rubrica')} | ` +
        `${ratioCell(measurements, scenario, 'rubrica')} | ${change === undefined ? '' : `${fixed(change, 2)}x`} |`,
    )
  }
  return rows
}

function cpuTable(measurements: Measurement[]): string[] {
  const rows = [
    '| scenario | target | server ms/req | PostgreSQL ms/req | wrk ms/req | idle cores | other cores |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
  ]
  eachRow(measurements, (scenario, target) => {
    const same = measurementsOf(measurements, scenario, target)
    const mid = (value: (m: Measurement) => number, digits: number) => fixed(median(same.map(value)) ?? 0, digits)
    rows.push(
      `| ${scenarioLabel(scenario)} | ${target} | ${mid((x) => x.cpuMsPerRequest, 3)} | ` +
        `${mid((x) => x.postgresMsPerRequest, 3)} | ${mid((x) => x.wrkMsPerRequest, 3)} | ` +
        `${mid((x) => x.idleCores, 2)} | ${mid((x) => x.otherCores, 2)} |`,
    )
  })
  return rows
}

function printStartAndLoad({ startMs, idleRssMb, load, measurements, machine }: RunRecord): void {
  log(
    `start (spawn to first 200 on /health): rubrica ${startMs.rubrica.map((x) => fixed(x, 0)).join(', ')} ms ` +
      `(median ${fixed(median(startMs.rubrica) ?? 0, 0)} ms); baseline ${fixed(startMs.baseline, 0)} ms`,
  )
  log(`RSS idle after start: rubrica ${fixed(idleRssMb.rubrica, 0)} MB, baseline ${fixed(idleRssMb.baseline, 0)} MB`)
  log(
    `load average (1, 5, 15 min): at start ${load.atStart}; before measuring ${load.beforeMeasuring}; after ${load.after}`,
  )
  const busiest = Math.max(...measurements.map((m) => m.otherCores))
  if (busiest > 0.2) {
    log(
      `WARNING: the machine was shared: other processes used up to ${fixed(busiest, 2)} of ${machine.nproc} CPUs during ` +
        'the scenarios (column "other CPU"); absolute figures are lower and noisier than on a quiet machine.',
    )
  }
}

/** Lists the runs that had errors; returns the total. */
function printErrors(measurements: Measurement[]): number {
  const total = measurements.reduce((sum, m) => sum + m.errors, 0)
  if (total === 0) return 0
  log()
  log(`ERRORS during scenarios: ${total} (connect/read/write/timeout errors and statuses >= 400):`)
  for (const { scenario, target, round, wrk: w } of measurements.filter((x) => x.errors > 0)) {
    log(
      `  ${scenario} ${target} round ${round}: status>=400 ${w.status}, connect ${w.connect}, read ${w.read}, ` +
        `write ${w.write}, timeout ${w.timeout}`,
    )
  }
  return total
}

/** --out: the whole record as JSON. */
export function writeRecord(file: string, run: RunRecord): void {
  // bench/results/ is ignored by git, so a fresh clone does not have it.
  mkdirSync(dirname(resolve(file)), { recursive: true })
  writeFileSync(resolve(file), `${JSON.stringify(run, null, 2)}\n`)
}
