// Checks shared by the admin functions. They run before any query, so bad input never reaches the database
// and an operator gets a sentence instead of a Prisma stack.
import { PRINTABLE, UUID } from '../schemas/common.js'
import type { PrismaExecutor } from './prisma.js'

/** A refusal an operator can act on (bad input, unknown id): the CLI prints its message, without a stack. */
export class AdminError extends Error {
  override name = 'AdminError'
}

/** The API's rule for names: no control characters. Unicode mode, as Ajv compiles it: only a lone surrogate is refused. */
const PRINTABLE_TEXT = new RegExp(PRINTABLE, 'u')

export function assertUuid(value: string, what: string): string {
  if (!UUID.test(value)) throw new AdminError(`${what} "${value}" is not a UUID.`)
  return value.toLowerCase()
}

/** Trims `value` and checks its length in characters (code points, as the API's JSON Schema counts them). */
export function cleanText(value: string, what: string, maxLength: number, minLength = 1): string {
  const text = value.trim()
  const length = [...text].length
  if (length < minLength || length > maxLength) {
    throw new AdminError(`${what} must be ${minLength}-${maxLength} characters long (after trimming), got ${length}.`)
  }
  if (!PRINTABLE_TEXT.test(text)) throw new AdminError(`${what} must not contain control characters.`)
  return text
}

export async function assertTenantExists(prisma: PrismaExecutor, tenantId: string): Promise<string> {
  const id = assertUuid(tenantId, 'Tenant id')
  const tenant = await prisma.tenant.findUnique({ where: { id }, select: { id: true } })
  if (!tenant) throw new AdminError(`Tenant ${id} does not exist.`)
  return id
}
