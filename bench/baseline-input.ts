// What the benchmarks' ceiling (bench/baseline.ts) accepts: the list's query string, and the bodies of POST and
// PATCH, checked by hand (no validation framework) against the limits rubrica documents. Each parser returns the
// input, or the name of the first field it refuses.

const EMAIL_STATUSES = ['active', 'unsubscribed', 'bounced', 'complained', 'suppressed', 'pending_review']
const STAGES = ['lead', 'prospect', 'customer', 'ex_customer']
/** ISO 8601 as the API's cursors carry it (rubrica accepts any RFC 3339 date-time; this ceiling needs less). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/
const EMAIL = /^[^\s@]+@[^\s@]+$/

export interface ListQuery {
  limit: number
  cursor?: string
  emailStatus?: string
  stage?: string
  includeArchived: boolean
}

/** The list's query string (Fastify has parsed it into strings). */
export function parseList(raw: Record<string, unknown>): ListQuery | string {
  const query: ListQuery = { limit: 50, includeArchived: false }
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'string') return name
    switch (name) {
      case 'limit':
        if (!/^[0-9]{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 200) return name
        query.limit = Number(value)
        break
      case 'cursor':
        if (!TIMESTAMP.test(value) || Number.isNaN(Date.parse(value))) return name
        query.cursor = value
        break
      case 'emailStatus':
        if (!EMAIL_STATUSES.includes(value)) return name
        query.emailStatus = value
        break
      case 'stage':
        if (!STAGES.includes(value)) return name
        query.stage = value
        break
      case 'includeArchived':
        if (value !== 'true' && value !== 'false') return name
        query.includeArchived = value === 'true'
        break
      default:
        return name
    }
  }
  return query
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A string of `min` to `max` characters. */
const isText = (value: unknown, max: number, min = 1): value is string =>
  typeof value === 'string' && value.length >= min && value.length <= max

/** The text fields of a new contact, each with its test. */
const CREATE_TEXT = {
  email: (value: unknown) => isText(value, 254, 3) && EMAIL.test(value),
  phone: (value: unknown) => isText(value, 32, 3),
  firstName: (value: unknown) => isText(value, 100),
  lastName: (value: unknown) => isText(value, 100),
  consentType: (value: unknown) => isText(value, 64),
}
type CreateText = keyof typeof CREATE_TEXT

export type NewContact = { email: string; tags: string[] } & Partial<Record<Exclude<CreateText, 'email'>, string>>

const isTagList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length <= 100 && value.every((tag) => isText(tag, 64))

/** POST's body; tags named twice count once. */
export function parseCreate(body: unknown): NewContact | string {
  if (!isRecord(body)) return 'body'
  const text: Partial<Record<CreateText, string>> = {}
  for (const [name, value] of Object.entries(body)) {
    if (name === 'tags') {
      if (!isTagList(value)) return name
    } else if (!Object.hasOwn(CREATE_TEXT, name) || !CREATE_TEXT[name as CreateText](value)) {
      return name
    } else {
      text[name as CreateText] = value as string
    }
  }
  const { email, ...optional } = text
  if (email === undefined) return 'email'
  return { ...optional, email, tags: isTagList(body.tags) ? [...new Set(body.tags)] : [] }
}

/** What a PATCH may set, each with its test, in the order statements list them. */
const PATCH_FIELDS = {
  firstName: (value: unknown) => value === null || isText(value, 100),
  lastName: (value: unknown) => value === null || isText(value, 100),
  emailStatus: (value: unknown) => typeof value === 'string' && EMAIL_STATUSES.includes(value),
  stage: (value: unknown) => typeof value === 'string' && STAGES.includes(value),
  consentType: (value: unknown) => isText(value, 64),
}
export type PatchField = keyof typeof PATCH_FIELDS
const PATCH_ORDER = Object.keys(PATCH_FIELDS) as PatchField[]

/** PATCH's body: the fields present, always in PATCH_ORDER (one statement per combination), and their values. */
export function parsePatch(body: unknown): { fields: PatchField[]; values: unknown[] } | string {
  if (!isRecord(body)) return 'body'
  for (const [name, value] of Object.entries(body)) {
    if (!Object.hasOwn(PATCH_FIELDS, name) || !PATCH_FIELDS[name as PatchField](value)) return name
  }
  const fields = PATCH_ORDER.filter((field) => Object.hasOwn(body, field))
  return { fields, values: fields.map((field) => body[field]) }
}
