import { generateApiKey, hashApiKey, isRole, isScope, ROLES, SCOPES, type Scope } from '../auth/api-key.js'
import type { Role } from '../generated/prisma/enums.js'
import { AdminError, assertTenantExists, assertUuid, cleanText } from './guards.js'
import type { PrismaExecutor } from './prisma.js'

export const KEY_LABEL_MAX_LENGTH = 200

/** "contacts:read,contacts:write" -> the scopes, each checked; at least one. */
export function parseScopes(list: string): Scope[] {
  return checkScopes(list.split(','))
}

function checkScopes(names: readonly string[]): Scope[] {
  const given = names.map((name) => name.trim()).filter((name) => name !== '')
  if (given.length === 0) throw new AdminError(`Give at least one scope: ${SCOPES.join(', ')}.`)
  const unknown = given.filter((name) => !isScope(name))
  if (unknown.length > 0) {
    throw new AdminError(`Unknown scope ${unknown.join(', ')}: the scopes are ${SCOPES.join(', ')}.`)
  }
  return [...new Set(given.filter(isScope))]
}

export interface NewApiKey {
  tenantId: string
  role: Role
  scopes: Scope[]
  label?: string
}

export interface IssuedApiKey {
  id: string
  /** The clear key: returned once, at creation, and never stored. */
  key: string
  tenantId: string
  role: Role
  scopes: string[]
}

/** What operators may see of a key: never the key or its hash. */
export interface ApiKeyInfo {
  id: string
  tenantId: string
  label: string
  /** The last characters of the key, to tell keys apart. */
  hint: string
  role: Role
  scopes: string[]
  createdAt: Date
  revokedAt: Date | null
  lastUsedAt: Date | null
}

const apiKeyInfo = {
  id: true,
  tenantId: true,
  label: true,
  hint: true,
  role: true,
  scopes: true,
  createdAt: true,
  revokedAt: true,
  lastUsedAt: true,
} as const

export async function createApiKey(prisma: PrismaExecutor, input: NewApiKey): Promise<IssuedApiKey> {
  if (!isRole(input.role)) throw new AdminError(`Role must be one of ${ROLES.join(', ')}.`)
  const scopes = checkScopes(input.scopes)
  const label = cleanText(input.label ?? '', 'Key label', KEY_LABEL_MAX_LENGTH, 0)
  const tenantId = await assertTenantExists(prisma, input.tenantId)
  const key = generateApiKey()
  const row = await prisma.apiKey.create({
    data: { tenantId, role: input.role, scopes, label, keyHash: hashApiKey(key), hint: key.slice(-4) },
  })
  return { id: row.id, key, tenantId: row.tenantId, role: row.role, scopes: row.scopes }
}

/** Newest first. */
export async function listApiKeys(prisma: PrismaExecutor, tenantId: string): Promise<ApiKeyInfo[]> {
  const id = await assertTenantExists(prisma, tenantId)
  return prisma.apiKey.findMany({
    where: { tenantId: id },
    select: apiKeyInfo,
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
  })
}

/** `changed` is false when the key was already revoked: revoking is idempotent and keeps the first date. */
export type RevokedApiKey = ApiKeyInfo & { changed: boolean }

export async function revokeApiKey(prisma: PrismaExecutor, keyId: string): Promise<RevokedApiKey> {
  const id = assertUuid(keyId, 'Key id')
  const { count } = await prisma.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } })
  const row = await prisma.apiKey.findFirst({ where: { id }, select: apiKeyInfo })
  if (!row) throw new AdminError(`API key ${id} does not exist.`)
  return { ...row, changed: count === 1 }
}
