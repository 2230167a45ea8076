// Realistic fake data in bulk, for demos and load tests. Contacts go in with one multi-row INSERT per chunk
// (json_to_recordset over one JSON parameter: no per-row round trip and no bind-parameter limit), each tenant
// in one transaction, so an interrupted seed leaves no half-filled tenant behind.
import { randomUUID } from 'node:crypto'
import { fakerIT as faker } from '@faker-js/faker'
import type { PrismaClient } from '../generated/prisma/client.js'
import { EmailStatus, Stage } from '../generated/prisma/enums.js'
import { createApiKey } from './api-keys.js'
import { AdminError } from './guards.js'
import type { PrismaExecutor } from './prisma.js'
import { createTags } from './tags.js'
import { createTenant } from './tenants.js'
import { DAY_MS } from './time.js'

export const SEED_LIMITS = { tenants: 1_000, contactsPerTenant: 1_000_000 } as const

export interface SeedOptions {
  tenants: number
  /** Contacts per tenant. */
  contacts: number
  /** Called after each inserted chunk with the contacts inserted so far, over all tenants. */
  onProgress?: (done: number, total: number) => void
}

export interface SeedResult {
  tenants: { id: string; name: string; key: string }[]
  contacts: number
}

const CHUNK_SIZE = 5_000
const TAGS_PER_TENANT = 5
/** createdAt values are spread over this span, newest first, at least 1 ms apart. */
const HISTORY_MS = 2 * 365 * DAY_MS
const ARCHIVED_SHARE = 0.05
/** Large tenants take a while; Prisma's default interactive-transaction timeout is 5 s. */
const TENANT_TRANSACTION_TIMEOUT_MS = 30 * 60_000

const TAG_POOL = [
  'newsletter',
  'vip',
  'evento-2026',
  'webinar',
  'fiera-milano',
  'clienti-storici',
  'b2b',
  'partner',
  'black-friday',
  'referral',
]
const EMAIL_DOMAINS = ['example.com', 'example.org', 'example.net', 'posta.example.com', 'studio.example.org']

const EMAIL_STATUS_WEIGHTS: { weight: number; value: EmailStatus }[] = [
  { weight: 80, value: EmailStatus.active },
  { weight: 8, value: EmailStatus.unsubscribed },
  { weight: 5, value: EmailStatus.bounced },
  { weight: 2, value: EmailStatus.complained },
  { weight: 2, value: EmailStatus.suppressed },
  { weight: 3, value: EmailStatus.pending_review },
]
const STAGE_WEIGHTS: { weight: number; value: Stage }[] = [
  { weight: 45, value: Stage.lead },
  { weight: 25, value: Stage.prospect },
  { weight: 25, value: Stage.customer },
  { weight: 5, value: Stage.ex_customer },
]
const SOURCE_WEIGHTS = [
  { weight: 30, value: 'manual' },
  { weight: 45, value: 'import' },
  { weight: 15, value: 'api' },
  { weight: 10, value: 'form' },
]
const CONSENT_WEIGHTS = [
  { weight: 55, value: 'consent' },
  { weight: 25, value: 'contract' },
  { weight: 20, value: 'unknown' },
]

/** One contacts row as json_to_recordset reads it (column names as keys, timestamps as ISO strings). */
interface ContactRow {
  id: string
  email: string | null
  first_name: string
  last_name: string
  phone: string | null
  email_status: EmailStatus
  stage: Stage
  source: string
  consent_type: string
  archived_at: string | null
  acquired_at: string
  created_at: string
  updated_at: string
  /** Its tags' names: the contacts' trigger links them in contact_tags. */
  tags: string[]
}

export function checkSeedOptions(options: Pick<SeedOptions, 'tenants' | 'contacts'>): void {
  const within = (value: number, max: number) => Number.isInteger(value) && value >= 1 && value <= max
  if (!within(options.tenants, SEED_LIMITS.tenants)) {
    throw new AdminError(`The number of tenants must be an integer from 1 to ${SEED_LIMITS.tenants}.`)
  }
  if (!within(options.contacts, SEED_LIMITS.contactsPerTenant)) {
    throw new AdminError(`The number of contacts must be an integer from 1 to ${SEED_LIMITS.contactsPerTenant}.`)
  }
}

export async function seed(prisma: PrismaClient, options: SeedOptions): Promise<SeedResult> {
  checkSeedOptions(options)
  const total = options.tenants * options.contacts
  const result: SeedResult = { tenants: [], contacts: 0 }
  for (let i = 0; i < options.tenants; i++) {
    const seeded = await prisma.$transaction(
      (tx) =>
        seedTenant(tx, options.contacts, (inserted) => {
          options.onProgress?.(result.contacts + inserted, total)
        }),
      { timeout: TENANT_TRANSACTION_TIMEOUT_MS, maxWait: 60_000 },
    )
    result.tenants.push(seeded)
    result.contacts += options.contacts
  }
  // Fresh statistics, so that the first queries on a seeded database are planned for what it now holds.
  await prisma.$executeRawUnsafe('ANALYZE contacts, contact_tags, tags')
  return result
}

