// `rubrica tag create|list`: the tags of a tenant (the API can attach tags to contacts, not create them).
import type { Command } from 'commander'
import { type CreatedTags, createTags, listTags, TAG_NAME_MAX_LENGTH, type TagInfo } from '../admin/tags.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, type CliIo, type JsonOption, type Outcome, table, tagNames, uuid } from './shared.js'

export function addTagCommands(program: Command, io: CliIo): void {
  const tag = program.command('tag').description('Tags of a tenant')
  actionCommand(tag, 'create', 'Create tags (names that exist already are reported, not an error)')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .argument('<name...>', `tag names, 1-${TAG_NAME_MAX_LENGTH} characters each`, tagNames)
    .action((names: string[], options: JsonOption & { tenant: string }) =>
      runOnDatabase(io, options, async ({ prisma }) => createdTags(await createTags(prisma, options.tenant, names))),
    )
  actionCommand(tag, 'list', 'List the tags of a tenant')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .action((options: JsonOption & { tenant: string }) =>
      runOnDatabase(io, options, async ({ prisma }) => tagList(await listTags(prisma, options.tenant))),
    )
}

function createdTags(result: CreatedTags): Outcome {
  const names = (tags: TagInfo[]) => tags.map((t) => t.name).join(', ')
  const text =
    (result.created.length > 0 ? `Created: ${names(result.created)}.\n` : '') +
    (result.existing.length > 0 ? `Already present: ${names(result.existing)}.\n` : '')
  return { json: result, text }
}

function tagList(tags: TagInfo[]): Outcome {
  const rows = tags.map((t) => [t.id, t.createdAt.toISOString(), t.name])
  return { json: { tags }, text: table(['ID', 'CREATED', 'NAME'], rows, 'No tags.') }
}
