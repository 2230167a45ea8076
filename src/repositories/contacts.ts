// Data access for contacts. Every method takes the tenant id and filters by it: no query here can reach
// another tenant's rows, and handlers never touch Prisma directly.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js'
import type { Contact, ContactCreate, ContactList, ContactListQuery, ContactUpdate } from '../schemas/contacts.js'

const contactWithTags = {
  tags: { select: { tag: { select: { name: true } } } },
} satisfies Prisma.ContactInclude

type ContactRow = Prisma.ContactGetPayload<{ include: typeof contactWithTags }>

function toContact(row: ContactRow): Contact {
  return {
    id: row.id,
    email: row.email,
    firstName: row.firstName,
    lastName: row.lastName,
    phone: row.phone,
    emailStatus: row.emailStatus,
    stage: row.stage,
    source: row.source,
    consentType: row.consentType,
    tags: row.tags.map((t) => t.tag.name).sort(),
    archivedAt: row.archivedAt?.toISOString() ?? null,
    acquiredAt: row.acquiredAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

export type CreateResult =
  | { kind: 'created'; contact: Contact }
  | { kind: 'unknown_tags'; names: string[] }
  | { kind: 'conflict'; existing: { id: string; status: string } }

export class ContactRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Newest first. createdAt is unique per tenant (database trigger), so "older than the cursor" never skips a tie. */
  async list(tenantId: string, query: ContactListQuery): Promise<ContactList> {
    const rows = await this.prisma.contact.findMany({
      where: {
        tenantId,
        ...(query.cursor !== undefined && { createdAt: { lt: new Date(query.cursor) } }),
        ...(query.emailStatus !== undefined && { emailStatus: query.emailStatus }),
        ...(query.stage !== undefined && { stage: query.stage }),
        ...(!query.includeArchived && { archivedAt: null }),
      },
      orderBy: { createdAt: 'desc' },
      // One row more than asked tells whether a next page exists, so the last page says next: null.
      take: query.limit + 1,
      include: contactWithTags,
    })
    const page = rows.slice(0, query.limit)
    const last = page.at(-1)
    return {
      data: page.map(toContact),
      next: rows.length > query.limit && last ? last.createdAt.toISOString() : null,
    }
  }

  async get(tenantId: string, id: string): Promise<Contact | null> {
    const row = await this.prisma.contact.findFirst({ where: { id, tenantId }, include: contactWithTags })
    return row ? toContact(row) : null
  }

  async create(tenantId: string, input: ContactCreate): Promise<CreateResult> {
    const tagNames = [...new Set(input.tags ?? [])]
    const tags =
      tagNames.length === 0
        ? []
        : await this.prisma.tag.findMany({
            where: { tenantId, name: { in: tagNames } },
            select: { id: true, name: true },
          })
    if (tags.length < tagNames.length) {
      const known = new Set(tags.map((t) => t.name))
      return { kind: 'unknown_tags', names: tagNames.filter((n) => !known.has(n)) }
    }
    try {
      const row = await this.prisma.contact.create({
        data: {
          tenantId,
          email: input.email,
          phone: input.phone ?? null,
          firstName: input.firstName ?? null,
          lastName: input.lastName ?? null,
          consentType: input.consentType ?? 'unknown',
          source: 'api',
          tags: { create: tags.map((t) => ({ tagId: t.id })) },
        },
        include: contactWithTags,
      })
      return { kind: 'created', contact: toContact(row) }
    } catch (error) {
      // The only unique key a new contact can break is (tenant, lower(email)): the trigger moves created_at.
      if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')) throw error
      const existing = await this.prisma.contact.findFirst({
        where: { tenantId, emailKey: input.email.toLowerCase() },
        select: { id: true, emailStatus: true },
      })
      if (!existing) throw error
      return { kind: 'conflict', existing: { id: existing.id, status: existing.emailStatus } }
    }
  }

  /** Changes only the fields present; an empty patch reads the contact unchanged. */
  async update(tenantId: string, id: string, patch: ContactUpdate): Promise<Contact | null> {
    if (Object.keys(patch).length === 0) return this.get(tenantId, id)
    try {
      const row = await this.prisma.contact.update({ where: { id, tenantId }, data: patch, include: contactWithTags })
      return toContact(row)
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') return null
      throw error
    }
  }
}
