// The tenant's own fields, for operators: the same definitions, rules and limits as /api/v1/fields (the repository of
// src/contacts/custom-fields/), checked against the same schema. A deletion reclaims the field's values before the
// command ends; running instances hear of every change (the announcement the repository sends).
import { announceAuthChange, fieldsAnnouncement } from '../announcements/channel.js'
import {
  type CustomFieldCreate,
  CustomFieldCreateSchema,
  customFieldSchemas,
  type FieldDefinition,
} from '../contacts/custom-fields/model.js'
import { CustomFieldRepository } from '../contacts/custom-fields/repository.js'
import type { Database } from '../db/database.js'
import { ApiError } from '../errors/catalogue.js'
import { describeValidationError } from '../errors/validation-messages.js'
import { validatorCompiler } from '../plugins/app/validation.js'
import { AdminError, assertTenantExists } from './guards.js'

const validDefinition = validatorCompiler(() => customFieldSchemas)({
  schema: CustomFieldCreateSchema,
  httpPart: 'body',
})

function repository(database: Database): CustomFieldRepository {
  return new CustomFieldRepository(database, async (tenantId) => {
    await announceAuthChange(database, fieldsAnnouncement(tenantId))
  })
}

/** The repository's refusals (in the API's Italian words) as an operator's error. */
async function refusalsAsAdminErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof ApiError) throw new AdminError(error.message)
    throw error
  }
}

export async function createField(database: Database, tenantId: string, input: CustomFieldCreate) {
  const tenant = await assertTenantExists(database.prisma, tenantId)
  if (!validDefinition(input)) throw new AdminError(describeValidationError(validDefinition.errors ?? [], 'body'))
  return refusalsAsAdminErrors(() => repository(database).create(tenant, input))
}

export async function listFields(database: Database, tenantId: string): Promise<FieldDefinition[]> {
  return repository(database).list(await assertTenantExists(database.prisma, tenantId))
}

/** Deletes the definition and drops its values from the tenant's contacts and events; answers how many contacts held one. */
export async function deleteField(database: Database, tenantId: string, name: string): Promise<{ reclaimed: number }> {
  const tenant = await assertTenantExists(database.prisma, tenantId)
  const fields = repository(database)
  if (!(await fields.remove(tenant, name, { reclaim: false }))) {
    throw new AdminError(`Tenant ${tenant} has no field "${name}".`)
  }
  const reclaimed = await fields.reclaimValues(tenant, name)
  await fields.reclaimEvents(tenant, name)
  return { reclaimed }
}
