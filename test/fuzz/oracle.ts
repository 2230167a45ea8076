// The fuzz oracle: what docs/api.md says a request must get, computed independently of src/ from the parts the
// generators produced. Every value is classified as valid, invalid or "unsure" (where docs/api.md leaves the
// outcome open, e.g. numeric forms like "+5" or a leap-second cursor); unsure parts widen the accepted outcomes,
// but the response must still pass the generic invariants (never 5xx, envelope, Italian, database unchanged).
import type { ErrorCode } from './support.ts'
import { CREATE_FIELDS, EMAIL_STATUSES, isRecord, STAGES, UPDATE_FIELDS } from './support.ts'

export type Verdict = 'valid' | 'invalid' | 'unsure'
export type Endpoint = 'list' | 'get' | 'create' | 'update'

export interface Outcome {
  status: number
  code?: ErrorCode
}

export interface Expectation {
  /** Accepted statuses (and codes, for errors); 'any' when only the generic invariants apply. */
  outcomes: Outcome[] | 'any'
  /** The field or parameter the error message must name, in double quotes. */
  names?: string
  /** unknown_tag: every name the message must list. */
  unknownTags?: string[]
  /** The body is not JSON: the message must say so. */
  notJson?: boolean
  why: string
}

export const any = (why: string): Expectation => ({ outcomes: 'any', why })
export const only = (why: string, ...outcomes: Outcome[]): Expectation => ({ outcomes, why })

// ---------------------------------------------------------------------------------------------------------------
// Authentication (docs/api.md "Authentication and authorization", checked in that order)

export interface KeyInfo {
  tenantId: string
  tenantStatus: 'active' | 'suspended' | 'closed'
  revoked: boolean
  role: 'admin' | 'editor' | 'viewer'
  scopes: string[]
}

// independent oracle: docs/api.md's "Bearer <key>, scheme word in any case, key svc_ + 48 hex characters", written
// out here rather than imported from src/auth/api-key.ts (BEARER, KEY_PATTERN), whose reading of the header is what the
// fuzzing checks.
const BEARER = /^bearer +(\S+) *$/i
const KEY = /^svc_[0-9a-fA-F]{48}$/

/** The key an Authorization header carries, when it is well formed and known. */
export function keyOf(header: string | undefined, keys: Map<string, KeyInfo>): KeyInfo | undefined {
  const key = header === undefined ? undefined : BEARER.exec(header)?.[1]
  return key !== undefined && KEY.test(key) ? keys.get(key.toLowerCase()) : undefined
}

/** Both expectations' outcomes are accepted (e.g. an auth error or a routing 404). */
export function union(a: Expectation, ...outcomes: Outcome[]): Expectation {
  return a.outcomes === 'any' ? a : { outcomes: [...a.outcomes, ...outcomes], why: a.why }
}

/** null when the request gets past authentication and authorization for `endpoint`. */
export function authOutcome(header: string | undefined, keys: Map<string, KeyInfo>, endpoint: Endpoint) {
  if (header === undefined || header === '' || /^[ \t]+$/.test(header)) {
    return only('no Authorization', { status: 401, code: 'missing_authorization' })
  }
  // Other whitespace (e.g. NBSP) alone: "missing" or "malformed" are both fair readings.
  if (header.trim() === '') {
    return only(
      'whitespace header',
      { status: 401, code: 'missing_authorization' },
      { status: 401, code: 'invalid_key_format' },
    )
  }
  const key = BEARER.exec(header)?.[1]
  if (key === undefined || !KEY.test(key)) return only('malformed', { status: 401, code: 'invalid_key_format' })
  // Keys are compared case-insensitively (hex), as stored hashes of the lower-cased key.
  const info = keys.get(key.toLowerCase())
  if (!info || info.revoked) return only('unknown or revoked key', { status: 401, code: 'invalid_key' })
  if (info.tenantStatus === 'closed') return only('closed tenant', { status: 401, code: 'invalid_or_revoked' })
  if (info.tenantStatus === 'suspended') return only('suspended tenant', { status: 403, code: 'tenant_suspended' })
  const write = endpoint === 'create' || endpoint === 'update'
  const scope = write ? 'contacts:write' : 'contacts:read'
  if (!info.scopes.includes(scope)) return only(`no ${scope}`, { status: 403, code: 'insufficient_scope' })
  if (write && info.role === 'viewer') return only('viewer writes', { status: 403, code: 'insufficient_role' })
  return null
}

