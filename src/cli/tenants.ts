// `rubrica tenant create|list|status`: the organisations that own contacts, tags and API keys.
import { Argument, type Command } from 'commander'
import {
  createTenant,
  listTenants,
  setTenantStatus,
  TENANT_NAME_MAX_LENGTH,
  TENANT_STATUSES,
  type TenantListItem,
  type TenantSummary,
} from '../admin/tenants.js'
import type { TenantStatus } from '../generated/prisma/enums.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, type CliIo, type JsonOption, type Outcome, table, tenantName, uuid } from './shared.js'

export function addTenantCommands(program: Command, io: CliIo): void {
  const tenant = program.command('tenant').description('Tenants (organisations)')
  actionCommand(tenant, 'create', 'Create a tenant')
    .requiredOption('--name <name>', `tenant name, 1-${TENANT_NAME_MAX_LENGTH} characters`, tenantName)
    .action((options: JsonOption & { name: string }) =>
      runOnDatabase(io, options, async ({ prisma }) => createdTenant(await createTenant(prisma, options.name))),
    )
  actionCommand(tenant, 'list', 'List tenants').action((options: JsonOption) =>
    runOnDatabase(io, options, async ({ prisma }) => tenantList(await listTenants(prisma))),
  )
  actionCommand(tenant, 'status', 'Set the status of a tenant')
    .argument('<tenantId>', 'tenant id', uuid('Tenant id'))
    .addArgument(new Argument('<status>', 'new status').choices(TENANT_STATUSES))
    .action((tenantId: string, status: TenantStatus, options: JsonOption) =>
      runOnDatabase(io, options, async ({ prisma }) => changedStatus(await setTenantStatus(prisma, tenantId, status))),
    )
}

function createdTenant(tenant: TenantSummary): Outcome {
  return { json: tenant, text: `Created tenant ${tenant.id} "${tenant.name}" (${tenant.status}).\n` }
}

function tenantList(tenants: TenantListItem[]): Outcome {
  const rows = tenants.map((t) => [t.id, t.status, t.createdAt.toISOString(), t.name])
  return { json: { tenants }, text: table(['ID', 'STATUS', 'CREATED', 'NAME'], rows, 'No tenants.') }
}

/** Every status change is announced: a suspended or closed tenant's keys must stop working everywhere. */
function changedStatus(tenant: TenantSummary): Outcome {
  return {
    json: tenant,
    text: `Tenant ${tenant.id} "${tenant.name}" is now ${tenant.status}.\n`,
    authChange: `tenant ${tenant.id} ${tenant.status}`,
  }
}
