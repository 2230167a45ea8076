// `rubrica contact archive|unarchive`: archiving hides a contact from the API's lists without deleting it.
import type { Command } from 'commander'
import { type ArchiveResult, archiveContact, unarchiveContact } from '../admin/contacts.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, type CliIo, type JsonOption, type Outcome, uuid } from './shared.js'

/** The two commands differ only in their admin function; both are idempotent. */
const ARCHIVING_COMMANDS = [
  { name: 'archive', description: 'Archive a contact (idempotent)', apply: archiveContact },
  { name: 'unarchive', description: 'Restore a contact (idempotent)', apply: unarchiveContact },
]

export function addContactCommands(program: Command, io: CliIo): void {
  const contact = program.command('contact').description('Contacts')
  for (const { name, description, apply } of ARCHIVING_COMMANDS) {
    actionCommand(contact, name, description)
      .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
      .argument('<contactId>', 'contact id', uuid('Contact id'))
      .action((contactId: string, options: JsonOption & { tenant: string }) =>
        runOnDatabase(io, options, async ({ prisma }) => archiving(await apply(prisma, options.tenant, contactId))),
      )
  }
}

function archiving(result: ArchiveResult): Outcome {
  const state = result.archivedAt ? `archived since ${result.archivedAt.toISOString()}` : 'not archived'
  return { json: result, text: `Contact ${result.id} ${result.changed ? 'is now' : 'already was'} ${state}.\n` }
}
