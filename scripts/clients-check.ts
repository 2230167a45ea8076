// npm run clients:check: clients generated from the committed openapi.json by two mainstream generators
// (@hey-api/openapi-ts and orval), and by the first from the demo tenant's own document (its fields typed), are
// type-checked with a small program each under --strict, and the programs are run against a real server on a
// fresh embedded database with the demo data (test/clients/).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { start, waitFor } from '../test/process.ts'

const clients = 'test/clients'
const run = (command: string, args: string[], env: NodeJS.ProcessEnv = process.env) => {
  console.log(`$ ${command} ${args.join(' ')}`)
  execFileSync(command, args, { stdio: 'inherit', env })
}

const dataDir = mkdtempSync(join(tmpdir(), 'rubrica-clients-'))
const server = start({ DATA_DIR: dataDir })
let failed = false
try {
  const [, key] = await waitFor(server, /Bearer (svc_[0-9a-f]{48})/)
  const [, url] = await waitFor(server, /Server listening at (http:\/\/[^"\s]+)/)
  const env = { ...process.env, RUBRICA_URL: url, RUBRICA_KEY: key }
  // The demo tenant's own document, with its fields, as its key reads it.
  const own = await fetch(`${url}/api/v1/openapi.json`, { headers: { authorization: `Bearer ${key}` } })
  if (own.status !== 200) throw new Error(`the tenant's document: ${own.status}`)
  writeFileSync(join(dataDir, 'tenant-openapi.json'), await own.text())
  rmSync(join(clients, 'generated'), { recursive: true, force: true })
  const heyApi = (input: string, output: string) =>
    run('npx', [
      'openapi-ts',
      '-i',
      input,
      '-o',
      join(clients, output),
      '-c',
      '@hey-api/client-fetch',
      '--no-log-file',
      '-s',
    ])
  heyApi('openapi.json', 'generated/hey-api')
  heyApi(join(dataDir, 'tenant-openapi.json'), 'generated/hey-api-tenant')
  run('npx', ['orval', '--config', join(clients, 'orval.config.ts')])
  run('npx', ['tsc', '-p', clients])
  for (const program of ['hey-api.ts', 'hey-api-tenant.ts', 'orval.ts'])
    run(process.execPath, ['--import', 'tsx', join(clients, program)], env)
} catch (error) {
  failed = true
  console.error(error instanceof Error ? error.message : error)
} finally {
  server.child.kill('SIGTERM')
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
}
console.log(failed ? 'clients check: FAIL' : 'clients check: PASS')
process.exit(failed ? 1 : 0)
