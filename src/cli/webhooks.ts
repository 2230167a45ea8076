// `rubrica webhook list|remove`: a tenant's webhooks, for operators (tenants manage theirs through the API).
import type { Command } from 'commander'
import { listWebhooks, removeWebhook, type WebhookInfo } from '../admin/webhooks.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, type CliIo, type JsonOption, type Outcome, table, uuid } from './shared.js'

type TenantOption = JsonOption & { tenant: string }

export function addWebhookCommands(program: Command, io: CliIo): void {
  const webhook = program.command('webhook').description('Webhooks of a tenant')
  actionCommand(webhook, 'list', 'List the webhooks of a tenant, with their pending and failed deliveries')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .action((options: TenantOption) =>
      runOnDatabase(io, options, async ({ prisma }) => webhookList(await listWebhooks(prisma, options.tenant))),
    )
  actionCommand(webhook, 'remove', 'Remove a webhook of a tenant; its deliveries stop at once')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .argument('<webhookId>', 'webhook id', uuid('Webhook id'))
    .action((webhookId: string, options: TenantOption) =>
      runOnDatabase(io, options, async ({ prisma }) => {
        const removed = await removeWebhook(prisma, options.tenant, webhookId)
        return { json: removed, text: `Removed webhook ${removed.id}.\n` }
      }),
    )
}

function webhookList(webhooks: WebhookInfo[]): Outcome {
  const rows = webhooks.map((w) => [
    w.id,
    w.createdAt.toISOString(),
    w.events.join(','),
    String(w.pending),
    String(w.failed),
    w.url,
  ])
  return {
    json: { webhooks },
    text: table(['ID', 'CREATED', 'EVENTS', 'PENDING', 'FAILED', 'URL'], rows, 'No webhooks.'),
  }
}
