// Operators' view of a tenant's webhooks: list them with how their deliveries stand, and remove one (its pending
// deliveries go with it, so deliveries stop at once). Creating one is the tenant's business, through the API,
// which is the only place its secret is ever shown.
import { AdminError, assertTenantExists, assertUuid } from './guards.js'
import type { PrismaExecutor } from './prisma.js'

export interface WebhookInfo {
  id: string
  url: string
  events: string[]
  description: string | null
  createdAt: Date
  /** Deliveries waiting for an attempt, and deliveries given up. */
  pending: number
  failed: number
}

export async function listWebhooks(prisma: PrismaExecutor, tenantId: string): Promise<WebhookInfo[]> {
  const id = await assertTenantExists(prisma, tenantId)
  const [webhooks, counts] = await Promise.all([
    prisma.webhook.findMany({
      where: { tenantId: id },
      select: { id: true, url: true, events: true, description: true, createdAt: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    }),
    prisma.delivery.groupBy({
      by: ['webhookId', 'state'],
      where: { tenantId: id, state: { in: ['pending', 'failed'] } },
      _count: { _all: true },
    }),
  ])
  const count = (webhookId: string, state: string) =>
    counts.find((row) => row.webhookId === webhookId && row.state === state)?._count._all ?? 0
  return webhooks.map((webhook) => ({
    ...webhook,
    // Prisma names the enum's values with an underscore; the API and the database with a dot.
    events: webhook.events.map((type) => type.replace('_', '.')),
    pending: count(webhook.id, 'pending'),
    failed: count(webhook.id, 'failed'),
  }))
}

export async function removeWebhook(
  prisma: PrismaExecutor,
  tenantId: string,
  webhookId: string,
): Promise<{ id: string }> {
  const tenant = await assertTenantExists(prisma, tenantId)
  const id = assertUuid(webhookId, 'Webhook id')
  const { count } = await prisma.webhook.deleteMany({ where: { tenantId: tenant, id } })
  if (count === 0) throw new AdminError(`Tenant ${tenant} has no webhook ${id}.`)
  return { id }
}
