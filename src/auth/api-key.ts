// What an API key is, in one place: its format and the Authorization header that carries it, how it is stored
// (a hash, never the key), and the scopes and roles it can hold. The server, the admin CLI, the tests and the
// benchmark baseline all read these definitions.
import { createHash, randomBytes } from 'node:crypto'
import type { Role } from '../generated/prisma/enums.js'

export const KEY_PREFIX = 'svc_'
/** svc_ followed by 48 hexadecimal characters (24 random bytes). */
export const KEY_PATTERN = /^svc_[0-9a-fA-F]{48}$/
/** A key anywhere in a text (a log, the CLI's output), as the service prints keys: lower-case hex. */
export const PRINTED_KEY = /svc_[0-9a-f]{48}/
/** `Bearer <token>`, the scheme word in any case; the token is checked against KEY_PATTERN separately. */
export const BEARER = /^bearer +(\S+) *$/i

export const SCOPES = ['contacts:read', 'contacts:write', 'webhooks:manage', 'contacts:erase', 'fields:manage'] as const
export type Scope = (typeof SCOPES)[number]
export const ROLES = ['admin', 'editor', 'viewer'] as const satisfies readonly Role[]

/** Only the SHA-256 of a key is stored; a lookup hashes the presented key the same way. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key.toLowerCase()).digest('hex')
}

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(24).toString('hex')
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value)
}
