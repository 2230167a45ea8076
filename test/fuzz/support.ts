// Shared by the fuzz suites and the regression tests: the checks every response must pass (the documented Contact
// and list shapes, the Italian error envelope), requests held to them, database snapshots and the prototype check.
// How properties run and report is in ./run.ts. Not a test file (no `.test.` in the name): tap does not run it.
import { readFileSync } from 'node:fs'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { components } from '../../src/generated/openapi.ts'
import type { PrismaClient } from '../../src/generated/prisma/client.ts'
import { UUID } from '../../src/schemas/common.ts'
import type { Stats } from './run.ts'

export const LIST = '/api/v1/contacts'

/** Throws: for the checks inside properties, where a thrown error is the failure fast-check shrinks. */
export function fail(message: string): never {
  throw new Error(message)
}

// ---------------------------------------------------------------------------------------------------------------
// The documented shapes, read from the committed openapi.json (the published contract, which the suite checks
// the server against), not from src/: the Contact's fields, the enumerations, and each error code's status (from
// the examples each response lists). Only the UUID pattern is src/'s own.

interface DocumentedResponse {
  content?: { 'application/json'?: { examples?: Record<string, { value: { error?: { code: string } } }> } }
}
interface Document {
  components: { schemas: Record<string, { enum?: string[]; properties?: Record<string, unknown> }> }
  paths: Record<string, Record<string, { responses: Record<string, DocumentedResponse> }>>
}
const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as Document
const schemas = document.components.schemas

export const EMAIL_STATUSES: readonly string[] = schemas.EmailStatus?.enum ?? fail('no EmailStatus in openapi.json')
export const STAGES: readonly string[] = schemas.Stage?.enum ?? fail('no Stage in openapi.json')
export const CONTACT_FIELDS = Object.keys(schemas.Contact?.properties ?? fail('no Contact in openapi.json')).sort()
/** The fields a POST body and a PATCH body may carry. */
export const CREATE_FIELDS = Object.keys(schemas.ContactCreate?.properties ?? fail('no ContactCreate in openapi.json'))
export const UPDATE_FIELDS = Object.keys(schemas.ContactUpdate?.properties ?? fail('no ContactUpdate in openapi.json'))
export type ErrorCode = string
/** The HTTP status each error code is documented with. */
export const STATUS_OF: Record<ErrorCode, number> = Object.fromEntries(
  Object.values(document.paths).flatMap((operations) =>
    Object.values(operations).flatMap(({ responses }) =>
      Object.entries(responses).flatMap(([status, response]) =>
        Object.values(response.content?.['application/json']?.examples ?? {}).flatMap(({ value }) =>
          value.error ? [[value.error.code, Number(status)]] : [],
        ),
      ),
    ),
  ),
)
export const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
/** An id as the server writes it: src/schemas/common.ts's plain UUID, lower case only (requests may use any case). */
export const LOWERCASE_UUID = new RegExp(UUID.source)

/** A Contact as the committed document types it (openapi-typescript's types of openapi.json). */
export type Contact = components['schemas']['Contact']

export interface ContactPage {
  data: Contact[]
  next: string | null
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; existing?: { id: string; status: string } }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isTimestamp(value: unknown): value is string {
  return typeof value === 'string' && ISO_MS_Z.test(value) && new Date(value).toISOString() === value
}

/** A list cursor: a timestamp as answers write it, or with the microseconds after the milliseconds. */
function isCursor(value: unknown): value is string {
  return typeof value === 'string' && /^.{23}\d{3}Z$/.test(value)
    ? isTimestamp(`${value.slice(0, 23)}Z`)
    : isTimestamp(value)
}

function sameKeys(value: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(value).sort()
  return own.length === keys.length && own.every((key, i) => key === [...keys].sort()[i])
}

