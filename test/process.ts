// Runs the real entry point (src/server.ts) as a child process, as a user would, and reads its output.
import { type ChildProcess, spawn } from 'node:child_process'

export interface Started {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

export function start(env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      // No coverage from the child: tsx compiles src/ to other code than tap's loader does in the test processes,
      // and the report sums both under one file name with only one of their source maps (which one depends on
      // the order the coverage files are read), which made the totals differ from run to run.
      _TAPJS_PROCESSINFO_COVERAGE_: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (chunk) => {
    output += chunk
  })
  child.stderr?.on('data', (chunk) => {
    output += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

export async function waitFor(started: Started, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const match = started.output().match(pattern)
    if (match) return match
    if (started.child.exitCode !== null) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`no ${pattern} in output:\n${started.output()}`)
}
