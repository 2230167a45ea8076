// `rubrica seed`: fake tenants and contacts in bulk, for demos and load tests, with a progress bar on a terminal.
import { WriteStream } from 'node:tty'
import cliProgress from 'cli-progress'
import type { Command } from 'commander'
import { SEED_LIMITS, seed } from '../admin/seed.js'
import type { Database } from '../db/database.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, type CliIo, countUpTo, type JsonOption, type Outcome, table } from './shared.js'

type SeedCommandOptions = JsonOption & { tenants: number; contacts: number }

export function addSeedCommand(program: Command, io: CliIo): void {
  actionCommand(program, 'seed', 'Fill the database with fake tenants and contacts (for demos and load tests)')
    .requiredOption('--tenants <n>', `number of tenants, 1-${SEED_LIMITS.tenants}`, countUpTo(SEED_LIMITS.tenants))
    .requiredOption(
      '--contacts <m>',
      `contacts per tenant, 1-${SEED_LIMITS.contactsPerTenant}`,
      countUpTo(SEED_LIMITS.contactsPerTenant),
    )
    .action((options: SeedCommandOptions) =>
      runOnDatabase(io, options, (database) => seedWithProgress(database, options, io)),
    )
}

async function seedWithProgress(database: Database, options: SeedCommandOptions, io: CliIo): Promise<Outcome> {
  const started = Date.now()
  // The bar is for people watching a terminal; it never touches stdout, which --json keeps for the result.
  const bar =
    !options.json && io.stderr instanceof WriteStream && io.stderr.isTTY
      ? new cliProgress.SingleBar({ stream: io.stderr, etaBuffer: 20 }, cliProgress.Presets.shades_classic)
      : undefined
  bar?.start(options.tenants * options.contacts, 0)
  try {
    const result = await seed(database.prisma, {
      tenants: options.tenants,
      contacts: options.contacts,
      onProgress: (done) => bar?.update(done),
    })
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    const rows = result.tenants.map((t) => [t.id, t.key, t.name])
    const text =
      `Seeded ${result.tenants.length} tenant(s) with ${options.contacts} contacts each in ${seconds} s.\n` +
      table(['TENANT', 'ADMIN KEY (read/write, shown only now)', 'NAME'], rows, '')
    return { json: result, text }
  } finally {
    bar?.stop()
  }
}