/** Throws unless `value` is exactly a documented Contact. */
export function assertContact(value: unknown, where = 'contact'): asserts value is Contact {
  const invalid = (why: string): never => {
    throw new Error(`${where} is not a valid Contact (${why}): ${JSON.stringify(value)}`)
  }
  if (!isRecord(value)) return invalid('not an object')
  if (!sameKeys(value, CONTACT_FIELDS)) return invalid(`fields ${Object.keys(value).sort().join(',')}`)
  if (typeof value.id !== 'string' || !LOWERCASE_UUID.test(value.id)) invalid('id')
  for (const field of ['email', 'firstName', 'lastName', 'phone']) {
    if (value[field] !== null && typeof value[field] !== 'string') invalid(field)
  }
  if (typeof value.emailStatus !== 'string' || !EMAIL_STATUSES.includes(value.emailStatus)) invalid('emailStatus')
  if (typeof value.stage !== 'string' || !STAGES.includes(value.stage)) invalid('stage')
  if (typeof value.source !== 'string') invalid('source')
  if (typeof value.consentType !== 'string') invalid('consentType')
  const tags = value.tags
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) return invalid('tags')
  const sorted = [...new Set(tags as string[])].sort()
  if (JSON.stringify(sorted) !== JSON.stringify(tags)) invalid('tags not sorted and unique')
  if (value.archivedAt !== null && !isTimestamp(value.archivedAt)) invalid('archivedAt')
  for (const field of ['acquiredAt', 'createdAt', 'updatedAt']) if (!isTimestamp(value[field])) invalid(field)
  if (String(value.updatedAt) < String(value.createdAt)) invalid('updatedAt before createdAt')
}

/**
 * Throws unless `value` is exactly {data: Contact[], next}, newest first, with next = the last createdAt (to the
 * microsecond, so only its milliseconds are comparable with the answer's) or null. Contacts created within one
 * millisecond show the same createdAt.
 */
export function assertPage(value: unknown, where = 'list'): asserts value is ContactPage {
  if (!isRecord(value) || !sameKeys(value, ['data', 'next']) || !Array.isArray(value.data)) {
    throw new Error(`${where} is not {data, next}: ${JSON.stringify(value).slice(0, 500)}`)
  }
  value.data.forEach((item, i) => {
    assertContact(item, `${where} data[${i}]`)
  })
  const data = value.data as Contact[]
  for (let i = 1; i < data.length; i++) {
    if (!(String(data[i - 1]?.createdAt) >= String(data[i]?.createdAt))) {
      throw new Error(`${where} is not strictly newest first at ${i}`)
    }
  }
  if (value.next !== null) {
    if (!isCursor(value.next)) throw new Error(`${where} next is not a timestamp: ${String(value.next)}`)
    if (value.next.slice(0, 23) !== data.at(-1)?.createdAt.slice(0, 23)) {
      throw new Error(`${where} next is not the last item's createdAt`)
    }
  }
}

/** English words and debugging residue that must never reach a client in a message. */
const ENGLISH =
  /\b(must|should|unexpected|undefined|null|NaN|invalid|required|expected|property|cannot|the|is|of|not|error|failed|exception)\b/i
