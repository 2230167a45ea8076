// Measuring: warm-up, then every scenario on rubrica (and those the baseline serves on the baseline too) for the
// given rounds, each run of wrk sampled for RSS and CPU; how the measurements of several rounds are summed up; and
// the search's count, measured alone after the scenarios.
import { performance } from 'node:perf_hooks'
import type { BenchOptions } from './options.ts'
import { sampleScenario } from './sampling.ts'
import { fixed, median, ms, note, type Server, type Target } from './servers.ts'
import {
  errorCount,
  runWrk,
  SCENARIOS,
  type ScenarioId,
  type Scripts,
  type TenantSample,
  type WrkResult,
} from './wrk.ts'

/** Scenarios in the order they are reported (a run measures those of its options, in their order). */
export const ORDER: readonly ScenarioId[] = ['a', 'b', 'c', 'd', 'e', 'i', 'f', 'j', 'g', 'h', 'k', 'l', 'm']
/** Every target, in the order of odd rounds. */
export const TARGETS: readonly Target[] = ['rubrica', 'rubrica-before', 'baseline', 'rubrica-citus', 'baseline-citus']
/** The baseline serves all but the integration features (Idempotency-Key, ETags), which only rubrica has. */
export const BASELINE_SCENARIOS: readonly ScenarioId[] = ['a', 'b', 'c', 'd', 'e', 'f']

/** What shapes the load: wrk's connections and threads, seconds per scenario and of warm-up, rounds. */
type Load = Pick<BenchOptions, 'connections' | 'threads' | 'duration' | 'warmup' | 'rounds'>

/** The targets a run started, each with the scripts of its database's samples. */
export type Loaded = Partial<Record<Target, { server: Server; scripts: Scripts }>>

export interface Measurement {
  scenario: ScenarioId
  target: Target
  round: number
  wrk: WrkResult
  rps: number
  errors: number
  rssPeakMb: number
  /** Server CPU (user + system) per request, in milliseconds. */
  cpuMsPerRequest: number
  /** PostgreSQL's CPU per request, in milliseconds (all its processes: includes other users of the server). */
  postgresMsPerRequest: number
  /** Other people's CPU use during the scenario, in cores (see sampleScenario). */
  otherCores: number
}

/**
 * The targets a scenario runs on, in the order of `round`: odd rounds rubrica first (on PostgreSQL, then on
 * Citus), even rounds the reverse. Only rubrica serves the scenarios the baseline does not.
 */
function targetsOf(scenario: ScenarioId, round: number, loaded: Loaded): Target[] {
  const served = TARGETS.filter(
    (target) => loaded[target] !== undefined && (BASELINE_SCENARIOS.includes(scenario) || target.startsWith('rubrica')),
  )
  return round % 2 === 1 ? served : served.reverse()
}

/**
 * The scenarios in the order of `round`: as given in odd rounds; in even ones, a variant that follows its plain
 * scenario (one tenant's POST after the ten tenants' one) goes first, so that neither always runs on the
 * other's leftovers.
 */
function scenariosIn(scenarios: readonly ScenarioId[], round: number): ScenarioId[] {
  const order = [...scenarios]
  for (let i = 0; round % 2 === 0 && i + 1 < order.length; i++) {
    const [plain, variant] = [order[i] as ScenarioId, order[i + 1] as ScenarioId]
    if (SCENARIOS[variant].variantOf !== plain) continue
    order.splice(i, 2, variant, plain)
    i++
  }
  return order
}

/**
 * A warm-up of every scenario on its targets, then every scenario on its targets `load.rounds` times;
 * `beforeRound` runs before each round (vacuum).
 */