async function seedTenant(
  tx: PrismaExecutor,
  contacts: number,
  onChunk: (inserted: number) => void,
): Promise<SeedResult['tenants'][number]> {
  const tenant = await createTenant(tx, faker.company.name())
  const { created: tags } = await createTags(tx, tenant.id, faker.helpers.arrayElements(TAG_POOL, TAGS_PER_TENANT))
  const tagNames = tags.map((tag) => tag.name)
  const nextCreatedAt = createdAtTimeline(contacts)
  for (let start = 0; start < contacts; start += CHUNK_SIZE) {
    const rows: ContactRow[] = []
    for (let index = start; index < Math.min(start + CHUNK_SIZE, contacts); index++) {
      // Up to three of the tenant's tags: each is on about 30% of its contacts.
      rows.push(fakeContact(index, nextCreatedAt(), faker.helpers.arrayElements(tagNames, { min: 0, max: 3 })))
    }
    await insertContacts(tx, tenant.id, rows)
    onChunk(start + rows.length)
  }
  const issued = await createApiKey(tx, {
    tenantId: tenant.id,
    role: 'admin',
    scopes: ['contacts:read', 'contacts:write'],
    label: 'seed',
  })
  return { id: tenant.id, name: tenant.name, key: issued.key }
}

/** Successive createdAt values: strictly decreasing from now, at least 1 ms apart (createdAt is unique per tenant). */
function createdAtTimeline(count: number): () => number {
  const averageGap = Math.max(1, Math.floor(HISTORY_MS / count))
  let previous = Date.now()
  return () => {
    previous -= faker.number.int({ min: 1, max: 2 * averageGap - 1 })
    return previous
  }
}

function fakeContact(index: number, createdAt: number, tags: string[]): ContactRow {
  const firstName = faker.person.firstName()
  const lastName = faker.person.lastName()
  const hasEmail = faker.number.float() >= 0.03
  const importedEarlier = faker.datatype.boolean(0.4)
  const acquiredAt = importedEarlier ? createdAt - faker.number.int({ min: 1, max: 180 * DAY_MS }) : createdAt
  const archivedAt =
    faker.number.float() < ARCHIVED_SHARE ? faker.number.int({ min: createdAt, max: Date.now() }) : null
  const updatedAt =
    archivedAt ?? faker.number.int({ min: createdAt, max: Math.min(Date.now(), createdAt + 30 * DAY_MS) })
  return {
    id: randomUUID(),
    // The index makes every address unique within the tenant, whatever names faker draws.
    email: hasEmail
      ? `${asciiLocalPart(firstName)}.${asciiLocalPart(lastName)}${index}@${faker.helpers.arrayElement(EMAIL_DOMAINS)}`
      : null,
    first_name: firstName,
    last_name: lastName,
    phone: !hasEmail || faker.datatype.boolean(0.6) ? italianMobile() : null,
    email_status: faker.helpers.weightedArrayElement(EMAIL_STATUS_WEIGHTS),
    stage: faker.helpers.weightedArrayElement(STAGE_WEIGHTS),
    source: faker.helpers.weightedArrayElement(SOURCE_WEIGHTS),
    consent_type: faker.helpers.weightedArrayElement(CONSENT_WEIGHTS),
    archived_at: archivedAt === null ? null : new Date(archivedAt).toISOString(),
    acquired_at: new Date(acquiredAt).toISOString(),
    created_at: new Date(createdAt).toISOString(),
    updated_at: new Date(updatedAt).toISOString(),
    tags,
  }
}

/** "Niccolò D'Amico" -> "niccolo", "damico". */
function asciiLocalPart(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[^A-Za-z0-9]/g, '')
    .toLowerCase()
}

function italianMobile(): string {
  return `+39 3${faker.string.numeric(2)} ${faker.string.numeric(3)} ${faker.string.numeric(4)}`
}

async function insertContacts(tx: PrismaExecutor, tenantId: string, rows: ContactRow[]): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO "contacts" ("id", "tenant_id", "email", "first_name", "last_name", "phone", "email_status", "stage",
      "source", "consent_type", "archived_at", "acquired_at", "created_at", "updated_at", "tags")
    SELECT r.id, ${tenantId}::uuid, r.email, r.first_name, r.last_name, r.phone, r.email_status::"email_status",
      r.stage::"stage", r.source, r.consent_type, r.archived_at, r.acquired_at, r.created_at, r.updated_at, r.tags
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(id uuid, email text, first_name text, last_name text,
      phone text, email_status text, stage text, source text, consent_type text, archived_at timestamptz,
      acquired_at timestamptz, created_at timestamptz, updated_at timestamptz, tags text[])`
}
