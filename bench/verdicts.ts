// The targets of docs/BENCHMARKS.md, judged on the measurements: reported, never asserted (a miss does not change
// the exit code).

import { type Measurement, medianRound, pairedRatio } from './measure.ts'
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

const RATIO_TARGETS: RatioTarget[] = [
  {
    label: 'GET by id >= 0.7x baseline (req/s)',
    x: ['a', 'rubrica'],
    y: ['a', 'baseline'],
    pass: (ratio) => ratio >= 0.7,
    detail: cpuAgainstBaseline,
  },
  {
    label: 'list first page >= 0.7x baseline (req/s)',
    x: ['b', 'rubrica'],
    y: ['b', 'baseline'],
    pass: (ratio) => ratio >= 0.7,
    detail: cpuAgainstBaseline,
  },
  {
    label: 'list at 90% depth within 1.2x of the first page (by req/s: first / deep <= 1.2)',
    x: ['b', 'rubrica'],
    y: ['c', 'rubrica'],
    pass: (ratio) => ratio <= 1.2,
    detail: (first, deep) =>
      `medians ${fixed(deep.rps, 0)} vs ${fixed(first.rps, 0)} req/s, p50 ${ms(deep.wrk.p50)} vs ${ms(first.wrk.p50)} ms`,
  },
  {
    label: 'POST >= 0.5x GET by id (req/s)',
    x: ['e', 'rubrica'],
    y: ['a', 'rubrica'],
    pass: (ratio) => ratio >= 0.5,
    detail: (post, get) =>
      `server CPU per request ${fixed(post.cpuMsPerRequest, 2)} vs ${fixed(get.cpuMsPerRequest, 2)} ms`,
  },
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
  const rssPeak = Math.max(...measurements.filter((m) => m.target === 'rubrica').map((m) => m.rssPeakMb))
  const startMedian = median(run.rubricaStartMs) ?? 0
  verdicts.push(
    verdict('RSS under load < 150 MB (rubrica, peak over all scenarios)', `${fixed(rssPeak, 0)} MB`, rssPeak < 150),
    verdict('start < 1 s (spawn to first 200 on /health, median)', `${fixed(startMedian, 0)} ms`, startMedian < 1000),
  )
  if (run.mode === 'large') verdicts.push(...largeListVerdicts(measurements, run.options.connections))
  return verdicts
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
    const label = `${SCENARIOS[scenario].name}: p99 < 20 ms at ${connections} connections`
    return [verdict(label, `${ms(m.wrk.p99)} ms`, m.wrk.p99 < 20_000)]
  })
}