// ---------------------------------------------------------------------------------------------------------------
// Path ids

// independent oracle: docs/api.md "Not found": an id that is not a plain 36-character UUID (in any case) is answered
// like an absent one; written out here rather than imported from src/schemas/common.ts (UUID), whose reading of
// path ids is what the fuzzing checks.
export const PLAIN_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// ---------------------------------------------------------------------------------------------------------------
// Text fields

const segmenter = new Intl.Segmenter('it', { granularity: 'grapheme' })

/** Graphemes in `value`, counting no further than `limit` (each segment V8 returns copies the whole input). */
function graphemes(value: string, limit: number): number {
  let count = 0
  for (const _ of segmenter.segment(value)) if (++count >= limit) break
  return count
}

/**
 * "n to m characters, no control characters, no format characters, no line or paragraph separators", and for
 * names and the legal basis ("visible") not only white space. Characters are counted three ways (UTF-16 units,
 * code points, graphemes); when the counts disagree about the limit, docs/api.md does not decide: unsure.
 */
export function textVerdict(value: unknown, min: number, max: number, visible = false): Verdict {
  if (typeof value !== 'string') return 'invalid'
  // Control characters: C0, DEL and C1 (Cc); lone surrogates are not text at all (Cs); format characters (Cf,
  // U+FEFF among them); line and paragraph separators (Zl, Zp).
  if (/[\p{Cc}\p{Cs}\p{Cf}\p{Zl}\p{Zp}]/u.test(value)) return 'invalid'
  if (visible && /^\s*$/u.test(value)) return 'invalid'
  const counts = [value.length, [...value].length, graphemes(value, max + 1)]
  const inside = counts.map((n) => n >= min && n <= max)
  if (inside.every(Boolean)) return 'valid'
  if (!inside.some(Boolean)) return 'invalid'
  return 'unsure'
}

const SAFE_EMAIL = /^([a-z0-9](?:[a-z0-9._+-]*[a-z0-9])?)@((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})$/i

/** "254 characters, validated as an address": plainly valid, plainly invalid, or left to the implementation. */
export function emailVerdict(value: unknown): Verdict {
  if (typeof value !== 'string') return 'invalid'
  if (value === '' || !value.includes('@') || /[\p{Cc}\p{Cs}\s]/u.test(value) || [...value].length > 254) {
    return 'invalid'
  }
  if (/^@|@$/.test(value)) return 'invalid'
  const match = SAFE_EMAIL.exec(value)
  if (match && (match[1]?.length ?? 0) <= 64 && !value.includes('..')) return 'valid'
  return 'unsure'
}

/** "3 to 32 characters: digits, spaces, a leading +, ., -, parentheses; at least 3 digits". */
export function phoneVerdict(value: unknown): Verdict {
  if (typeof value !== 'string') return 'invalid'
  const length = [...value].length
  const digits = value.replace(/[^0-9]/g, '').length
  if (/^\+?[0-9 ().-]+$/.test(value)) return length >= 3 && length <= 32 && digits >= 3 ? 'valid' : 'invalid'
  // Digits of other scripts might be read as "digits"; anything else is not allowed.
  if (/^\+?[\p{Nd} ().-]+$/u.test(value)) return length > 32 || length < 3 ? 'invalid' : 'unsure'
  return 'invalid'
}

export function enumVerdict(value: unknown, allowed: readonly string[]): Verdict {
  return typeof value === 'string' && allowed.includes(value) ? 'valid' : 'invalid'
}

