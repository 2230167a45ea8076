// Operators' side of erasures: erase a contact (as the API's DELETE does, recorded as asked from the CLI), list a
// tenant's erasures (which contact, when, asked by which key or from the CLI: no personal data), and lift an
// erased address when its person consents again, so that creates may bring it back. The same transaction and
// statements as the API's (src/privacy/repository.ts); the instance's secrets key hashes addresses.

import { ErasedEmails } from '../contacts/erased-emails.js'
import type { Database } from '../db/database.js'
import type { ErasureRecord } from '../privacy/model.js'
import { PrivacyRepository } from '../privacy/repository.js'
import { EMAIL } from '../schemas/common.js'
import { AdminError, assertTenantExists, assertUuid } from './guards.js'

const ADDRESS = new RegExp(EMAIL)

/** Without the instance's secrets key no address can be hashed: what to do about it. */
const NO_KEY =
  'the instance’s secrets key is needed to record or lift an erased address: set WEBHOOKS_SECRET_KEY as the ' +
  'server has it (on the embedded database, the key file in DATA_DIR is used).'

function repository(database: Database, secretKey: Buffer | null): PrivacyRepository {
  const privacy = new PrivacyRepository(database, new ErasedEmails(secretKey))
  if (!privacy.available) throw new AdminError(`Cannot do it: ${NO_KEY}`)
  return privacy
}

export interface Erased {
  id: string
  tenantId: string
}

export async function eraseContact(
  database: Database,
  secretKey: Buffer | null,
  tenantId: string,
  contactId: string,
): Promise<Erased> {
  const tenant = await assertTenantExists(database.prisma, tenantId)
  const id = assertUuid(contactId, 'Contact id')
  if ((await repository(database, secretKey).erase(tenant, id, { source: 'cli' })) === 'not_found') {
    throw new AdminError(`Contact ${id} does not exist in tenant ${tenant} (never did, or was erased already).`)
  }
  return { id, tenantId: tenant }
}

export async function listErasures(database: Database, tenantId: string): Promise<ErasureRecord[]> {
  const tenant = await assertTenantExists(database.prisma, tenantId)
  return new PrivacyRepository(database, new ErasedEmails(null)).erasures(tenant)
}

export interface Allowed {
  tenantId: string
  /** false when the address was not an erased one of the tenant: nothing changed. */
  allowed: boolean
}

/** The address as the API takes it (src/schemas/common.ts), checked before the database is opened. */
export function cleanEmail(value: string): string {
  const email = value.trim()
  if (!ADDRESS.test(email)) throw new AdminError('Email is not an address the API takes.')
  return email
}

export async function allowEmail(
  database: Database,
  secretKey: Buffer | null,
  tenantId: string,
  email: string,
): Promise<Allowed> {
  const tenant = await assertTenantExists(database.prisma, tenantId)
  const allowed = await repository(database, secretKey).allow(tenant, cleanEmail(email))
  return { tenantId: tenant, allowed }
}
