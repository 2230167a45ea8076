// The operators' command line (`rubrica`): migrations, tenants, API keys, tags, the tenants' own fields, archiving, webhooks and fake
// data. It opens the database from the same configuration as the server. With --json every command prints exactly
// one JSON object on stdout; errors go to stderr with exit code 1. runCli returns the exit code instead of
// exiting, so tests run it in-process. Each group of commands is a module of its own; this one wires them.
import { Command, CommanderError } from 'commander'
import { isDatabaseUnavailable } from '../db/unavailable.js'
import { addContactCommands } from './contacts.js'
import { addDbCommands } from './db.js'
import { addFieldCommands } from './fields.js'
import { addKeyCommands } from './keys.js'
import { addSeedCommand } from './seed.js'
import { type CliIo, messageOf } from './shared.js'
import { addTagCommands } from './tags.js'
import { addTenantCommands } from './tenants.js'
import { addWebhookCommands } from './webhooks.js'

export type { CliIo } from './shared.js'

export async function runCli(
  argv: string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  try {
    // The chosen command's action runs within parseAsync, once Commander has checked the whole command line.
    await buildProgram(io).parseAsync(argv, { from: 'user' })
    return 0
  } catch (error) {
    // Commander has already printed its message (or the help) through configureOutput.
    if (error instanceof CommanderError) return error.exitCode
    io.stderr.write(`error: ${failureLine(error)}\n`)
    return 1
  }
}

/**
 * A failed command in one line, never a stack trace or a source excerpt: Prisma's messages quote the calling code
 * over several lines, with the database's own words last.
 */
function failureLine(error: unknown): string {
  const lines = messageOf(error)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
  const last = lines.at(-1) ?? 'unknown error'
  if (isDatabaseUnavailable(error)) {
    return `the database could not be reached or the connection was lost (${last}): check it is up, then check what the command changed (list) and run it again.`
  }
  return last
}

function buildProgram(io: CliIo): Command {
  // Commands inherit these settings when they are created, so the groups are added after them.
  const program = new Command('rubrica')
    .description('Administration of the rubrica contacts service')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .showHelpAfterError('(run with --help for usage)')
  // In this order in the help.
  addDbCommands(program, io)
  addTenantCommands(program, io)
  addKeyCommands(program, io)
  addTagCommands(program, io)
  addFieldCommands(program, io)
  addContactCommands(program, io)
  addWebhookCommands(program, io)
  addSeedCommand(program, io)
  return program
}
