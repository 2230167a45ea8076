// `rubrica db deploy`: applies pending migrations (the same runner the server uses at start). `rubrica db vacuum`:
// rewrites the tables that hold contacts' data, so that what erasures and changes deleted leaves their files.
import type { Command } from 'commander'
import type { Database } from '../db/database.js'
import { deployMigrations } from '../db/migrate.js'
import { CONTACT_DATA_TABLES } from '../privacy/sql.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, type CliIo, type JsonOption, type Outcome } from './shared.js'

export function addDbCommands(program: Command, io: CliIo): void {
  const db = program.command('db').description('Database schema')
  actionCommand(db, 'deploy', 'Apply pending migrations').action((options: JsonOption) =>
    runOnDatabase(io, options, deploy, { migrateEmbedded: false }),
  )
  actionCommand(
    db,
    'vacuum',
    "Rewrite the tables of contacts' data without their deleted rows (VACUUM FULL: locks each table meanwhile)",
  ).action((options: JsonOption) => runOnDatabase(io, options, vacuum))
}

/**
 * VACUUM FULL of the tables that hold contacts' data: a deleted or overwritten row stays in a table's files until
 * its space is reused; rewritten, the table's new files hold only the rows that are there (docs/api.md, "Erasure and
 * export"). The embedded database has no autovacuum at all. Outside a transaction, as VACUUM must be.
 */
async function vacuum(database: Database): Promise<Outcome> {
  await database.withSession((session) => session.exec(`VACUUM (FULL, ANALYZE) ${CONTACT_DATA_TABLES.join(', ')}`))
  return {
    json: { vacuumed: [...CONTACT_DATA_TABLES] },
    text: `Rewrote ${CONTACT_DATA_TABLES.join(', ')} without their deleted rows.\n`,
  }
}

async function deploy(database: Database): Promise<Outcome> {
  const result = await database.withSession((session) => deployMigrations(session))
  const text =
    result.applied.length > 0
      ? `Applied ${result.applied.length} migration(s): ${result.applied.join(', ')}.\n`
      : `No pending migrations (${result.alreadyApplied} already applied).\n`
  return { json: result, text }
}
