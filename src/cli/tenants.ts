// `rubrica tenant create|list|status|limit`: the organisations that own contacts, tags and API keys.
import { Argument, type Command, Option } from 'commander'
import { AdminError } from '../admin/guards.js'
import {
  createTenant,
  listTenants,
  setTenantRateLimit,
  setTenantStatus,
  TENANT_NAME_MAX_LENGTH,
  TENANT_RATE_LIMIT_MAX,
  TENANT_STATUSES,
  type TenantListItem,
  type TenantSummary,
} from '../admin/tenants.js'
import type { TenantStatus } from '../generated/prisma/enums.js'
import { runOnDatabase } from './run-command.js'
import {
  actionCommand,
  type CliIo,
  countUpTo,
  type JsonOption,
  type Outcome,
  table,
  tenantName,
  uuid,
} from './shared.js'

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
  actionCommand(tenant, 'limit', "Set a tenant's own rate limit, or go back to the default")
    .argument('<tenantId>', 'tenant id', uuid('Tenant id'))
    .addOption(
      new Option('--per-minute <n>', `requests per rate-limit window (a minute by default), 1-${TENANT_RATE_LIMIT_MAX}`)
        .argParser(countUpTo(TENANT_RATE_LIMIT_MAX))
        .conflicts('default'),
    )
    .option('--default', "the service's RATE_LIMIT_MAX again")
    .action((tenantId: string, options: JsonOption & { perMinute?: number; default?: boolean }) => {
      if (options.perMinute === undefined && !options.default) {
        throw new AdminError('Give --per-minute <n> or --default.')
      }
      return runOnDatabase(io, options, async ({ prisma }) =>
        changedLimit(await setTenantRateLimit(prisma, tenantId, options.perMinute ?? null)),
      )
    })
}

function createdTenant(tenant: TenantSummary): Outcome {
  return { json: tenant, text: `Created tenant ${tenant.id} "${tenant.name}" (${tenant.status}).\n` }
}

function tenantList(tenants: TenantListItem[]): Outcome {
  const rows = tenants.map((t) => [
    t.id,
    t.status,
    String(t.rateLimitMax ?? 'default'),
    t.createdAt.toISOString(),
    t.name,
  ])
  return { json: { tenants }, text: table(['ID', 'STATUS', 'LIMIT', 'CREATED', 'NAME'], rows, 'No tenants.') }
}

/** Announced like a status change, so that every instance applies the new limit within a second. */
function changedLimit(tenant: TenantSummary): Outcome {
  const limit = tenant.rateLimitMax === null ? 'the default rate limit' : `${tenant.rateLimitMax} requests per window`
  return {
    json: tenant,
    text: `Tenant ${tenant.id} "${tenant.name}" now has ${limit}.\n`,
    authChange: `tenant ${tenant.id} limit ${tenant.rateLimitMax ?? 'default'}`,
  }
}

/** Every status change is announced: a suspended or closed tenant's keys must stop working everywhere. */
function changedStatus(tenant: TenantSummary): Outcome {
  return {
    json: tenant,
    text: `Tenant ${tenant.id} "${tenant.name}" is now ${tenant.status}.\n`,
    authChange: `tenant ${tenant.id} ${tenant.status}`,
  }
}
