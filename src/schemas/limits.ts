// Limits and query shapes that several features share: a contact's fields bound what events and imports carry,
// and every operation without query parameters refuses them alike.
import { Type } from '@sinclair/typebox'

/** Limits the specification leaves open; documented in docs/api.md. */
export const LIMITS = {
  email: 254,
  name: 100,
  phone: 32,
  consentType: 64,
  tag: 64,
  tagsPerContact: 100,
  pageSize: 200,
  defaultPageSize: 50,
  /** A search's text value for a field without a limit of its own (source). */
  searchText: 254,
} as const

/** Operations that take no query parameter refuse any (400 invalid_query), as the list refuses unknown ones. */
export const NoQuerySchema = Type.Object({}, { additionalProperties: false })
