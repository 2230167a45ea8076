// Reads the Dockerfile as Docker does: instructions with continuations joined, ARG before the first FROM, and the
// stages in order. The replay (replay.mjs) understands only what it reads here.
import { readFileSync } from 'node:fs'

/** Stops the helper: the shell script sees exit code 2 and the message on stderr. */
export const fail = (message) => {
  console.error(`FAIL ${message}`)
  process.exit(2)
}

/** Instructions with continuations joined; comment lines dropped, also inside a continuation, as Docker does. */
function instructions(file) {
  const out = []
  let current = ''
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim()
    if (line.startsWith('#')) continue
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `
      continue
    }
    current += line
    if (current.trim()) out.push(current.trim())
    current = ''
  }
  if (current.trim()) out.push(current.trim())
  return out.map((line) => {
    const [, word, rest] = line.match(/^(\S+)\s*(.*)$/)
    return { op: word.toUpperCase(), rest, line }
  })
}

/** The stages, each with its base image (global ARGs substituted) and its instructions after FROM. */
export function stagesOf(file) {
  const globalArgs = {}
  const stages = []
  for (const step of instructions(file)) {
    if (step.op === 'ARG' && stages.length === 0) {
      const at = step.rest.indexOf('=')
      globalArgs[at < 0 ? step.rest : step.rest.slice(0, at)] = at < 0 ? '' : step.rest.slice(at + 1)
    } else if (step.op === 'FROM') {
      const m = step.rest.match(/^(\S+)(?:\s+AS\s+(\S+))?$/i) ?? fail(`cannot read: ${step.line}`)
      const image = m[1].replace(
        /\$\{(\w+)\}|\$(\w+)/g,
        (_, a, b) => globalArgs[a ?? b] ?? fail(`no ARG for ${step.line}`),
      )
      stages.push({ name: m[2] ?? String(stages.length), image, steps: [] })
    } else if (stages.length === 0) fail(`instruction before FROM: ${step.line}`)
    else stages.at(-1).steps.push(step)
  }
  if (stages.length === 0) fail('no FROM in the Dockerfile')
  return stages
}
