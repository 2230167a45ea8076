// `rubrica db deploy`: applies pending migrations (the same runner the server uses at start).
import type { Command } from 'commander'
import type { Database } from '../db/database.js'
import { deployMigrations } from '../db/migrate.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, type CliIo, type JsonOption, type Outcome } from './shared.js'

export function addDbCommands(program: Command, io: CliIo): void {
  const db = program.command('db').description('Database schema')
  actionCommand(db, 'deploy', 'Apply pending migrations').action((options: JsonOption) =>
    runOnDatabase(io, options, deploy, { migrateEmbedded: false }),
  )
}

async function deploy(database: Database): Promise<Outcome> {
  const result = await database.withSession((session) => deployMigrations(session))
  const text =
    result.applied.length > 0
      ? `Applied ${result.applied.length} migration(s): ${result.applied.join(', ')}.\n`
      : `No pending migrations (${result.alreadyApplied} already applied).\n`
  return { json: result, text }
}