function combine(verdicts: Verdict[]): Verdict {
  if (verdicts.includes('invalid')) return 'invalid'
  if (verdicts.includes('unsure')) return 'unsure'
  return 'valid'
}

/** Keys the JSON parser refuses: `__proto__` anywhere, `constructor` holding a `prototype`. */
export function hasForbiddenKey(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node !== 'object' || node === null) continue
    if (Object.hasOwn(node, '__proto__')) return true
    const ctor = (node as Record<string, unknown>).constructor
    if (Object.hasOwn(node, 'constructor') && isRecord(ctor) && Object.hasOwn(ctor, 'prototype')) return true
    for (const child of Object.values(node)) stack.push(child)
  }
  return false
}

// ---------------------------------------------------------------------------------------------------------------
// Bodies

/** docs/api.md "Limits": a JSON body nests objects and lists 32 levels deep at most, and holds 10,000 of them. */
const JSON_MAX_DEPTH = 32
const JSON_MAX_CONTAINERS = 10_000

/** Whether a parsed body nests deeper, or holds more objects and lists, than docs/api.md allows. */
export function beyondJsonShape(value: unknown): boolean {
  let containers = 0
  const stack: [unknown, number][] = [[value, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number]
    if (typeof node !== 'object' || node === null) continue
    containers++
    if (depth > JSON_MAX_DEPTH || containers > JSON_MAX_CONTAINERS) return true
    for (const child of Object.values(node)) stack.push([child, depth + 1])
  }
  return false
}

export interface BodyContext {
  bodyLimit: number
  /** The tenant's tag names. */
  tags: Set<string>
}

export type ParsedBody = { ok: true; value: unknown } | { ok: false }

