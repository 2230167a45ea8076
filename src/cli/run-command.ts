// How every command meets the database: opened from the same configuration as the server, brought up to date
// when it is the embedded one, closed whatever happens. Errors propagate to runCli, which prints them.

import { AdminError } from '../admin/guards.js'
import { announceAuthChange } from '../announcements/channel.js'
import { type Config, loadConfig } from '../config/config.js'
import { type Database, databaseOptionsFrom, openDatabase } from '../db/database.js'
import { deployMigrations } from '../db/migrate.js'
import { type CliIo, type JsonOption, messageOf, type Outcome, printOutcome } from './shared.js'

export interface RunOptions {
  /** False for `db deploy`, which migrates as its work. */
  migrateEmbedded?: boolean
}

/**
 * Opens the database, runs `work` on it (with the configuration, for what else it needs), prints the outcome,
 * announces an auth change, and closes the database.
 */
export async function runOnDatabase(
  io: CliIo,
  options: JsonOption,
  work: (database: Database, config: Config) => Promise<Outcome>,
  { migrateEmbedded = true }: RunOptions = {},
): Promise<void> {
  const config = loadConfigFrom(io.env)
  const database = await (io.openDatabase ?? openDatabase)(databaseOptionsFrom(config))
  try {
    if (migrateEmbedded) await migrateEmbeddedDatabase(database, io, options)
    const outcome = await work(database, config)
    printOutcome(io, options, outcome)
    if (outcome.authChange) await announce(database, outcome.authChange, config, io)
  } finally {
    await database.close()
  }
}

function loadConfigFrom(env: CliIo['env']): Config {
  try {
    return loadConfig(env)
  } catch (error) {
    throw new AdminError(`invalid configuration: ${messageOf(error)}`)
  }
}

/** The embedded database belongs to whichever process holds it: like the server, bring it up to date first. */
async function migrateEmbeddedDatabase(database: Database, io: CliIo, options: JsonOption): Promise<void> {
  if (database.kind !== 'pglite') return
  const { applied } = await database.withSession((session) => deployMigrations(session))
  // stderr, and not with --json: stdout holds the command's result only.
  if (applied.length > 0 && !options.json) io.stderr.write(`Applied migrations: ${applied.join(', ')}\n`)
}

/** Best effort: the change is made either way, and instances without the message see it when their cache expires. */
async function announce(database: Database, change: string, config: Config, io: CliIo): Promise<void> {
  if (await announceAuthChange(database, change)) return
  io.stderr.write(
    `warning: could not announce the change; instances apply it within AUTH_CACHE_TTL_MS (${config.AUTH_CACHE_TTL_MS} ms).\n`,
  )
}
