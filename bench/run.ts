// Benchmarks rubrica against a raw-SQL ceiling (bench/baseline.ts) in the same run, on the same database.
// See docs/performance.md for what each scenario does and the measured results; --help for the options.
//
// Steps: build dist/ if needed, create (or reuse with --keep) the bench database, deploy the migrations and seed
// it with the admin CLI, sample ids and deep cursors with SQL, start rubrica (dist/server.js) and the baseline,
// check both answer the same JSON, warm up, run each scenario with wrk (rubrica and baseline alternating),
// sample the servers' RSS and CPU, print one table and the target checks, then stop everything and drop the
// database (unless --keep). Targets are reported, not asserted: the full run exits 0 unless the harness
// itself failed; --smoke exits non-zero when a scenario had errors or an answer differed.
//
// The steps live in: options.ts (command line, presets), database.ts (create, reuse, seed, sample), servers.ts
// (child processes, the servers, HTTP), answers.ts (checks before measuring), wrk.ts (scenarios, Lua scripts,
// running wrk), sampling.ts (RSS and CPU from /proc), measure.ts (warm-up, rounds, medians, the search's count),
// report.ts (tables, targets, machine, JSON).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { checkAnswers } from './answers.ts'
import {
  type BenchDatabase,
  benchDatabase,
  postgresVersion,
  prepareDatabase,
  releaseDatabase,
  sampleTenants,
  vacuumBenchTables,
} from './database.ts'
import { type Loaded, measureCounts, measureRounds } from './measure.ts'
import { readCommandLine } from './options.ts'
import { describeMachine, judgeTargets, printHeader, printResults, type RunRecord, writeRecord } from './report.ts'
import { loadavg, memoryMb } from './sampling.ts'
import { buildIfNeeded, note, runningServers, sleep, startRubrica, startTargets, stopAllServers } from './servers.ts'
import { stopStartingWrk, writeLuaScripts } from './wrk.ts'

const { mode, options, keep, out } = readCommandLine()
/** Keeps the emails POSTed by this run unique on a kept database. */
const runId = Date.now().toString(36)

// How a run ends, whichever way it ends (done, failed, interrupted by a signal, or over its time budget): the
// cleanup steps registered along the way run once, in the order they were registered.
const cleanupSteps: (() => Promise<void> | void)[] = [stopAllServers]
let cleaning: Promise<void> | undefined
const cleanup = () => {
  cleaning ??= (async () => {
    for (const step of cleanupSteps) await step()
  })()
  return cleaning
}
let interrupted = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true
    note(`${signal}: stopping servers and cleaning up`)
    stopStartingWrk()
    void cleanup().finally(() => process.exit(130))
  })
}

let exitCode = 1
try {
  exitCode = await main()
} catch (error) {
  exitCode = interrupted ? 130 : 1
  if (!interrupted) {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    for (const server of runningServers())
      process.stderr.write(`--- last output of ${server.name}:\n${server.output()}\n`)
  }
} finally {
  await cleanup()
}
process.exit(exitCode)

