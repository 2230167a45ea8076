// Replays the Dockerfile's stages in directories: the build stage's COPY and RUN lines run here, the final
// stage's COPY lines assemble the app directory, and its settings (ENV, USER, HEALTHCHECK, CMD...) are returned.
// Anything else stops the replay, so that the Dockerfile and this file cannot drift apart silently.
import { spawnSync } from 'node:child_process'
import { chownSync, cpSync, existsSync, mkdirSync, statSync } from 'node:fs'
import { basename, dirname, join, posix } from 'node:path'
import { fail, stagesOf } from './dockerfile.mjs'

/** A path of a stage, which must lie under its WORKDIR, mapped to the stage's directory here. */
function local(state, path, step) {
  if (!state.workdir) fail(`${step.line}: no WORKDIR before it in its stage`)
  const absolute = posix.resolve(state.workdir, path)
  if (absolute !== state.workdir && !absolute.startsWith(`${state.workdir}/`))
    fail(`${step.line}: ${path} lies outside WORKDIR ${state.workdir}; the recipe script maps only WORKDIR`)
  return join(state.dir, posix.relative(state.workdir, absolute))
}

function workdir(step, { state }) {
  if (state.workdir || !step.rest.startsWith('/')) fail(`${step.line}: one absolute WORKDIR per stage`)
  state.workdir = posix.normalize(step.rest)
}

function env(step, { state }) {
  for (const token of step.rest.split(/\s+/)) {
    const m = token.match(/^(\w+)=([^"'\s$]*)$/) ?? fail(`${step.line}: only unquoted NAME=value pairs`)
    state.env[m[1]] = m[2]
  }
}

/** Where a COPY source lies here: in the build context, or with --from in an earlier stage's directory. */
function copySource(step, src, from, { states, contextDir }) {
  if (/[*?[]/.test(src)) fail(`${step.line}: no wildcards`)
  let source
  if (from) {
    const other = states.get(from) ?? fail(`${step.line}: no earlier stage ${from}`)
    source = local(other, src, step)
  } else {
    const relative = posix.normalize(src)
    if (relative.startsWith('..') || relative.startsWith('/')) fail(`${step.line}: ${src} is outside the context`)
    source = join(contextDir, relative)
  }
  if (!existsSync(source))
    fail(
      `${step.line}: ${src} is not in ${from ? `stage ${from}` : 'the build context (committed? excluded by .dockerignore?)'}`,
    )
  return source
}

function copy(step, at) {
  const tokens = step.rest.split(/\s+/)
  let from = null
  while (tokens[0]?.startsWith('--')) {
    const flag = tokens.shift()
    if (flag.startsWith('--from=')) from = flag.slice('--from='.length)
    else if (flag !== '--link') fail(`${step.line}: ${flag} is not supported by the recipe script`)
  }
  if (tokens.length < 2 || tokens[0].startsWith('[')) fail(`${step.line}: only COPY src... dest`)
  const dest = tokens.pop()
  const target = local(at.state, dest, step)
  const intoFolder = dest.endsWith('/') || tokens.length > 1
  for (const src of tokens) {
    const source = copySource(step, src, from, at)
    if (statSync(source).isDirectory()) {
      cpSync(source, target, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true })
    } else {
      const file =
        intoFolder || (existsSync(target) && statSync(target).isDirectory()) ? join(target, basename(source)) : target
      mkdirSync(dirname(file), { recursive: true })
      cpSync(source, file, { preserveTimestamps: true })
    }
  }
}

/** A build stage's RUN line, run in the stage's WORKDIR with its ENV. */
function run(step, { stage, state, timeoutSeconds }) {
  const { rest } = step
  if (rest.startsWith('[')) fail(`${step.line}: only shell-form RUN`)
  console.log(`--- [${stage.name}] RUN ${rest}`)
  const started = Date.now()
  const result = spawnSync('sh', ['-c', rest], {
    cwd: local(state, '.', step),
    env: { ...process.env, ...state.env },
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: timeoutSeconds * 1000,
    killSignal: 'SIGKILL',
  })
  if (result.error || result.status !== 0)
    fail(`[${stage.name}] RUN ${rest}: ${result.error?.message ?? `exit code ${result.status}`}`)
  console.log(`--- [${stage.name}] RUN took ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

/** The final stage's RUN lines the script can reproduce, each with its effect outside WORKDIR. */
function finalRun(step, { state, image, dataDir }) {
  const m = step.rest.match(/^mkdir -p (\S+) && chown (\d+):(\d+) (\S+)$/)
  if (!m || m[1] !== m[4] || m[1] !== state.env.DATA_DIR)
    fail(
      `final stage: "${step.line}" is unknown to scripts/container-recipe.sh; teach it (finalRun) or keep the known line`,
    )
  mkdirSync(dataDir, { recursive: true })
  if (process.getuid?.() === 0) chownSync(dataDir, Number(m[2]), Number(m[3]))
  image.dataDirOwner = `${m[2]}:${m[3]}`
}

/** The final stage's settings, recorded for the run; false for an instruction that is none of them. */
function setting(step, image) {
  const { op, rest } = step
  if (op === 'USER') image.user = rest
  else if (op === 'EXPOSE') image.expose.push(...rest.split(/\s+/))
  else if (op === 'VOLUME') image.volumes.push(...rest.split(/\s+/))
  else if (op === 'HEALTHCHECK') {
    const m = rest.match(/^((?:--\S+\s+)*)CMD\s+(\[.*\])$/) ?? fail(`${step.line}: only exec-form HEALTHCHECK CMD`)
    image.healthcheck = { options: m[1].trim(), cmd: JSON.parse(m[2]) }
  } else if (op === 'CMD') {
    image.cmd = rest.startsWith('[') ? JSON.parse(rest) : fail(`${step.line}: only exec-form CMD`)
  } else return false
  return true
}

function replayStep(step, at) {
  const { op } = step
  if (op === 'WORKDIR') workdir(step, at)
  else if (op === 'ENV') env(step, at)
  else if (op === 'COPY') copy(step, at)
  else if (op === 'RUN' && at.final) finalRun(step, at)
  else if (op === 'RUN') run(step, at)
  else if (at.final && setting(step, at.image)) return
  else if (op !== 'LABEL') fail(`${step.line}: not understood by scripts/container-recipe.sh`)
}

/** Replays every stage; the last one is assembled in appDir (its RUN line creates dataDir). Returns its settings. */
export function build(dockerfile, contextDir, stagesDir, appDir, dataDir, timeoutSeconds) {
  const stages = stagesOf(dockerfile)
  const states = new Map()
  const image = {
    base: stages.at(-1).image,
    env: {},
    user: null,
    expose: [],
    volumes: [],
    healthcheck: null,
    cmd: null,
  }
  stages.forEach((stage, index) => {
    const final = index === stages.length - 1
    const state = { dir: final ? appDir : join(stagesDir, stage.name), workdir: null, env: {} }
    states.set(stage.name, state)
    mkdirSync(state.dir, { recursive: true })
    const at = { stage, state, states, final, image, contextDir, dataDir, timeoutSeconds }
    for (const step of stage.steps) replayStep(step, at)
    if (final) image.env = state.env
  })
  if (!image.cmd) fail('the final stage has no CMD')
  return image
}
