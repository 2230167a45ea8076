// Benchmarks rubrica against a raw-SQL ceiling (bench/baseline.ts) in the same run, on the same database.
// See docs/performance.md for what each scenario does and the measured results.
//
//   npm run bench                      # 10 tenants x 100,000 contacts, 10 s per scenario, 50 connections
//   npm run bench -- --smoke           # 2 x 2,000, 2 s per scenario, 10 connections (CI)
//   npm run bench -- --large           # 1 x 1,000,000, 10 connections, list p99 target
//   tsx bench/run.ts --keep            # reuse a seeded database
//   npm run bench -- --one-tenant      # POST and PATCH on one tenant against the same load over every tenant
//   npm run bench -- --citus           # the same scenarios on the Citus cluster beside PostgreSQL, alternating
//
// Steps: build dist/ if needed, create (or reuse with --keep) the bench database, deploy the migrations and seed
// it with the admin CLI, sample ids and deep cursors with SQL, start rubrica (dist/server.js) and the baseline,
// check both answer the same JSON, warm up, run each scenario with wrk (rubrica and baseline alternating),
// sample the servers' RSS and CPU, print one table and the target checks, then stop everything and drop the
// database (unless --keep). Targets are reported, not asserted: the full run exits 0 unless the harness
// itself failed; --smoke exits non-zero when a scenario had errors.
//
// The steps live in: options.ts (command line, presets), database.ts (create, reuse, seed, sample), servers.ts
// (child processes, the two servers, HTTP), answers.ts (checks before measuring), wrk.ts (Lua scripts, running
// wrk), sampling.ts (RSS and CPU from /proc), measure.ts (warm-up, rounds, medians),
// verdicts.ts (the targets), report.ts (tables, machine, JSON), lifecycle.ts (cleanup, signals, time budget).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { checkAnswers } from './answers.ts'
import { measureCounts } from './counts.ts'
import {
  type BenchDatabase,
  benchDatabase,
  type PreparedDatabase,
  postgresVersion,
  prepareDatabase,
  releaseDatabase,
  sampleTenants,
  vacuumBenchTables,
} from './database.ts'
import { cleanUpOnSignals, cleanup, onCleanup, startWatchdog, wasInterrupted } from './lifecycle.ts'
import { type Loaded, measureRounds, warmUp } from './measure.ts'
import { readCommandLine } from './options.ts'
import { note } from './output.ts'
import { describeMachine, printHeader, printResults, type RunRecord, writeRecord } from './report.ts'
import { loadavg, rssMb } from './sampling.ts'
import { buildIfNeeded, runningServers, sleep, startBefore, startTargets, stopAllServers } from './servers.ts'
import { judgeTargets } from './verdicts.ts'
import { type Scripts, type TenantSample, writeLuaScripts } from './wrk.ts'

const { mode, options, keep, out } = readCommandLine()
const database = benchDatabase(options.database)
/** With --citus: a database of the same name on the Citus coordinator, seeded alike. */
const citusDatabase = options.citus ? benchDatabase(options.database, true) : undefined
/** Scenario j's tenant gets as many sampled ids as all tenants together (see sampleTenants). */
const oneTenant = options.scenarios.includes('j')
/** Keeps the emails POSTed by this run unique on a kept database. */
const runId = Date.now().toString(36)

onCleanup(stopAllServers)
cleanUpOnSignals()

let exitCode = 1
try {
  exitCode = await main()
} catch (error) {
  exitCode = wasInterrupted() ? 130 : reportFailure(error)
} finally {
  await cleanup()
}
process.exit(exitCode)