async function main(): Promise<number> {
  // Aborts the run (cleanup, exit 1) if it outlasts an upper bound, generous on a busy machine: a hung child must
  // not hold CI forever.
  const sides = options.citus ? 2 : 1
  const scenarioRuns = options.scenarios.length * 2 * sides // at most two targets per scenario and database
  const budget =
    300 * sides + // build, deploy, start-ups, checks
    (options.tenants * options.contacts * 3 * (options.citus ? 4 : 1)) / 1000 + // seeding (Citus slower)
    scenarioRuns * (options.warmup + 35 + options.rounds * (options.duration + 35))
  setTimeout(() => {
    note(`the whole run exceeded its ${Math.round(budget)} s budget: aborting`)
    void cleanup().finally(() => process.exit(1))
  }, budget * 1000).unref()

  if (spawnSync('wrk', ['-v']).error) throw new Error('wrk is not installed (Debian package wrk, /usr/bin/wrk)')
  note('building dist/ if the sources changed (scripts/build-if-needed.js)')
  buildIfNeeded()
  const loadAtStart = loadavg()
  const database = benchDatabase(options.database)
  const machine = describeMachine(await postgresVersion(database))
  const workDir = mkdtempSync(join(os.tmpdir(), 'rubrica-bench-'))
  cleanupSteps.push(() => rmSync(workDir, { recursive: true, force: true }))

  /** Creates (or reuses) and seeds one database, samples it and writes its wrk scripts. */
  const prepareSide = async (db: BenchDatabase) => {
    cleanupSteps.push(() => releaseDatabase(db, keep)) // from here on, cleanup drops it (or, with --keep, tidies it)
    const prepared = await prepareDatabase(db, options, keep)
    // Scenario j's tenant gets as many sampled ids as all tenants together (see sampleTenants).
    const { samples, depth } = await sampleTenants(db, options, prepared.seed, options.scenarios.includes('j'))
    const scripts = writeLuaScripts(mkdtempSync(join(workDir, 'lua-')), options.scenarios, samples, runId)
    const seed = { reused: prepared.reused, seconds: prepared.seedSeconds, deepCursorRows: depth }
    return { db, samples, scripts, seed }
  }
  const onPostgres = await prepareSide(database)
  const citusSide = options.citus ? await prepareSide(benchDatabase(options.database, true)) : undefined
  const citus = citusSide && { ...citusSide.seed, postgres: await postgresVersion(citusSide.db), url: citusSide.db.url }

  // Start-up: spawn to first 200 on /health. The full run measures three cold starts and keeps the last server.
  const { targets, rubricaStartMs } = await startTargets(database.url, mode === 'smoke' ? 1 : 3)
  await sleep(500)
  const idleRssMb = { rubrica: memoryMb(targets.rubrica.pid).now, baseline: memoryMb(targets.baseline.pid).now }
  const loaded: Loaded = {
    rubrica: { server: targets.rubrica, scripts: onPostgres.scripts },
    baseline: { server: targets.baseline, scripts: onPostgres.scripts },
  }
  printHeader({ mode, options, machine, seed: onPostgres.seed, citus })
  const problems = await checkAnswers(targets, onPostgres.samples, runId)
  if (options.before !== undefined) {
    const before = await startRubrica('rubrica-before', database.url, options.before)
    loaded['rubrica-before'] = { server: before, scripts: onPostgres.scripts }
    note(`the same checks on the build in ${options.before}`)
    // Its own run id: the checks create contacts, whose emails the first checks took.
    const checked = await checkAnswers({ rubrica: before, baseline: targets.baseline }, onPostgres.samples, `${runId}b`)
    problems.push(...checked.map((p) => `before: ${p}`))
  }
  if (citusSide) {
    const onCitus = (await startTargets(citusSide.db.url, 1, '-citus')).targets
    loaded['rubrica-citus'] = { server: onCitus.rubrica, scripts: citusSide.scripts }
    loaded['baseline-citus'] = { server: onCitus.baseline, scripts: citusSide.scripts }
    note('the same checks on the Citus database')
    problems.push(...(await checkAnswers(onCitus, citusSide.samples, runId)).map((p) => `on Citus: ${p}`))
  }

  let loadBeforeMeasuring = '' // includes the warm-up; the "other CPU" column tells other people's work apart
  const measurements = await measureRounds(
    loaded,
    options.scenarios,
    options,
    () => {
      loadBeforeMeasuring = loadavg()
    },
    async () => {
      const started = performance.now()
      for (const side of [onPostgres, citusSide]) if (side) await vacuumBenchTables(side.db)
      note(`vacuumed the bench tables in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    },
  )
  const loadAfter = loadavg()
  const counts = await measureCounts(targets.rubrica.url, onPostgres.samples[0] as (typeof onPostgres.samples)[number])

  const record: RunRecord = {
    mode,
    options,
    machine,
    load: { atStart: loadAtStart, beforeMeasuring: loadBeforeMeasuring, after: loadAfter },
    seed: onPostgres.seed,
    citus,
    startMs: { rubrica: rubricaStartMs, baseline: targets.baseline.startMs },
    idleRssMb,
    measurements,
    checks: [...judgeTargets(measurements, mode, options, rubricaStartMs), counts],
    problems,
  }
  const scenarioErrors = printResults(record)
  if (out) writeRecord(out, record)
  return mode === 'smoke' && (scenarioErrors > 0 || problems.length > 0) ? 1 : 0
}
