#!/usr/bin/env node
// The `rubrica` admin command: rebuilds dist/ if the sources changed, then runs the compiled CLI.
import { buildIfNeeded } from '../scripts/build-if-needed.js'

if (buildIfNeeded()) {
  const { runCli } = await import('../dist/cli/main.js')
  process.exitCode = await runCli(process.argv.slice(2))
} else {
  process.exitCode = 1
}
