import { ContactCreateSchema, ContactListSchema, ContactSchema, ContactUpdateSchema } from './contacts.js'
import { ErrorSchema } from './errors.js'

/** Schemas referenced by $id from routes: validation, serialisation and OpenAPI components all use these. */
export const sharedSchemas = [ContactSchema, ContactCreateSchema, ContactUpdateSchema, ContactListSchema, ErrorSchema]