const LEAKS: [RegExp, string][] = [
  [/^\s*at\s/m, 'stack trace line'],
  [/\.(ts|js|mjs|cjs):\d/, 'source file position'],
  [/node_modules|\/work\/|\/src\//, 'file path'],
  [/Error:/, '"Error:"'],
  [/FST_|ERR_|Prisma|prisma|ajv|SQL|postgres|PGlite|\[object /, 'internal name'],
]
const ITALIAN =
  /è|\b(il|lo|la|i|gli|le|un|una|di|del|della|non|deve|essere|per|tra|con|riprova|richiesta|campo|parametro|chiave|risorsa|contatto|tag|servizio|errore|limite|corpo|organizzazione|ruolo|intestazione)\b/i

/** Problems with an error message: empty, not Italian, English words, stack traces, file paths. */
export function messageProblems(message: string): string[] {
  const problems: string[] = []
  if (message.trim() === '') return ['empty message']
  for (const [pattern, what] of LEAKS) if (pattern.test(message)) problems.push(what)
  // Quoted parts echo what the client sent (a field, a parameter, a tag name): anything may be in them.
  const first = message.indexOf('"')
  const last = message.lastIndexOf('"')
  const own = first >= 0 && last > first ? message.slice(0, first) + message.slice(last + 1) : message
  // "un testo o null" names the JSON literal null among the accepted types: the one legitimate use of the word.
  const english = ENGLISH.exec(own.replace(/\bo null\b/g, ''))
  if (english) problems.push(`English word "${english[0]}"`)
  if (!ITALIAN.test(own)) problems.push('no Italian word')
  return problems
}

/** Throws unless `value` is the error envelope with a documented code matching `status` and an Italian message. */
export function assertEnvelope(value: unknown, status: number, where = 'error'): asserts value is ErrorBody {
  const invalid = (why: string): never => {
    throw new Error(`${where}: ${status} body is not a valid error envelope (${why}): ${JSON.stringify(value)}`)
  }
  if (!isRecord(value) || !sameKeys(value, ['error']) || !isRecord(value.error)) return invalid('shape')
  const error = value.error
  const code = error.code
  if (typeof code !== 'string' || !(code in STATUS_OF)) return invalid('unknown code')
  if (STATUS_OF[code as ErrorCode] !== status)
    invalid(`code ${code} is documented with ${STATUS_OF[code as ErrorCode]}`)
  if (typeof error.message !== 'string') return invalid('message is not a string')
  const problems = messageProblems(error.message)
  if (problems.length > 0) invalid(`message: ${problems.join(', ')}`)
  if (code === 'conflict') {
    const existing = error.existing
    if (!sameKeys(error, ['code', 'message', 'existing']) || !isRecord(existing)) return invalid('conflict shape')
    if (!sameKeys(existing, ['id', 'status']) || typeof existing.id !== 'string' || !LOWERCASE_UUID.test(existing.id)) {
      invalid('existing.id')
    }
    if (typeof existing.status !== 'string' || !EMAIL_STATUSES.includes(existing.status)) invalid('existing.status')
  } else if (!sameKeys(error, ['code', 'message'])) {
    invalid('extra members')
  }
}

export type Expected = 'contact' | 'page'

/**
 * The invariants of every response: never 5xx; JSON; a 2xx is exactly the documented success shape (`expected`),
 * anything else is the Italian error envelope. Returns the parsed body.
 */
export function checkResponse(res: LightMyRequestResponse, expected: Expected, where: string): unknown {
  if (res.statusCode >= 500) throw new Error(`${where}: ${res.statusCode} ${res.body}`)
  const type = String(res.headers['content-type'] ?? '')
  if (!/^application\/json\b/.test(type)) throw new Error(`${where}: content-type "${type}" for ${res.body}`)
  let body: unknown
  try {
    body = JSON.parse(res.body)
  } catch {
    throw new Error(`${where}: body is not JSON: ${res.body.slice(0, 300)}`)
  }
  if (res.statusCode >= 200 && res.statusCode < 300) {
    if (expected === 'page') assertPage(body, where)
    else assertContact(body, where)
  } else {
    assertEnvelope(body, res.statusCode, where)
  }
  return body
}

// ---------------------------------------------------------------------------------------------------------------
// Requests

/** The 404 of an id that exists nowhere: every other 404 must be this one, byte for byte. */
export interface NotFoundReference {
  status: number
  body: string
  type: unknown
}

export async function referenceNotFound(app: FastifyInstance, key: string): Promise<NotFoundReference> {
  const res = await app.inject({
    method: 'GET',
    url: `${LIST}/6f1d2c3b-4a59-4e68-8c7b-0a1b2c3d4e5f`,
    headers: { authorization: `Bearer ${key}` },
  })
  return { status: res.statusCode, body: res.body, type: res.headers['content-type'] }
}

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PATCH'
  url: string
  payload?: object
}

export interface CheckedExchange {
  res: LightMyRequestResponse
  /** The parsed body, already checked by checkResponse. */
  body: unknown
  /** The request, for failure messages. */
  where: string
}

/**
 * A request with `key` as Bearer token, counted in `stats` under `endpoint` and held to checkResponse's invariants
 * (a GET without an id is a list page). `who` names the requester in failure messages.
 */
export async function checkedRequest(
  app: FastifyInstance,
  stats: Stats,
  endpoint: string,
  key: string,
  options: RequestOptions,
  who = '',
): Promise<CheckedExchange> {
  const res = await app.inject({ ...options, headers: { authorization: `Bearer ${key}` } })
  stats.count(endpoint, res.statusCode)
  const sent = options.payload === undefined ? '' : ` ${JSON.stringify(options.payload)}`
  const where = `${options.method} ${options.url}${who ? ` as ${who}` : ''}${sent}`
  const shape = options.method === 'GET' && options.url.split('?')[0] === LIST ? 'page' : 'contact'
  return { res, body: checkResponse(res, shape, where), where }
}

// ---------------------------------------------------------------------------------------------------------------
// Database snapshots

export interface Snapshot {
  contacts: Omit<Awaited<ReturnType<PrismaClient['contact']['findMany']>>[number], 'tagsSignature'>[]
  /**
   * Each contact's createdAt to the microsecond, `YYYY-MM-DDTHH:MM:SS.ffffffZ` (Prisma reads milliseconds): the
   * list's order and its cursor.
   */
  created: Map<string, string>
  links: { contactId: string; tagId: string }[]
  /** The whole of both tables, serialised: two snapshots are equal when these strings are. */
  text: string
}

export async function snapshot(prisma: PrismaClient): Promise<Snapshot> {
  const [contacts, links, instants] = await Promise.all([
    // The tags' signature is derived from the tags (a generated column), and a BigInt, which JSON cannot write.
    prisma.contact.findMany({ orderBy: { id: 'asc' }, omit: { tagsSignature: true } }),
    prisma.contactTag.findMany({ orderBy: [{ contactId: 'asc' }, { tagId: 'asc' }] }),
    prisma.$queryRawUnsafe<{ id: string; created: string }[]>(
      `SELECT id::text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created
       FROM contacts ORDER BY id`,
    ),
  ])
  const created = new Map(instants.map((row) => [row.id, row.created]))
  return { contacts, links, created, text: JSON.stringify([contacts, links, instants]) }
}

/** The rows of `after` that differ from `before` (added, removed or changed), by id. */
export function changedIds(before: Snapshot, after: Snapshot): string[] {
  const rows = (s: Snapshot) => {
    const map = new Map<string, string>()
    for (const c of s.contacts) map.set(c.id, JSON.stringify(c))
    for (const l of s.links) map.set(l.contactId, `${map.get(l.contactId) ?? ''}|${l.tagId}`)
    return map
  }
  const a = rows(before)
  const b = rows(after)
  return [...new Set([...a.keys(), ...b.keys()])].filter((id) => a.get(id) !== b.get(id))
}

/** A stored row as the API must show it. */
export function rowToContact(
  row: Snapshot['contacts'][number],
  links: Snapshot['links'],
  tagNames: Map<string, string>,
): Contact {
  // Prisma's model names its fields as the API does: every documented field but tags is the row's, timestamps
  // written as the API writes them.
  const fields = Object.fromEntries(
    CONTACT_FIELDS.filter((field) => field !== 'tags').map((field) => {
      const value = (row as Record<string, unknown>)[field]
      return [field, value instanceof Date ? value.toISOString() : value]
    }),
  )
  const tags = links
    .filter((l) => l.contactId === row.id)
    .map((l) => tagNames.get(l.tagId) ?? `?${l.tagId}`)
    .sort()
  return { ...fields, tags } as Contact
}

// ---------------------------------------------------------------------------------------------------------------
// Prototype pollution

export function prototypeFingerprint(): string {
  const describe = (o: object) => Object.getOwnPropertyNames(o).sort().join(',')
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype].map(describe).join('|')
}

/** Throws when a payload managed to add properties to the shared prototypes. */
export function assertNoPollution(before: string): void {
  const probe: Record<string, unknown> = {}
  for (const key of ['polluted', 'isAdmin', 'tenantId', 'role', 'x']) {
    if (probe[key] !== undefined) throw new Error(`Object.prototype.${key} is set: prototype pollution`)
  }
  if (prototypeFingerprint() !== before) throw new Error('a shared prototype gained or lost properties')
}

/** Describes a request for failure messages. */
export function describe(method: string, url: string, headers: Record<string, string>, payload?: string): string {
  const shown = payload === undefined ? '' : ` body(${payload.length})=${JSON.stringify(payload.slice(0, 400))}`
  return `${method} ${url} ${JSON.stringify(headers)}${shown}`
}
