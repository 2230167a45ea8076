import { LIMITS } from '../schemas/limits.js'
import { assertTenantExists, cleanText } from './guards.js'
import type { PrismaExecutor } from './prisma.js'

/** The API accepts tag names up to this length. */
export const TAG_NAME_MAX_LENGTH = LIMITS.tag

export interface TagInfo {
  id: string
  name: string
  createdAt: Date
}

export interface CreatedTags {
  created: TagInfo[]
  /** Names that the tenant already had: reported, not an error, so the command can be re-run safely. */
  existing: TagInfo[]
}

const tagInfo = { id: true, name: true, createdAt: true } as const

/** Trimmed, 1 to TAG_NAME_MAX_LENGTH characters, no control characters. Names are case-sensitive, as the API compares them. */
export function cleanTagName(name: string): string {
  return cleanText(name, `Tag name "${name}"`, TAG_NAME_MAX_LENGTH)
}

export async function createTags(prisma: PrismaExecutor, tenantId: string, names: string[]): Promise<CreatedTags> {
  const wanted = [...new Set(names.map(cleanTagName))]
  const id = await assertTenantExists(prisma, tenantId)
  const before = new Set(
    (await prisma.tag.findMany({ where: { tenantId: id, name: { in: wanted } }, select: { name: true } })).map(
      (tag) => tag.name,
    ),
  )
  // skipDuplicates: a tag added meanwhile by someone else counts as existing instead of failing the whole call.
  await prisma.tag.createMany({
    data: wanted.filter((name) => !before.has(name)).map((name) => ({ tenantId: id, name })),
    skipDuplicates: true,
  })
  const rows = await prisma.tag.findMany({ where: { tenantId: id, name: { in: wanted } }, select: tagInfo })
  const byName = new Map(rows.map((row) => [row.name, row]))
  const result: CreatedTags = { created: [], existing: [] }
  for (const name of wanted) {
    const row = byName.get(name)
    if (row) (before.has(name) ? result.existing : result.created).push(row)
  }
  return result
}

export async function listTags(prisma: PrismaExecutor, tenantId: string): Promise<TagInfo[]> {
  const id = await assertTenantExists(prisma, tenantId)
  return prisma.tag.findMany({ where: { tenantId: id }, select: tagInfo, orderBy: { name: 'asc' } })
}
