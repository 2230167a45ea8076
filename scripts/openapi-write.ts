// npm run openapi:write: writes openapi.json at the repository root from the route schemas, as the server
// serves it. The suite fails while the committed file and the served document differ.
import { writeFileSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config/config.ts'
import { openDatabase, PGLITE_EXTENSIONS } from '../src/db/database.ts'

export async function servedDocument(): Promise<string> {
  const config = loadConfig({ LOG_LEVEL: 'silent', DEMO_ON_EMPTY: 'false' })
  // The document depends on the routes only; an empty in-memory database is enough to build the app.
  const database = await openDatabase({ pglite: new PGlite({ extensions: PGLITE_EXTENSIONS }) })
  const app = await buildApp(config, { database })
  await app.ready()
  const document = `${JSON.stringify(app.swagger(), null, 2)}\n`
  await app.close()
  await database.close()
  return document
}

writeFileSync('openapi.json', await servedDocument())
console.log('Wrote openapi.json')
