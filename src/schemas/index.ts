import {
  ContactCreateSchema,
  ContactListSchema,
  ContactSchema,
  ContactUpdateSchema,
  EmailStatusSchema,
  StageSchema,
} from './contacts.js'
import { ErrorCodeSchema, ErrorDetailSchema, ErrorResponseSchema, ExistingContactSchema } from './errors.js'

/**
 * Schemas referenced by $id from routes: validation and the document's components use these.
 * Each comes after the schemas it refers to.
 */
export const sharedSchemas = [
  EmailStatusSchema,
  StageSchema,
  ContactSchema,
  ContactCreateSchema,
  ContactUpdateSchema,
  ContactListSchema,
  ErrorCodeSchema,
  ExistingContactSchema,
  ErrorDetailSchema,
  ErrorResponseSchema,
]
