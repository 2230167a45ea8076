// Measuring: warm-up, then every scenario on rubrica (and those the baseline serves on the baseline too) for the
// given rounds, each run of wrk sampled for RSS and CPU; and how the measurements of several rounds are summed up.
import { stopIfInterrupted } from './lifecycle.ts'
import { median, middle } from './median.ts'
import type { BenchOptions } from './options.ts'
import { fixed, ms, note } from './output.ts'
import { sampleScenario } from './sampling.ts'
import { implementationOf, type Server, type Target } from './servers.ts'
import { errorCount, runWrk, SCENARIOS, type ScenarioId, type Scripts, type WrkResult } from './wrk.ts'

/** Scenarios in the order they are reported (a run measures those of its options, in their order). */
export const ORDER: readonly ScenarioId[] = ['a', 'b', 'c', 'd', 'e', 'i', 'f', 'j', 'g', 'h', 'k', 'l', 'm']
/** Every target, in the order of odd rounds. */
export const TARGETS: readonly Target[] = ['rubrica', 'rubrica-before', 'baseline', 'rubrica-citus', 'baseline-citus']
/** The baseline serves all but the integration features (Idempotency-Key, ETags), which only rubrica has. */
export const BASELINE_SCENARIOS: readonly ScenarioId[] = ['a', 'b', 'c', 'd', 'e', 'f']

/** What shapes the load: wrk's connections and threads, seconds per scenario and of warm-up, rounds. */
export type Load = Pick<BenchOptions, 'connections' | 'threads' | 'duration' | 'warmup' | 'rounds'>

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
  /** Other people's CPU use during the scenario, in cores (see sampleScenario). */
  otherCores: number
  /** PostgreSQL's CPU per request, in milliseconds (all its processes: includes other users of the server). */
  postgresMsPerRequest: number
  wrkMsPerRequest: number
  /** CPUs left idle during the scenario, in cores. */
  idleCores: number
}

/**
 * The targets a scenario runs on, in the order of `round`: odd rounds rubrica first (on PostgreSQL, then on
 * Citus), even rounds the reverse. Only rubrica serves the scenarios the baseline does not.
 */
function targetsOf(scenario: ScenarioId, round: number, loaded: Loaded): Target[] {
  const served = TARGETS.filter(
    (target) =>
      loaded[target] !== undefined && (BASELINE_SCENARIOS.includes(scenario) || implementationOf(target) === 'rubrica'),
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
  if (round % 2 === 1) return order
  for (let i = 0; i + 1 < order.length; i++) {
    const [plain, variant] = [order[i], order[i + 1]]
    if (plain === undefined || variant === undefined || SCENARIOS[variant].variantOf !== plain) continue
    order[i] = variant
    order[i + 1] = plain
    i++
  }
  return order
}

export async function warmUp(loaded: Loaded, scenarios: readonly ScenarioId[], load: Load): Promise<void> {
  note('warming up')
  const { connections, threads } = load
  for (const scenario of scenarios) {
    for (const target of targetsOf(scenario, 1, loaded)) {
      const { server, scripts } = loaded[target] ?? unloaded(target)
      stopIfInterrupted()
      await runWrk({ url: server.url, script: scripts[scenario], seconds: load.warmup, connections, threads })
    }
  }
}

const unloaded = (target: Target): never => {
  throw new Error(`${target} is not running`)
}

/** Every scenario on its targets, `load.rounds` times; `beforeRound` runs before each round (vacuum). */
export async function measureRounds(
  loaded: Loaded,
  scenarios: readonly ScenarioId[],
  load: Load,
  beforeRound: () => Promise<void>,
): Promise<Measurement[]> {
  const measurements: Measurement[] = []
  for (let round = 1; round <= load.rounds; round++) {
    await beforeRound()
    for (const scenario of scenariosIn(scenarios, round)) {
      for (const target of targetsOf(scenario, round, loaded)) {
        const { server, scripts } = loaded[target] ?? unloaded(target)
        note(`round ${round}: ${SCENARIOS[scenario].name} on ${target}`)
        const m = await measure(scenario, target, server, scripts[scenario], load, round)
        measurements.push(m)
        note(`  ${fixed(m.rps, 0)} req/s, p50 ${ms(m.wrk.p50)} ms, p99 ${ms(m.wrk.p99)} ms, errors ${m.errors}`)
      }
    }
  }
  return measurements
}

async function measure(
  scenario: ScenarioId,
  target: Target,
  server: Server,
  script: string,
  load: Load,
  round: number,
): Promise<Measurement> {
  stopIfInterrupted()
  const sampler = sampleScenario(server.pid)
  const wrk = await runWrk({
    url: server.url,
    script,
    seconds: load.duration,
    connections: load.connections,
    threads: load.threads,
    onStart: sampler.wrkStarted,
  })
  const usage = sampler.stop()
  const perRequest = (total: number) => (wrk.requests > 0 ? total / wrk.requests : 0)
  return {
    scenario,
    target,
    round,
    wrk,
    rps: wrk.requests / (wrk.durationUs / 1e6),
    errors: errorCount(wrk),
    rssPeakMb: usage.rssPeakMb,
    cpuMsPerRequest: perRequest(usage.cpuMs),
    otherCores: usage.otherCores,
    postgresMsPerRequest: perRequest(usage.postgresMs),
    wrkMsPerRequest: perRequest(usage.wrkMs),
    idleCores: usage.idleCores,
  }
}

/** The measurements of one scenario on one target, all rounds. */
export function measurementsOf(measurements: Measurement[], scenario: ScenarioId, target: Target): Measurement[] {
  return measurements.filter((m) => m.scenario === scenario && m.target === target)
}

/** The round with the median req/s of one scenario on one target. */
export function medianRound(measurements: Measurement[], scenario: ScenarioId, target: Target) {
  return middle(measurementsOf(measurements, scenario, target), (m) => m.rps)
}

/**
 * What rubrica's req/s in `scenario` is reported against: the baseline's in the same scenario on the same
 * database, or, for a scenario only rubrica serves, rubrica's own in the plain variant of it (g: e, h: a, i: e,
 * j: f).
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
export function pairedRatio(
  measurements: Measurement[],
  x: [ScenarioId, Target],
  y: [ScenarioId, Target],
): number | undefined {
  const ratios: number[] = []
  const rounds = Math.max(0, ...measurements.map((m) => m.round))
  for (let round = 1; round <= rounds; round++) {
    const inRound = measurements.filter((m) => m.round === round)
    const a = inRound.find((m) => m.scenario === x[0] && m.target === x[1])
    const b = inRound.find((m) => m.scenario === y[0] && m.target === y[1])
    if (a && b && b.rps > 0) ratios.push(a.rps / b.rps)
  }
  return median(ratios)
}
