// The targets of docs/performance.md, judged on the measurements: reported, never asserted (a miss does not change
// the exit code).

import { BASELINE_SCENARIOS, type Measurement, measurementsOf, medianRound, pairedRatio } from './measure.ts'
import { median } from './median.ts'
import type { BenchOptions, Mode } from './options.ts'
import { fixed, ms } from './output.ts'
import type { Target } from './servers.ts'
import { SCENARIOS, type ScenarioId } from './wrk.ts'

export interface Verdict {
  label: string
  value: string
  pass: boolean
}

/** A target on the ratio of two req/s figures, x / y, with what else explains it. */
interface RatioTarget {
  label: string
  x: [ScenarioId, Target]
  y: [ScenarioId, Target]
  pass: (ratio: number) => boolean
  /** Said after the ratio, from the median rounds of x and y. */
  detail: (x: Measurement, y: Measurement) => string
}

const cpuAgainstBaseline = (rubrica: Measurement, baseline: Measurement) =>
  `server CPU per request ${fixed(rubrica.cpuMsPerRequest / baseline.cpuMsPerRequest, 2)}x the baseline's`

/** rubrica's req/s in `scenario` at least `minimum` times the baseline's in the same scenario. */
const againstBaseline = (scenario: ScenarioId, minimum: number): RatioTarget => ({
  label: `${SCENARIOS[scenario].name} >= ${minimum}x baseline (req/s)`,
  x: [scenario, 'rubrica'],
  y: [scenario, 'baseline'],
  pass: (ratio) => ratio >= minimum,
  detail: cpuAgainstBaseline,
})

/** rubrica's req/s in the one-tenant `scenario` at least `minimum` times its own in the plain one (all tenants). */
function againstSpread(scenario: ScenarioId, minimum: number): RatioTarget {
  const plain = SCENARIOS[scenario].variantOf ?? scenario
  return {
    label: `${SCENARIOS[scenario].name} >= ${minimum}x ${SCENARIOS[plain].name} over every tenant (req/s)`,
    x: [scenario, 'rubrica'],
    y: [plain, 'rubrica'],
    pass: (ratio) => ratio >= minimum,
    detail: (x, y) => `p99 ${ms(x.wrk.p99)} ms against ${ms(y.wrk.p99)} ms`,
  }
}

/** rubrica's req/s in the filtered `scenario` at least `minimum` times its own unfiltered first page (b). */
const againstFirstPage = (scenario: ScenarioId, minimum: number): RatioTarget => ({
  label: `${SCENARIOS[scenario].name} >= ${minimum}x ${SCENARIOS.b.name} (req/s)`,
  x: [scenario, 'rubrica'],
  y: ['b', 'rubrica'],
  pass: (ratio) => ratio >= minimum,
  detail: (x, y) => `p99 ${ms(x.wrk.p99)} ms against ${ms(y.wrk.p99)} ms`,
})

// The baseline is the fastest honest implementation of the same endpoints (bench/baseline.ts): rubrica's reads
// within 10% of it, its writes within 20%. One tenant's writes at least 0.9x of the same load spread over every
// tenant: nothing per tenant queues.
const RATIO_TARGETS: RatioTarget[] = [
  againstBaseline('a', 0.9),
  againstBaseline('b', 0.9),
  againstBaseline('c', 0.9),
  againstBaseline('e', 0.8),
  againstBaseline('f', 0.8),
  againstSpread('i', 0.9),
  againstSpread('j', 0.9),
  // A first page filtered by a tag, three tags and a stage, or words: at least half the unfiltered one's rate.
  againstFirstPage('k', 0.5),
  againstFirstPage('l', 0.5),
  againstFirstPage('m', 0.5),
]

export interface RunShape {
  mode: Mode
  options: Pick<BenchOptions, 'rounds' | 'connections'>
  /** rubrica's start-up times, spawn to first 200 on /health. */
  rubricaStartMs: number[]
}

export function judgeTargets(measurements: Measurement[], run: RunShape): Verdict[] {
  const how = run.options.rounds > 1 ? `median of ${run.options.rounds} per-round ratios` : 'one round'
  const verdicts = RATIO_TARGETS.flatMap((target) => ratioVerdict(measurements, target, how) ?? [])
  const rss = rssVerdict(measurements)
  if (rss) verdicts.push(rss)
  const startMedian = median(run.rubricaStartMs) ?? 0
  verdicts.push(
    verdict('start < 1 s (spawn to first 200 on /health, median)', `${fixed(startMedian, 0)} ms`, startMedian < 1000),
  )
  if (run.mode === 'large') verdicts.push(...largeListVerdicts(measurements, run.options.connections))
  return verdicts
}

const RSS_LIMIT = 1.5

/** Peak RSS (highest over rounds) of rubrica against the baseline's, in every scenario both ran. */
function rssVerdict(measurements: Measurement[]): Verdict | undefined {
  const peak = (scenario: ScenarioId, target: Target) =>
    Math.max(0, ...measurementsOf(measurements, scenario, target).map((m) => m.rssPeakMb))
  const ratios = BASELINE_SCENARIOS.flatMap((scenario) => {
    const [rubrica, baseline] = [peak(scenario, 'rubrica'), peak(scenario, 'baseline')]
    return rubrica > 0 && baseline > 0 ? [{ scenario, rubrica, baseline, ratio: rubrica / baseline }] : []
  })
  if (ratios.length === 0) return undefined
  const each = ratios.map(
    (r) => `${r.scenario} ${fixed(r.ratio, 2)}x (${fixed(r.rubrica, 0)}/${fixed(r.baseline, 0)} MB)`,
  )
  return verdict(
    `RSS peak <= ${RSS_LIMIT}x the baseline's in every scenario`,
    each.join(', '),
    ratios.every((r) => r.ratio <= RSS_LIMIT),
  )
}

const verdict = (label: string, value: string, pass: boolean): Verdict => ({ label, value, pass })

function ratioVerdict(measurements: Measurement[], target: RatioTarget, how: string): Verdict | undefined {
  const ratio = pairedRatio(measurements, target.x, target.y)
  const x = medianRound(measurements, ...target.x)
  const y = medianRound(measurements, ...target.y)
  if (ratio === undefined || !x || !y) return undefined
  return verdict(target.label, `${fixed(ratio, 2)}x (${how}; ${target.detail(x, y)})`, target.pass(ratio))
}

/** --large only: the lists' p99 at the run's connections. */
function largeListVerdicts(measurements: Measurement[], connections: number): Verdict[] {
  return (['b', 'c', 'd'] as const).flatMap((scenario) => {
    const m = medianRound(measurements, scenario, 'rubrica')
    if (!m) return []
    const baseline = medianRound(measurements, scenario, 'baseline')
    const label = `${SCENARIOS[scenario].name}: p99 < 20 ms at ${connections} connections`
    const value = `${ms(m.wrk.p99)} ms${baseline ? ` (baseline ${ms(baseline.wrk.p99)} ms)` : ''}`
    return [verdict(label, value, m.wrk.p99 < 20_000)]
  })
}
