// `rubrica contact archive|unarchive|erase|erasures|allow`: archiving hides a contact from the API's lists
// without deleting it; erasing deletes it everywhere at its person's request, as the API's DELETE does; the
// erasures are listed without personal data; and an erased address may be let back when its person consents again.
import type { Command } from 'commander'
import { type ArchiveResult, archiveContact, unarchiveContact } from '../admin/contacts.js'
import { allowEmail, cleanEmail, eraseContact, listErasures } from '../admin/erasures.js'
import { secretKey } from '../config/secret-key.js'
import type { ErasureRecord } from '../privacy/model.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, argumentParser, type CliIo, type JsonOption, type Outcome, table, uuid } from './shared.js'

/** The two commands differ only in their admin function; both are idempotent. */
const ARCHIVING_COMMANDS = [
  { name: 'archive', description: 'Archive a contact (idempotent)', apply: archiveContact },
  { name: 'unarchive', description: 'Restore a contact (idempotent)', apply: unarchiveContact },
]

type TenantOption = JsonOption & { tenant: string }

export function addContactCommands(program: Command, io: CliIo): void {
  const contact = program.command('contact').description('Contacts')
  for (const { name, description, apply } of ARCHIVING_COMMANDS) {
    actionCommand(contact, name, description)
      .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
      .argument('<contactId>', 'contact id', uuid('Contact id'))
      .action((contactId: string, options: TenantOption) =>
        runOnDatabase(io, options, async ({ prisma }) => archiving(await apply(prisma, options.tenant, contactId))),
      )
  }
  actionCommand(contact, 'erase', "Erase a contact at its person's request, everywhere rubrica holds it (irreversible)")
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .argument('<contactId>', 'contact id', uuid('Contact id'))
    .action((contactId: string, options: TenantOption) =>
      runOnDatabase(io, options, async (database, config) => {
        const key = await secretKey(config.WEBHOOKS_SECRET_KEY, database.dataDir)
        const erased = await eraseContact(database, key, options.tenant, contactId)
        return {
          json: erased,
          text:
            `Erased contact ${erased.id} of tenant ${erased.tenantId}: its events keep its id only, and its ` +
            'address cannot be added again unless allowed (contact allow).\n',
        }
      }),
    )
  actionCommand(contact, 'erasures', 'List the erasures of a tenant: contact id, when, and by which key or the CLI')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .action((options: TenantOption) =>
      runOnDatabase(io, options, async (database) => erasureList(await listErasures(database, options.tenant))),
    )
  actionCommand(contact, 'allow', 'Let an erased address be added again (its person consented again)')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .argument('<email>', 'the erased address', argumentParser(cleanEmail))
    .action((email: string, options: TenantOption) =>
      runOnDatabase(io, options, async (database, config) => {
        const key = await secretKey(config.WEBHOOKS_SECRET_KEY, database.dataDir)
        const result = await allowEmail(database, key, options.tenant, email)
        return {
          json: result,
          text: result.allowed
            ? `The address may be added again to tenant ${result.tenantId}.\n`
            : `The address was not erased in tenant ${result.tenantId}: nothing changed.\n`,
        }
      }),
    )
}

function archiving(result: ArchiveResult): Outcome {
  const state = result.archivedAt ? `archived since ${result.archivedAt.toISOString()}` : 'not archived'
  return { json: result, text: `Contact ${result.id} ${result.changed ? 'is now' : 'already was'} ${state}.\n` }
}

function erasureList(erasures: ErasureRecord[]): Outcome {
  const rows = erasures.map((e) => [e.contactId, e.erasedAt, e.source === 'api' ? `key ${e.keyId}` : 'cli'])
  return { json: { erasures }, text: table(['CONTACT', 'ERASED', 'BY'], rows, 'No erasures.') }
}
