// Where the harness writes: results (the report) on stdout, progress notes on stderr; and the number formats both
// use.

export const log = (line = '') => process.stdout.write(`${line}\n`)
export const note = (line: string) => process.stderr.write(`[bench] ${line}\n`)

export const fixed = (value: number, digits: number) => value.toFixed(digits)
/** Microseconds (wrk's latencies) as milliseconds. */
export const ms = (us: number) => fixed(us / 1000, 2)
