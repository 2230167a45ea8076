import { Prisma } from '../generated/prisma/client.js'
import { TenantStatus } from '../generated/prisma/enums.js'
import { AdminError, assertUuid, cleanText } from './guards.js'
import type { PrismaExecutor } from './prisma.js'

export const TENANT_STATUSES = Object.values(TenantStatus)
export const TENANT_NAME_MAX_LENGTH = 200

export interface TenantSummary {
  id: string
  name: string
  status: TenantStatus
  /** Requests per rate-limit window; null: the service's RATE_LIMIT_MAX. */
  rateLimitMax: number | null
}

/** The largest per-tenant limit an operator may set (requests per window). */
export const TENANT_RATE_LIMIT_MAX = 1_000_000

export interface TenantListItem extends TenantSummary {
  createdAt: Date
}

const summary = { id: true, name: true, status: true, rateLimitMax: true } as const

/**
 * A tenant, with its event feed's row: a writing transaction makes that row when it is missing, and a second
 * writer of the tenant would wait for the first to commit (docs/decisions/0009-feed-positions-as-data.md).
 */
export async function createTenant(prisma: PrismaExecutor, name: string): Promise<TenantSummary> {
  const data = { name: cleanText(name, 'Tenant name', TENANT_NAME_MAX_LENGTH), eventFeed: { create: {} } }
  return prisma.tenant.create({ data, select: summary })
}

/** Oldest first, so the list reads in the order tenants were added. */
export async function listTenants(prisma: PrismaExecutor): Promise<TenantListItem[]> {
  return prisma.tenant.findMany({
    select: { ...summary, createdAt: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  })
}

/** Sets a tenant's own rate limit (requests per window), or with null goes back to the service's default. */
export async function setTenantRateLimit(
  prisma: PrismaExecutor,
  tenantId: string,
  rateLimitMax: number | null,
): Promise<TenantSummary> {
  const id = assertUuid(tenantId, 'Tenant id')
  if (
    rateLimitMax !== null &&
    !(Number.isInteger(rateLimitMax) && rateLimitMax >= 1 && rateLimitMax <= TENANT_RATE_LIMIT_MAX)
  ) {
    throw new AdminError(`The limit must be an integer from 1 to ${TENANT_RATE_LIMIT_MAX}.`)
  }
  return updateTenant(prisma, id, { rateLimitMax })
}

async function updateTenant(
  prisma: PrismaExecutor,
  id: string,
  data: { status?: TenantStatus; rateLimitMax?: number | null },
): Promise<TenantSummary> {
  try {
    return await prisma.tenant.update({ where: { id }, data, select: summary })
  } catch (error) {
    // P2025: the record to update does not exist.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') {
      throw new AdminError(`Tenant ${id} does not exist.`)
    }
    throw error
  }
}

export async function setTenantStatus(
  prisma: PrismaExecutor,
  tenantId: string,
  status: TenantStatus,
): Promise<TenantSummary> {
  const id = assertUuid(tenantId, 'Tenant id')
  if (!TENANT_STATUSES.includes(status)) {
    throw new AdminError(`Tenant status must be one of ${TENANT_STATUSES.join(', ')}.`)
  }
  return updateTenant(prisma, id, { status })
}
