// The schemas routes refer to by $id, each feature's in one list: validation compiles against them and the
// document lists them under components (Contact, ErrorResponse, …). Each comes after the schemas it refers to.
import { batchSchemas } from '../contacts/batch/model.js'
import { contactSchemas } from '../contacts/model.js'
import { errorSchemas } from '../errors/schemas.js'
import { eventSchemas } from '../events/model.js'
import { privacySchemas } from '../privacy/model.js'
import { webhookSchemas } from '../webhooks/model.js'

export const sharedSchemas = [
  ...contactSchemas,
  ...batchSchemas,
  ...eventSchemas,
  ...webhookSchemas,
  ...privacySchemas,
  ...errorSchemas,
]
