import { AdminError, assertUuid } from './guards.js'
import type { PrismaExecutor } from './prisma.js'

export interface ArchiveResult {
  id: string
  tenantId: string
  archivedAt: Date | null
  /** false when the contact already was in the requested state (both operations are idempotent). */
  changed: boolean
}

export function archiveContact(prisma: PrismaExecutor, tenantId: string, contactId: string): Promise<ArchiveResult> {
  return setArchived(prisma, tenantId, contactId, true)
}

export function unarchiveContact(prisma: PrismaExecutor, tenantId: string, contactId: string): Promise<ArchiveResult> {
  return setArchived(prisma, tenantId, contactId, false)
}

async function setArchived(
  prisma: PrismaExecutor,
  tenantId: string,
  contactId: string,
  archived: boolean,
): Promise<ArchiveResult> {
  const tenant = assertUuid(tenantId, 'Tenant id')
  const id = assertUuid(contactId, 'Contact id')
  // The condition on the current state keeps the first archiving date when the command is repeated.
  const { count } = await prisma.contact.updateMany({
    where: { id, tenantId: tenant, archivedAt: archived ? null : { not: null } },
    data: { archivedAt: archived ? new Date() : null },
  })
  const row = await prisma.contact.findFirst({
    where: { id, tenantId: tenant },
    select: { id: true, tenantId: true, archivedAt: true },
  })
  if (!row) throw new AdminError(`Contact ${id} does not exist in tenant ${tenant}.`)
  return { ...row, changed: count === 1 }
}
