// First start on an empty database: a demo tenant with a few tags, two fields of its own, a handful of contacts and one read/write
// key, so that the API can be tried at once. The key is returned to be printed once; it is stored hashed.

import { createApiKey } from '../admin/api-keys.js'
import type { PrismaExecutor } from '../admin/prisma.js'
import { createTags } from '../admin/tags.js'
import { createTenant } from '../admin/tenants.js'
import { DAY_MS } from '../admin/time.js'
import type { PrismaClient } from '../generated/prisma/client.js'
import type { EmailStatus, Stage } from '../generated/prisma/enums.js'

export const DEMO_TENANT_NAME = 'Demo'
export const DEMO_KEY_LABEL = 'demo'

/** Serialises concurrent first starts (several instances on one PostgreSQL); any fixed number would do. */
const DEMO_LOCK_ID = 72707370

const DEMO_TAGS = ['newsletter', 'vip', 'evento-2026'] as const
type DemoTag = (typeof DEMO_TAGS)[number]

/** The demo tenant's own fields (docs/api-fields.md), which some demo contacts hold. */
const DEMO_FIELDS: { name: string; type: string; label: string; options?: string[] }[] = [
  { name: 'livello', type: 'enum', label: 'Livello cliente', options: ['bronzo', 'argento', 'oro'] },
  { name: 'compleanno', type: 'date', label: 'Compleanno' },
]

interface DemoContact {
  firstName: string
  lastName: string
  email: string | null
  phone: string | null
  emailStatus: EmailStatus
  stage: Stage
  source: 'manual' | 'import'
  consentType: string
  tags: DemoTag[]
  /** Values of DEMO_FIELDS. */
  values?: { livello?: 'bronzo' | 'argento' | 'oro'; compleanno?: string }
  /** How long ago the contact was entered, and acquired (imports were collected before they were entered). */
  createdDaysAgo: number
  acquiredDaysAgo: number
  archivedDaysAgo?: number
}

const DEMO_CONTACTS: DemoContact[] = [
  {
    firstName: 'Giulia',
    lastName: 'Bianchi',
    email: 'giulia.bianchi@example.com',
    phone: '+39 347 218 5531',
    emailStatus: 'active',
    stage: 'customer',
    source: 'manual',
    consentType: 'contract',
    tags: ['newsletter', 'vip'],
    values: { livello: 'oro', compleanno: '1988-04-12' },
    createdDaysAgo: 140,
    acquiredDaysAgo: 140,
  },
  {
    firstName: 'Marco',
    lastName: 'Rossi',
    email: 'marco.rossi@example.org',
    phone: null,
    emailStatus: 'active',
    stage: 'prospect',
    source: 'import',
    consentType: 'consent',
    tags: ['evento-2026'],
    createdDaysAgo: 95,
    acquiredDaysAgo: 120,
  },
  {
    firstName: 'Francesca',
    lastName: 'Esposito',
    email: 'f.esposito@example.net',
    phone: '+39 333 904 1276',
    emailStatus: 'pending_review',
    stage: 'lead',
    source: 'import',
    consentType: 'unknown',
    tags: ['newsletter'],
    createdDaysAgo: 95.5,
    acquiredDaysAgo: 121,
  },
  {
    firstName: 'Alessandro',
    lastName: 'Romano',
    email: 'alessandro.romano@example.com',
    phone: '+39 02 8736 4410',
    emailStatus: 'active',
    stage: 'customer',
    source: 'manual',
    consentType: 'contract',
    tags: ['vip'],
    values: { livello: 'argento' },
    createdDaysAgo: 60,
    acquiredDaysAgo: 60,
  },
  {
    firstName: 'Chiara',
    lastName: 'Colombo',
    email: 'chiara.colombo@example.org',
    phone: null,
    emailStatus: 'unsubscribed',
    stage: 'ex_customer',
    source: 'manual',
    consentType: 'consent',
    tags: [],
    createdDaysAgo: 300,
    acquiredDaysAgo: 300,
    archivedDaysAgo: 12,
  },
  {
    firstName: 'Luca',
    lastName: 'Ricci',
    email: 'luca.ricci@example.net',
    phone: '+39 349 552 0873',
    emailStatus: 'bounced',
    stage: 'lead',
    source: 'import',
    consentType: 'consent',
    tags: ['newsletter', 'evento-2026'],
    createdDaysAgo: 30,
    acquiredDaysAgo: 45,
  },
  {
    firstName: 'Sofia',
    lastName: 'Marino',
    email: null,
    phone: '+39 328 771 0394',
    emailStatus: 'active',
    stage: 'prospect',
    source: 'manual',
    consentType: 'consent',
    tags: [],
    createdDaysAgo: 3,
    acquiredDaysAgo: 3,
  },
]

export async function createDemoIfEmpty(prisma: PrismaClient): Promise<{ tenantId: string; key: string } | null> {
  return prisma.$transaction(
    async (tx) => {
      // The lock is held until the transaction ends; whoever waited for it then sees the demo and does nothing.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${DEMO_LOCK_ID})`
      if ((await tx.tenant.count()) > 0) return null
      return createDemo(tx)
    },
    // Waiting for another starter's lock counts against the transaction's time (Prisma's default is 5 s).
    { timeout: 60_000, maxWait: 30_000 },
  )
}

async function createDemo(tx: PrismaExecutor): Promise<{ tenantId: string; key: string }> {
  const tenant = await createTenant(tx, DEMO_TENANT_NAME)
  await createTags(tx, tenant.id, [...DEMO_TAGS])
  await tx.customField.createMany({
    data: DEMO_FIELDS.map((field) => ({ ...field, tenantId: tenant.id })),
  })
  const now = Date.now()
  const ago = (days: number) => new Date(now - Math.round(days * DAY_MS))
  for (const { tags, values, createdDaysAgo, acquiredDaysAgo, archivedDaysAgo, ...person } of DEMO_CONTACTS) {
    await tx.contact.create({
      data: {
        ...person,
        fields: values ?? {},
        tenantId: tenant.id,
        createdAt: ago(createdDaysAgo),
        updatedAt: ago(archivedDaysAgo ?? createdDaysAgo),
        acquiredAt: ago(acquiredDaysAgo),
        archivedAt: archivedDaysAgo === undefined ? null : ago(archivedDaysAgo),
        tags,
      },
    })
  }
  const issued = await createApiKey(tx, {
    tenantId: tenant.id,
    role: 'admin',
    scopes: ['contacts:read', 'contacts:write'],
    label: DEMO_KEY_LABEL,
  })
  return { tenantId: tenant.id, key: issued.key }
}
