// The recipe's one Node.js entry point, called by the shell parts as `node helper.mjs <command> args...`:
// reading the Dockerfile, making the build context, replaying the build, checking node_modules, and the small
// tools the runs need (JSON values, a free port, an HTTP client, a database URL). Exit code 2 with "FAIL ..."
// on stderr when the Dockerfile holds something the recipe does not understand.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { context } from './context.mjs'
import { fail, stagesOf } from './dockerfile.mjs'
import { build } from './replay.mjs'

const [command, ...args] = process.argv.slice(2)

/** Every lockfile package: dev-only ones must be absent from the final file set, production ones present. */
function verifyModules(app, lockfile) {
  const lock = JSON.parse(readFileSync(lockfile, 'utf8'))
  let production = 0
  let devOnly = 0
  const problems = []
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (!path) continue
    const present = existsSync(join(app, path))
    if (entry.dev || entry.devOptional) {
      devOnly++
      if (present) problems.push(`${path} (development only) is present`)
    } else if (!entry.optional) {
      production++
      if (!present) problems.push(`${path} (production) is missing`)
    }
  }
  for (const problem of problems.slice(0, 20)) console.log(`  ${problem}`)
  console.log(`${production} production packages present, ${devOnly} development-only packages absent`)
  process.exit(problems.length > 0 ? 1 : 0)
}

/** A value from a JSON file or string: strings printed as is, arrays NUL-separated, env objects as NAME=value. */
function get(source, path) {
  const data = source.startsWith('{') ? JSON.parse(source) : JSON.parse(readFileSync(source, 'utf8'))
  const value = path.split('.').reduce((v, k) => v?.[k], data)
  if (Array.isArray(value)) process.stdout.write(value.map((v) => `${v}\0`).join(''))
  else if (value && typeof value === 'object')
    process.stdout.write(
      Object.entries(value)
        .map(([k, v]) => `${k}=${v}\0`)
        .join(''),
    )
  else process.stdout.write(value === undefined || value === null ? '' : String(value))
}

/** Prints the status, then the body; status 0 and the error code when there is no answer. */
async function http(method, url, key, body) {
  const headers = {}
  if (key) headers.authorization = `Bearer ${key}`
  if (body) headers['content-type'] = 'application/json'
  try {
    const res = await fetch(url, { method, headers, body: body || undefined, signal: AbortSignal.timeout(5000) })
    console.log(res.status)
    console.log(await res.text())
  } catch (error) {
    console.log(0)
    console.log(error.cause?.code ?? error.message)
  }
}

if (command === 'base') console.log(stagesOf(args[0])[0].image)
else if (command === 'context') context(args[0], args[1])
else if (command === 'build') {
  const image = build(args[0], args[1], args[2], args[3], args[4], Number(args[5]))
  writeFileSync(args[6], JSON.stringify(image, null, 2))
} else if (command === 'get') get(args[0], args[1])
else if (command === 'modules') verifyModules(args[0], args[1])
else if (command === 'port') {
  const server = createServer().listen(0, '127.0.0.1', () => {
    console.log(server.address().port)
    server.close()
  })
} else if (command === 'http') await http(args[0], args[1], args[2], args[3])
else if (command === 'dburl') {
  const url = new URL(args[0])
  url.pathname = `/${args[1]}`
  console.log(url.href)
} else fail(`unknown helper command ${command}`)