export async function measureRounds(
  loaded: Loaded,
  scenarios: readonly ScenarioId[],
  load: Load,
  beforeMeasuring: () => void,
  beforeRound: () => Promise<void>,
): Promise<Measurement[]> {
  const { connections, threads } = load
  note('warming up')
  for (const scenario of scenarios) {
    for (const target of targetsOf(scenario, 1, loaded)) {
      const { server, scripts } = loaded[target] as { server: Server; scripts: Scripts }
      await runWrk({ url: server.url, script: scripts[scenario], seconds: load.warmup, connections, threads })
    }
  }
  beforeMeasuring()
  const measurements: Measurement[] = []
  for (let round = 1; round <= load.rounds; round++) {
    await beforeRound()
    for (const scenario of scenariosIn(scenarios, round)) {
      for (const target of targetsOf(scenario, round, loaded)) {
        const { server, scripts } = loaded[target] as { server: Server; scripts: Scripts }
        note(`round ${round}: ${SCENARIOS[scenario].name} on ${target}`)
        const sampler = sampleScenario(server.pid)
        const options = { url: server.url, script: scripts[scenario], seconds: load.duration, connections, threads }
        const wrk = await runWrk(options, sampler.wrkStarted)
        const usage = sampler.stop()
        const perRequest = (total: number) => (wrk.requests > 0 ? total / wrk.requests : 0)
        const m: Measurement = {
          scenario,
          target,
          round,
          wrk,
          rps: wrk.requests / (wrk.durationUs / 1e6),
          errors: errorCount(wrk),
          rssPeakMb: usage.rssPeakMb,
          cpuMsPerRequest: perRequest(usage.cpuMs),
          postgresMsPerRequest: perRequest(usage.postgresMs),
          otherCores: usage.otherCores,
        }
        measurements.push(m)
        note(`  ${fixed(m.rps, 0)} req/s, p50 ${ms(wrk.p50)} ms, p99 ${ms(wrk.p99)} ms, errors ${m.errors}`)
      }
    }
  }
  return measurements
}

/** The measurements of one scenario on one target, all rounds. */
export function measurementsOf(measurements: Measurement[], scenario: ScenarioId, target: Target): Measurement[] {
  return measurements.filter((m) => m.scenario === scenario && m.target === target)
}

/** The round with the median req/s of one scenario on one target (of an even count, the lower middle one). */
export function medianRound(measurements: Measurement[], scenario: ScenarioId, target: Target) {
  const sorted = measurementsOf(measurements, scenario, target).sort((a, b) => a.rps - b.rps)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

/**
 * What rubrica's req/s in `scenario` is reported against: the baseline's in the same scenario on the same
 * database, or, for a scenario only rubrica serves, rubrica's own in the plain variant of it (g: e, h: a, i: e,
 * j: f, k-m: b).
 */
export function referenceOf(scenario: ScenarioId, rubrica: Target = 'rubrica'): [ScenarioId, Target] | undefined {
  const baseline: Target = rubrica === 'rubrica-citus' ? 'baseline-citus' : 'baseline'
  if (BASELINE_SCENARIOS.includes(scenario)) return [scenario, baseline]
  const plain = SCENARIOS[scenario].variantOf
  return plain === undefined ? undefined : [plain, rubrica]
}

/**
 * x / y in req/s, as the median over rounds of the ratio within each round (the two measurements of a round ran
 * minutes apart at most, so a busy spell on a shared machine weighs on both); with one round, the plain ratio.
 */
export function pairedRatio(measurements: Measurement[], x: [ScenarioId, Target], y: [ScenarioId, Target]) {
  const ratios = measurementsOf(measurements, ...x).flatMap((a) => {
    const b = measurementsOf(measurements, ...y).find((m) => m.round === a.round)
    return b && b.rps > 0 ? [a.rps / b.rps] : []
  })
  return median(ratios)
}

/**
 * How long a search's count takes for a tag on about 30% of a tenant's contacts (every tag the seed gives is):
 * sequential requests alone on the server after the scenarios, each with `count: true`, three rounds. A count
 * slower than SEARCH_COUNT_TIMEOUT_MS comes back without `total`, so "every total present" is the target.
 */
export async function measureCounts(url: string, tenant: TenantSample) {
  const counted = async (filters: object[]) => {
    const started = performance.now()
    const res = await fetch(`${url}/api/v1/contacts/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filterGroups: filters.length > 0 ? [{ filters }] : [], limit: 1, count: true }),
    })
    const answer = (await res.json()) as { total?: number }
    return { ms: performance.now() - started, total: res.status === 200 ? answer.total : undefined }
  }
  const all = (await counted([])).total ?? 0
  const times: number[] = []
  const totals: number[] = []
  for (let round = 0; round < 3; round++) {
    for (const tag of tenant.tags) {
      const { ms, total } = await counted([{ field: 'tags', op: 'hasAll', value: [tag] }])
      times.push(ms)
      if (total !== undefined) totals.push(total)
    }
  }
  const share = all > 0 ? (median(totals) ?? 0) / all : 0
  return {
    label: `search count of a tag on ~${fixed(share * 100, 0)}% of ${all.toLocaleString('en-US')} contacts < 1 s`,
    value: `median ${fixed(median(times) ?? 0, 0)} ms, max ${fixed(Math.max(...times), 0)} ms, ${totals.length}/${times.length} with total`,
    pass: totals.length === times.length && Math.max(...times) < 1000,
  }
}
