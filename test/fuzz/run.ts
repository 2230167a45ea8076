// How the property suites run and report: run parameters (FUZZ_SEED, FUZZ_RUNS), `holds` (one property, one tap
// assertion) and the per-endpoint counters. Not a test file (no `.test.` in the name): tap does not run it.
import { appendFileSync } from 'node:fs'
import fc from 'fast-check'
import type { Test } from 'tap'

function parseInteger(name: string, fallback: number, min: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got ${raw}`)
  return value
}

/** The seed of every property in this process: FUZZ_SEED when set, otherwise a fresh one (always printed). */
export const FUZZ_SEED = parseInteger(
  'FUZZ_SEED',
  (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0,
  -(2 ** 31),
)
/** The base number of generated cases; each property scales it (see runs()). Small by default for `npm test`. */
export const FUZZ_RUNS = parseInteger('FUZZ_RUNS', 30, 1)

/** The `# FUZZ_SEED=… FUZZ_RUNS=…` comment at the top of a suite's output, to replay it. */
export function commentRunParameters(t: Pick<Test, 'comment'>): void {
  t.comment(`FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${FUZZ_RUNS}`)
}

/** FUZZ_RUNS scaled for one property, at least `min`. */
export function runs(scale: number, min = 1): number {
  return Math.max(min, Math.round(FUZZ_RUNS * scale))
}

type Reporter = Pick<Test, 'comment' | 'pass' | 'fail'>

/**
 * Runs a property with the suite's seed and reports it to tap: one passing assertion, or one failure carrying
 * fast-check's report (seed, replay path, shrunk counterexample and the error it raised).
 */
export async function holds<Ts>(
  t: Reporter,
  name: string,
  property: fc.IAsyncPropertyWithHooks<Ts> | fc.IAsyncProperty<Ts>,
  numRuns: number,
): Promise<void> {
  const details = await fc.check(property, {
    seed: FUZZ_SEED,
    numRuns,
    verbose: 0,
    endOnFailure: false,
    includeErrorInReport: true,
  })
  t.comment(`${name}: ${details.numRuns} cases (${details.numShrinks} shrinks), seed ${details.seed}`)
  if (details.failed) {
    const report = (await fc.asyncDefaultReportMessage(details)) ?? 'property failed'
    t.fail(`${name}: property failed; replay with FUZZ_SEED=${details.seed} FUZZ_RUNS=${FUZZ_RUNS}`, {
      seed: details.seed,
      path: details.counterexamplePath,
      counterexample: fc.stringify(details.counterexample),
      error: details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance),
      report,
    })
  } else {
    t.pass(`${name}: ${details.numRuns} cases hold (seed ${details.seed})`)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Counters: how many cases each endpoint got, by status. Printed as a tap comment and, when FUZZ_STATS_FILE is
// set (scripts/fuzz.ts sets it), appended there as one JSON line per suite.

export class Stats {
  readonly counts: Record<string, Record<string, number>> = {}

  count(endpoint: string, status: number | string): void {
    const byStatus = this.counts[endpoint] ?? {}
    this.counts[endpoint] = byStatus
    byStatus[String(status)] = (byStatus[String(status)] ?? 0) + 1
  }

  total(endpoint: string): number {
    return Object.values(this.counts[endpoint] ?? {}).reduce((a, b) => a + b, 0)
  }

  report(t: Reporter, suite: string): void {
    for (const endpoint of Object.keys(this.counts).sort()) {
      t.comment(`${suite} ${endpoint}: ${this.total(endpoint)} requests ${JSON.stringify(this.counts[endpoint])}`)
    }
    const file = process.env.FUZZ_STATS_FILE
    if (file) {
      appendFileSync(file, `${JSON.stringify({ suite, seed: FUZZ_SEED, runs: FUZZ_RUNS, counts: this.counts })}\n`)
    }
  }
}
