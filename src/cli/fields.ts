// `rubrica field create|list|delete`: the tenant's own fields, with the rules of /api/v1/fields.
import type { Command } from 'commander'
import { createField, deleteField, listFields } from '../admin/fields.js'
import { type CustomFieldCreate, FIELD_TYPES, type FieldDefinition } from '../contacts/custom-fields/model.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, type CliIo, type JsonOption, type Outcome, table, uuid } from './shared.js'

type TenantOption = JsonOption & { tenant: string }

export function addFieldCommands(program: Command, io: CliIo): void {
  const field = program.command('field').description('The tenant’s own fields, which contacts carry in `fields`')
  actionCommand(field, 'create', 'Define a field of the tenant (docs/api-fields.md)')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .requiredOption('--name <name>', 'lower-case letters, digits and _, starting with a letter')
    .requiredOption('--type <type>', FIELD_TYPES.join('|'))
    .option('--label <label>', 'a name for people')
    .option('--options <a,b>', 'enum and multiEnum: the values allowed, comma-separated')
    .option('--max-length <n>', 'text: the longest a value may be')
    .action(
      (options: TenantOption & { name: string; type: string; label?: string; options?: string; maxLength?: string }) =>
        runOnDatabase(io, options, async (database) => {
          const input = {
            name: options.name,
            type: options.type,
            ...(options.label !== undefined && { label: options.label }),
            ...(options.options !== undefined && { options: options.options.split(',').map((o) => o.trim()) }),
            ...(options.maxLength !== undefined && { maxLength: Number(options.maxLength) }),
          } as CustomFieldCreate
          const created = await createField(database, options.tenant, input)
          return { json: created, text: `Created field ${created.name} (${created.type}).\n` }
        }),
    )
  actionCommand(field, 'list', 'List the fields of a tenant')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .action((options: TenantOption) =>
      runOnDatabase(io, options, async (database) => fieldList(await listFields(database, options.tenant))),
    )
  actionCommand(field, 'delete', 'Delete a field of a tenant; its values leave every contact')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .argument('<name>', 'the field’s name')
    .action((name: string, options: TenantOption) =>
      runOnDatabase(io, options, async (database) => {
        const { reclaimed } = await deleteField(database, options.tenant, name)
        return {
          json: { name, reclaimed },
          text: `Deleted field ${name}; removed its value from ${reclaimed} contacts.\n`,
        }
      }),
    )
}

function fieldList(fields: FieldDefinition[]): Outcome {
  const rows = fields.map((f) => [
    f.name,
    f.type,
    f.options?.join(',') ?? (f.maxLength !== undefined ? `max ${f.maxLength}` : ''),
    f.label ?? '',
  ])
  return { json: { fields }, text: table(['NAME', 'TYPE', 'RULE', 'LABEL'], rows, 'No fields.') }
}