/** What the JSON content-type parser does with the text: JSON.parse, after a BOM is ignored or not (unsure). */
export function parseBody(text: string): ParsedBody {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

export type ContentTypeClass = 'json' | 'json-other-charset' | 'text' | 'not-json' | 'unsure' | 'absent'

/** docs/api.md: JSON in UTF-8; another charset is unsupported_media_type; "missing or non-JSON content type" is invalid_body. */
export function contentTypeClass(value: string | undefined): ContentTypeClass {
  if (value === undefined) return 'absent'
  if (/^application\/json *(; *charset=utf-8)?$/.test(value)) return 'json'
  if (/^application\/json *; *charset=[a-z0-9-]+$/i.test(value) && !/charset=utf-?8$/i.test(value)) {
    return 'json-other-charset'
  }
  // Read as a string, which is then not an object: invalid_body at validation.
  if (/^text\/plain *(; *charset=utf-8)?$/.test(value)) return 'text'
  if (/^(application\/x-www-form-urlencoded|multipart\/form-data|application\/xml|image\/png)\b/.test(value)) {
    return 'not-json'
  }
  return 'unsure'
}

/** Everything a POST or PATCH can end with: for content types docs/api.md does not classify. */
export const ANY_WRITE: Outcome[] = [
  { status: 200 },
  { status: 201 },
  { status: 400, code: 'invalid_body' },
  { status: 400, code: 'unknown_tag' },
  { status: 404, code: 'not_found' },
  { status: 409, code: 'conflict' },
  { status: 413, code: 'payload_too_large' },
  { status: 415, code: 'unsupported_media_type' },
]

export type ParseResult = { stage: 'parse'; expectation: Expectation } | { stage: 'parsed'; value: unknown }

/**
 * The parsing step of POST and PATCH: after authentication, before validation (so before a path id that is not
 * a UUID is answered 404). Either it decides the outcome, or it gives the value validation will see.
 */
export function parseStep(contentType: string | undefined, payload: string | undefined, ctx: BodyContext): ParseResult {
  const decided = (expectation: Expectation): ParseResult => ({ stage: 'parse', expectation })
  const kind = contentTypeClass(contentType)
  const size = payload === undefined ? 0 : Buffer.byteLength(payload)
  const empty = payload === undefined || payload === ''
  if (kind === 'unsure') return decided(only(`content type ${contentType}`, ...ANY_WRITE))
  if (kind === 'absent') {
    // No content type and no body: nothing to parse; the schema then sees no object.
    if (empty) return { stage: 'parsed', value: undefined }
    return decided(only('body without content type', { status: 400, code: 'invalid_body' }))
  }
  if (kind === 'not-json') return decided(only(`content type ${contentType}`, { status: 400, code: 'invalid_body' }))
  if (size > ctx.bodyLimit) return decided(only(`${size} bytes`, { status: 413, code: 'payload_too_large' }))
  if (kind === 'json-other-charset') {
    return decided(only(`content type ${contentType}`, { status: 415, code: 'unsupported_media_type' }))
  }
  if (kind === 'text') return { stage: 'parsed', value: payload ?? '' }
  if (empty) return decided(only('empty JSON body', { status: 400, code: 'invalid_body' }))
  // A byte order mark may or may not be skipped by the parser.
  if (payload.charCodeAt(0) === 0xfeff) return decided(only('BOM', ...ANY_WRITE))
  const parsed = parseBody(payload)
  if (!parsed.ok) return decided({ outcomes: [{ status: 400, code: 'invalid_body' }], notJson: true, why: 'not JSON' })
  if (beyondJsonShape(parsed.value)) return decided(only('nested too deep', { status: 400, code: 'invalid_body' }))
  if (hasForbiddenKey(parsed.value)) return decided(only('forbidden key', { status: 400, code: 'invalid_body' }))
  return { stage: 'parsed', value: parsed.value }
}

export interface FieldVerdicts {
  root: Verdict
  fields: Map<string, Verdict>
}

function tagsVerdict(value: unknown, ctx: BodyContext): { verdict: Verdict; unknown: string[] } {
  if (!Array.isArray(value)) return { verdict: 'invalid', unknown: [] }
  const items = value.map((item) => textVerdict(item, 1, 64))
  let verdict = combine(items)
  const distinct = [...new Set(value.filter((v): v is string => typeof v === 'string'))]
  if (distinct.length > 100 || (value.length > 100 && verdict === 'invalid')) verdict = 'invalid'
  else if (value.length > 100) verdict = verdict === 'valid' ? 'unsure' : verdict
  const lowered = new Set([...ctx.tags].map((tag) => tag.toLowerCase()))
  const unknown = distinct.filter((name) => !ctx.tags.has(name))
  // A known name in another letter case: docs/api.md does not say whether tag names ignore case.
  if (unknown.some((name) => lowered.has(name.toLowerCase())) && verdict === 'valid') verdict = 'unsure'
  return { verdict, unknown }
}

/** Verdicts for a POST body: each documented field, and every other key (always invalid). */
export function createVerdicts(value: unknown, ctx: BodyContext) {
  const fields = new Map<string, Verdict>()
  let unknownTags: string[] = []
  if (!isRecord(value)) return { root: 'invalid' as Verdict, fields, unknownTags }
  if (!Object.hasOwn(value, 'email')) fields.set('email', 'invalid')
  for (const [key, v] of Object.entries(value)) {
    if (!CREATE_FIELDS.includes(key)) fields.set(key, 'invalid')
    else if (key === 'email') fields.set(key, emailVerdict(v))
    else if (key === 'phone') fields.set(key, phoneVerdict(v))
    else if (key === 'firstName' || key === 'lastName') fields.set(key, textVerdict(v, 1, 100, true))
    else if (key === 'consentType') fields.set(key, textVerdict(v, 1, 64, true))
    else if (key === 'tags') {
      const tags = tagsVerdict(v, ctx)
      fields.set(key, tags.verdict)
      unknownTags = tags.unknown
    }
    // A documented field this oracle has no rule for yet: the document's schema decides (the contract check).
    else fields.set(key, 'unsure')
  }
  return { root: 'valid' as Verdict, fields, unknownTags }
}

export function updateVerdicts(value: unknown) {
  const fields = new Map<string, Verdict>()
  if (!isRecord(value)) return { root: 'invalid' as Verdict, fields }
  for (const [key, v] of Object.entries(value)) {
    if (!UPDATE_FIELDS.includes(key)) fields.set(key, 'invalid')
    else if (key === 'firstName' || key === 'lastName') {
      fields.set(key, v === null ? 'valid' : textVerdict(v, 1, 100, true))
    } else if (key === 'consentType') fields.set(key, textVerdict(v, 1, 64, true))
    else if (key === 'stage' || key === 'emailStatus') {
      fields.set(key, enumVerdict(v, key === 'stage' ? STAGES : EMAIL_STATUSES))
    } else fields.set(key, 'unsure')
  }
  return { root: 'valid' as Verdict, fields }
}

/**
 * Validation result of a body: invalid_body (naming the one bad field when there is exactly one), unsure, or
 * valid. `success` lists what may follow a valid body.
 */
export function bodyValidation(
  verdicts: { root: Verdict; fields: Map<string, Verdict> },
  success: Outcome[],
): Expectation | null {
  if (verdicts.root === 'invalid') return only('root not an object', { status: 400, code: 'invalid_body' })
  const bad = [...verdicts.fields].filter(([, v]) => v === 'invalid').map(([k]) => k)
  const unsure = [...verdicts.fields].filter(([, v]) => v === 'unsure').map(([k]) => k)
  if (bad.length > 0) {
    const expectation = only(`invalid ${bad.join(', ')}`, { status: 400, code: 'invalid_body' })
    // Exactly one problem: the message must name it (docs/api.md: "names the field").
    return bad.length === 1 && unsure.length === 0 ? { ...expectation, names: bad[0] } : expectation
  }
  if (unsure.length > 0) return only(`unsure ${unsure.join(', ')}`, { status: 400, code: 'invalid_body' }, ...success)
  return null
}

// ---------------------------------------------------------------------------------------------------------------
// Query strings of the list

export interface QueryParam {
  /** Names and values as sent (already percent-encoded by the generator when `encoded`). */
  name: string
  value: string
  verdict: Verdict
}

export interface ListQuery {
  limit: number
  cursor?: string
  emailStatus?: string
  stage?: string
  includeArchived: boolean
}

/** The expectation of a query made of `params` (decoded names and values, as the server sees them). */
export function queryExpectation(
  params: QueryParam[],
  garbage: boolean,
): { expectation: Expectation | null; query: ListQuery } {
  const byName = new Map<string, QueryParam[]>()
  for (const p of params) byName.set(p.name, [...(byName.get(p.name) ?? []), p])
  const query: ListQuery = { limit: 50, includeArchived: false }
  const invalid: string[] = []
  const unsure: string[] = []
  for (const [name, group] of byName) {
    const [first] = group
    if (!first) continue
    if (group.length > 1) {
      invalid.push(name)
      continue
    }
    if (first.verdict === 'invalid') invalid.push(name)
    else if (first.verdict === 'unsure') unsure.push(name)
    else if (name === 'limit') query.limit = Number(first.value)
    else if (name === 'cursor') query.cursor = first.value
    else if (name === 'emailStatus') query.emailStatus = first.value
    else if (name === 'stage') query.stage = first.value
    else if (name === 'includeArchived') query.includeArchived = first.value === 'true'
  }
  if (invalid.length > 0) {
    const expectation = only(`invalid ${invalid.join(', ')}`, { status: 400, code: 'invalid_query' })
    const [one] = invalid
    const nameable = invalid.length === 1 && unsure.length === 0 && !garbage && one !== undefined && /^\w+$/.test(one)
    return { expectation: nameable ? { ...expectation, names: one } : expectation, query }
  }
  if (unsure.length > 0 || garbage) {
    return {
      expectation: only(`unsure ${unsure.join(', ')}`, { status: 200 }, { status: 400, code: 'invalid_query' }),
      query,
    }
  }
  return { expectation: null, query }
}
