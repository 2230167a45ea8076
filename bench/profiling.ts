// --profile: rubrica and the baseline under `node --cpu-prof`, one at a time and each alone on the machine (the
// measured servers are stopped by then), under GET by id, the list (first page, 90% depth, filtered) and POST;
// summarised by bench/profile.ts into top functions and CPU per request by package, rubrica against the baseline.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { stopIfInterrupted } from './lifecycle.ts'
import { BASELINE_SCENARIOS, type Load } from './measure.ts'
import { fixed, note } from './output.ts'
import {
  type CpuProfile,
  formatComparison,
  formatProfile,
  type ProfileSummary,
  readProfile,
  summariseProfile,
  type Window,
} from './profile.ts'
import { type Server, startTarget, stopServer, type Implementation as Target } from './servers.ts'
import { runWrk, SCENARIOS, type ScenarioId, type Scripts, type WrkResult } from './wrk.ts'

const PROFILED_SCENARIOS = ['a', 'b', 'c', 'd', 'e'] as const satisfies readonly ScenarioId[]
const TOP_FUNCTIONS = 25

interface ProfileRun {
  target: Target
  scenario: ScenarioId
  /** Where the .cpuprofile was kept. */
  file: string
  /** The measured load, on V8's sample clock. */
  window: Window
  /** The process's first 200 on /health, on the same clock. */
  readyUs: number
  requests: number
}

/** Profiles every profiled scenario; returns the report's lines (Markdown). */
export async function profileTargets(databaseUrl: string, scripts: Scripts, load: Load, runId: string) {
  const profileRoot = join(os.tmpdir(), `rubrica-bench-profiles-${runId}`)
  const lines: string[] = []
  for (const scenario of PROFILED_SCENARIOS) {
    const run = (target: Target) => profileScenario(target, scenario, { databaseUrl, scripts, load, profileRoot })
    const rubrica = await run('rubrica')
    const baseline = BASELINE_SCENARIOS.includes(scenario) ? await run('baseline') : undefined
    lines.push(...profileSections(rubrica, baseline))
  }
  return lines
}

function profileSections(rubrica: ProfileRun, baseline: ProfileRun | undefined): string[] {
  const name = SCENARIOS[rubrica.scenario].name
  const profile = readProfile(rubrica.file)
  const lines = rubrica.scenario === 'a' ? startupSection(rubrica, profile) : []
  // Only the measured load: start-up (module loading, schema compilation) and warm-up are left out.
  const underLoad = summariseProfile(profile, TOP_FUNCTIONS, rubrica.window)
  lines.push(
    `### CPU profile: rubrica under "${name}" (${rubrica.file}, window ${rubrica.window.fromUs} ${rubrica.window.toUs})`,
    '',
    formatProfile(underLoad, rubrica.requests),
  )
  if (baseline) lines.push(...comparisonSection(name, { run: rubrica, summary: underLoad }, baseline))
  return lines
}

/** rubrica's process from its first sample to its first 200 on /health. */
function startupSection(run: ProfileRun, profile: CpuProfile): string[] {
  const startup = { fromUs: 0, toUs: run.readyUs }
  return [
    `### CPU profile: rubrica start-up, spawn to first 200 on /health (${run.file}, window 0 ${run.readyUs})`,
    '',
    formatProfile(summariseProfile(profile, TOP_FUNCTIONS, startup)),
  ]
}

function comparisonSection(
  name: string,
  rubrica: { run: ProfileRun; summary: ProfileSummary },
  baseline: ProfileRun,
): string[] {
  const baselineSummary = summariseProfile(readProfile(baseline.file), TOP_FUNCTIONS, baseline.window)
  return [
    `### CPU per request by package, rubrica against the baseline, "${name}" ` +
      `(baseline profile ${baseline.file}, window ${baseline.window.fromUs} ${baseline.window.toUs})`,
    '',
    formatComparison(
      ['rubrica', 'baseline'],
      { summary: rubrica.summary, requests: rubrica.run.requests },
      { summary: baselineSummary, requests: baseline.requests },
    ),
  ]
}

interface ProfileSetting {
  databaseUrl: string
  scripts: Scripts
  load: Load
  /** Where the .cpuprofile files are kept. */
  profileRoot: string
}

/** Runs one target under `node --cpu-prof`: start, warm up, measure one scenario, stop (the profile is written). */
async function profileScenario(target: Target, scenario: ScenarioId, setting: ProfileSetting): Promise<ProfileRun> {
  stopIfInterrupted()
  const dir = join(setting.profileRoot, `${target}-${scenario}`)
  mkdirSync(dir, { recursive: true })
  const profiler = ['--cpu-prof', '--cpu-prof-dir', dir]
  const server = await startTarget(target, setting.databaseUrl, profiler, `${target} --cpu-prof (${scenario})`)
  let measured: { window: Window; result: WrkResult }
  try {
    measured = await profiledLoad(server, setting.scripts[scenario], setting.load)
    const rps = measured.result.requests / (measured.result.durationUs / 1e6)
    note(`profiled ${SCENARIOS[scenario].name} on ${target}: ${fixed(rps, 0)} req/s under the profiler`)
  } finally {
    await stopServer(server, 20_000)
  }
  const file = join(setting.profileRoot, `${target}-${scenario}.cpuprofile`)
  keepProfile(dir, file)
  const { window, result } = measured
  return { target, scenario, file, window, readyUs: server.readyUs, requests: result.requests }
}

/** Warm-up, then the measured load, whose window is stamped on V8's sample clock. */
async function profiledLoad(server: Server, script: string, load: Load) {
  const wrk = { url: server.url, script, connections: load.connections, threads: load.threads }
  await runWrk({ ...wrk, seconds: load.warmup })
  const fromUs = Number(process.hrtime.bigint() / 1000n)
  const result = await runWrk({ ...wrk, seconds: load.duration })
  return { window: { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) }, result }
}

/** Node names the profile after its pid and time: copy it to `file`, drop the directory. */
function keepProfile(dir: string, file: string): void {
  const written = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))
  if (!written) throw new Error(`no .cpuprofile written in ${dir}`)
  copyFileSync(join(dir, written), file)
  rmSync(dir, { recursive: true, force: true })
}
