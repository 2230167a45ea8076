import { createHash, randomBytes } from 'node:crypto'
import type { PrismaClient } from '../generated/prisma/client.js'
import type { Role } from '../generated/prisma/enums.js'

export const KEY_PREFIX = 'svc_'
/** svc_ followed by 48 hexadecimal characters (24 random bytes). */
export const KEY_PATTERN = /^svc_[0-9a-fA-F]{48}$/

export const SCOPES = ['contacts:read', 'contacts:write'] as const
export type Scope = (typeof SCOPES)[number]
export const ROLES = ['admin', 'editor', 'viewer'] as const satisfies readonly Role[]

/** Only the SHA-256 of a key is stored; a lookup hashes the presented key the same way. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key.toLowerCase()).digest('hex')
}

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(24).toString('hex')
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

export async function createApiKey(prisma: PrismaClient, input: NewApiKey): Promise<IssuedApiKey> {
  const key = generateApiKey()
  const row = await prisma.apiKey.create({
    data: {
      tenantId: input.tenantId,
      role: input.role,
      scopes: [...new Set(input.scopes)],
      label: input.label ?? '',
      keyHash: hashApiKey(key),
      hint: key.slice(-4),
    },
  })
  return { id: row.id, key, tenantId: row.tenantId, role: row.role, scopes: row.scopes }
}
