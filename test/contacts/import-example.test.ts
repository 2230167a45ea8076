// The CSV import docs/api-batch.md shows (examples/import-csv.mjs), run as its reader would against a listening server:
// quoted fields, tags, an invalid row reported with its line, and a re-run that changes nothing.
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { build, createTenantWithKey } from '../helper.ts'

const EXAMPLE = 'examples/import-csv.mjs'

function run(file: string, env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [EXAMPLE, file], { env: { ...process.env, ...env } })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk) => (out += chunk))
  child.stderr.on('data', (chunk) => (err += chunk))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })))
}

t.test('docs/api-batch.md shows the example import as it is in examples/', async (t) => {
  const page = await readFile('docs/api-batch.md', 'utf8')
  t.ok(page.includes((await readFile(EXAMPLE, 'utf8')).trim()), 'docs/api-batch.md holds the file verbatim')
})

t.test('the example imports a CSV file, reports bad rows by line, and a re-run changes nothing', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app, { tags: ['vip', 'newsletter'] })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const dir = await mkdtemp(join(tmpdir(), 'rubrica-csv-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'contatti.csv')
  await writeFile(
    file,
    [
      'email,firstName,lastName,stage,tags',
      'anna@example.it,Anna,"Rossi, detta Annina",customer,vip | newsletter',
      'non-una-email,Bruno,,,',
      'carla@example.it,Carla,,,',
      '',
    ].join('\n'),
  )
  const env = { RUBRICA_URL: url, RUBRICA_KEY: key }
  const first = await run(file, env)
  t.equal(first.code, 0, first.err)
  t.same(JSON.parse(first.out), { created: 2, updated: 0, unchanged: 0, failed: 1 })
  t.match(first.err, /^riga 3: Il campo "contacts\[1\]\.email" non è valido/m, 'the bad row, by its line')
  const anna = await app.db.prisma.contact.findFirst({ where: { tenantId, emailKey: 'anna@example.it' } })
  t.match(anna, { lastName: 'Rossi, detta Annina', stage: 'customer' })
  t.equal(await app.db.prisma.contactTag.count({ where: { contactId: anna?.id } }), 2, 'tags split and trimmed')

  await writeFile(file, 'email,firstName\nanna@example.it,Anna\ncarla@example.it,Carla\n')
  const again = await run(file, env)
  t.same(JSON.parse(again.out), { created: 0, updated: 0, unchanged: 2, failed: 0 })
})