async function main(): Promise<number> {
  startWatchdog(timeBudgetSeconds())
  checkWrkAndBuild()
  const loadAtStart = loadavg()
  const machine = describeMachine(await postgresVersion(database))

  const { prepared, samples, depth, scripts } = await prepareSide(database)
  const citus = citusDatabase && {
    ...(await prepareSide(citusDatabase)),
    postgres: await postgresVersion(citusDatabase),
  }

  // Start-up: spawn to first 200 on /health. The full run measures three cold starts and keeps the last server.
  const { targets, rubricaStartMs } = await startTargets(database.url, mode === 'smoke' ? 1 : 3)
  await sleep(500)
  const idleRssMb = { rubrica: rssMb(targets.rubrica.pid), baseline: rssMb(targets.baseline.pid) }
  const loaded: Loaded = {
    rubrica: { server: targets.rubrica, scripts },
    baseline: { server: targets.baseline, scripts },
  }

  const seeding = { reused: prepared.reused, seconds: prepared.seedSeconds, deepCursorRows: depth }
  const citusSeeding = citus && {
    reused: citus.prepared.reused,
    seconds: citus.prepared.seedSeconds,
    deepCursorRows: citus.depth,
    postgres: citus.postgres,
    url: citus.database.url,
  }
  printHeader({ mode, options, machine, seed: seeding, citus: citusSeeding })
  const problems = await checkAnswers(targets, samples, runId)
  if (options.before !== undefined) {
    const before = await startBefore(options.before, database.url)
    loaded['rubrica-before'] = { server: before, scripts }
    note(`the same checks on the build in ${options.before}`)
    // Its own run id: the checks create contacts, whose emails the first checks took.
    const checked = await checkAnswers({ rubrica: before, baseline: targets.baseline }, samples, `${runId}b`)
    problems.push(...checked.map((p) => `before: ${p}`))
  }
  if (citus) {
    const onCitus = (await startTargets(citus.database.url, 1, '-citus')).targets
    loaded['rubrica-citus'] = { server: onCitus.rubrica, scripts: citus.scripts }
    loaded['baseline-citus'] = { server: onCitus.baseline, scripts: citus.scripts }
    note('the same checks on the Citus database')
    problems.push(...(await checkAnswers(onCitus, citus.samples, runId)).map((p) => `on Citus: ${p}`))
  }

  await warmUp(loaded, options.scenarios, options)
  const loadBeforeMeasuring = loadavg() // includes the warm-up; the "other CPU" column tells other people's work apart
  const measurements = await measureRounds(loaded, options.scenarios, options, async () => {
    const started = performance.now()
    await vacuumBenchTables(database)
    if (citus) await vacuumBenchTables(citus.database)
    note(`vacuumed the bench tables in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  })
  const loadAfter = loadavg()
  const counts = await measureCounts(targets.rubrica.url, samples[0] as TenantSample)

  const record: RunRecord = {
    mode,
    options,
    machine,
    load: { atStart: loadAtStart, beforeMeasuring: loadBeforeMeasuring, after: loadAfter },
    seed: seeding,
    citus: citusSeeding,
    startMs: { rubrica: rubricaStartMs, baseline: targets.baseline.startMs },
    idleRssMb,
    measurements,
    checks: [...judgeTargets(measurements, { mode, options, rubricaStartMs }), counts],
    problems,
  }
  const scenarioErrors = printResults(record)
  if (out) writeRecord(out, record)
  return mode === 'smoke' && (scenarioErrors > 0 || problems.length > 0) ? 1 : 0
}

/** Creates (or reuses) and seeds one database, samples it and writes its wrk scripts. */
async function prepareSide(db: BenchDatabase): Promise<{
  database: BenchDatabase
  prepared: PreparedDatabase
  samples: TenantSample[]
  depth: string
  scripts: Scripts
}> {
  onCleanup(() => releaseDatabase(db, keep)) // from here on, cleanup drops it (or, with --keep, tidies it)
  const prepared = await prepareDatabase(db, options, keep)
  const { samples, depth } = await sampleTenants(db, options, prepared.seed, oneTenant)
  return { database: db, prepared, samples, depth, scripts: writeScripts(samples) }
}

/** An upper bound of the whole run, generous on a busy machine: beyond it something hangs. */
function timeBudgetSeconds(): number {
  const sides = options.citus ? 2 : 1
  const scenarioCount = options.scenarios.length * 2 * sides // at most two targets per scenario and database
  return (
    300 * sides + // build, deploy, start-ups, checks
    (options.tenants * options.contacts * 3 * (options.citus ? 4 : 1)) / 1000 + // seeding (the seed command's bound; Citus slower)
    scenarioCount * (options.warmup + 35) + // warm-up
    scenarioCount * options.rounds * (options.duration + 35)
  )
}

function checkWrkAndBuild(): void {
  if (spawnSync('wrk', ['-v']).error) throw new Error('wrk is not installed (Debian package wrk, /usr/bin/wrk)')
  note('building dist/ if the sources changed (scripts/build-if-needed.js)')
  buildIfNeeded()
}

/** The Lua scripts of the scenarios, in a temporary directory removed at cleanup. */
function writeScripts(samples: TenantSample[]): Scripts {
  const workDir = mkdtempSync(join(os.tmpdir(), 'rubrica-bench-'))
  onCleanup(() => rmSync(workDir, { recursive: true, force: true }))
  return writeLuaScripts(workDir, samples, runId)
}

/** Prints the error and the last output of the servers still running; returns the exit code. */
function reportFailure(error: unknown): number {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  for (const server of runningServers())
    process.stderr.write(`--- last output of ${server.name}:\n${server.output()}\n`)
  return 1
}
