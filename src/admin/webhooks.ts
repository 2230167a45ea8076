// Operators' view of a tenant's webhooks: list them with how their deliveries stand, and remove one (its position
// in the feed and its retries go with it, so deliveries stop at once). Creating one is the tenant's business, through the API,
// which is the only place its secret is ever shown.
import { AdminError, assertTenantExists, assertUuid } from './guards.js'
import type { PrismaExecutor } from './prisma.js'

export interface WebhookInfo {
  id: string
  url: string
  events: string[]
  description: string | null
  createdAt: Date
  /** Events still to deliver (not yet attempted, or due again), and deliveries given up. */
  pending: number
  failed: number
}

interface CountRow {
  webhookId: string
  pending: bigint
  failed: bigint
}

export async function listWebhooks(prisma: PrismaExecutor, tenantId: string): Promise<WebhookInfo[]> {
  const id = await assertTenantExists(prisma, tenantId)
  const [webhooks, counts] = await Promise.all([
    prisma.webhook.findMany({
      where: { tenantId: id },
      select: { id: true, url: true, events: true, description: true, createdAt: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    }),
    // Events after each webhook's position (of the types it takes), its retries, and what it gave up.
    prisma.$queryRaw<CountRow[]>`SELECT k.webhook_id AS "webhookId",
        (SELECT count(*) FROM events e LEFT JOIN event_commits t ON t.tenant_id = e.tenant_id AND t.txn = e.txn
          WHERE e.tenant_id = k.tenant_id AND (t.seq IS NULL OR (t.seq, e.n) > (k.seq, k.n)) AND e.type = ANY(w.events))
        + (SELECT count(*) FROM delivery_retries r WHERE r.tenant_id = k.tenant_id AND r.webhook_id = k.webhook_id)
          AS pending,
        (SELECT count(*) FROM delivery_attempts a WHERE a.tenant_id = k.tenant_id AND a.webhook_id = k.webhook_id
          AND a.outcome = 'given_up') AS failed
      FROM webhook_cursors k JOIN webhooks w ON w.tenant_id = k.tenant_id AND w.id = k.webhook_id
      WHERE k.tenant_id = ${id}::uuid`,
  ])
  const countOf = (webhookId: string) => counts.find((row) => row.webhookId === webhookId)
  return webhooks.map((webhook) => ({
    ...webhook,
    // Prisma names the enum's values with an underscore; the API and the database with a dot.
    events: webhook.events.map((type) => type.replace('_', '.')),
    pending: Number(countOf(webhook.id)?.pending ?? 0),
    failed: Number(countOf(webhook.id)?.failed ?? 0),
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
