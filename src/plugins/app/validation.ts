// Request validation with two Ajv instances: bodies are never type-coerced ("firstName": 5 is an error), while
// query strings, which are text by nature, are coerced to the declared integers and booleans. Unknown fields are
// errors everywhere (Fastify's default would silently drop them).
import Ajv, { type ErrorObject, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import localizeItModule from 'ajv-i18n/localize/it/index.js'
import fp from 'fastify-plugin'
import { sharedSchemas } from '../../openapi/components.js'
import { EMAIL, EMAIL_REQUIREMENT, PATTERN_DESCRIPTIONS, UUID } from '../../schemas/common.js'

// ajv-i18n is CommonJS (module.exports = localize) but declares an ES default export.
const localizeIt = localizeItModule as unknown as (errors: ErrorObject[]) => void

const shared: Options = { allErrors: false, removeAdditional: false, useDefaults: true, strict: false }

const SECONDS = /[Tt ]\d{2}:\d{2}:(\d{2})/
// addFormats.get is ajv-formats' public way to a format's definition (its `dist/` files are not).
const rfc3339 = addFormats.default.get('date-time', 'full') as { validate: (value: string) => boolean }

/**
 * An RFC 3339 timestamp that is also an instant the database can store: leap seconds (:60) and dates outside
 * years 1 to 9999 pass the plain format but fail later, in Date or in PostgreSQL.
 */
function isStorableDateTime(value: string): boolean {
  if (!rfc3339.validate(value) || Number(SECONDS.exec(value)?.[1]) > 59) return false
  const instant = new Date(value.replace(' ', 'T'))
  const year = instant.getUTCFullYear()
  return !Number.isNaN(instant.getTime()) && year >= 1 && year <= 9999
}

function createAjv(coerceTypes: boolean) {
  const ajv = new Ajv.default({ ...shared, coerceTypes })
  addFormats.default(ajv)
  ajv.addFormat('uuid', UUID)
  ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime })
  // The document's `pattern` for emails, as the format: the server refuses what a client's validator refuses.
  ajv.addFormat('email', new RegExp(EMAIL, 'u'))
  for (const schema of sharedSchemas) ajv.addSchema(schema)
  return ajv
}

/** A validator as Fastify calls it: false with `errors` set, or true. */
type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }

/**
 * Query integers only as plain decimal digits: Ajv's coercion would also read 0x10, 1e2, +5, 5.0 or " 5" as
 * numbers. A parameter spelled otherwise fails as a type error, before Ajv coerces anything.
 */
function plainNumbers(schema: unknown, validate: Validator): Validator {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
  const integers = Object.keys(properties).filter((name) => properties[name]?.type === 'integer')
  const checked: Validator = (data) => {
    const query = data as Record<string, unknown> | null
    const name = integers.find((n) => typeof query?.[n] === 'string' && !/^[0-9]+$/.test(query[n] as string))
    if (name !== undefined) {
      const error = { keyword: 'type', instancePath: `/${name}`, schemaPath: '', params: { type: 'integer' } }
      checked.errors = [error]
      return false
    }
    const valid = validate(data)
    checked.errors = validate.errors
    return valid
  }
  return checked
}

const bodyAjv = createAjv(false)
const textAjv = createAjv(true)

/** Compiles a route's schema for one part of the request, as every route of the service validates it. */
export function compileValidator({ schema, httpPart }: { schema: object; httpPart?: string }): Validator {
  if (httpPart === 'body') return bodyAjv.compile(schema)
  if (httpPart === 'querystring') return plainNumbers(schema, textAjv.compile(schema))
  return textAjv.compile(schema)
}

export default fp(
  async function validation(fastify) {
    fastify.setValidatorCompiler(compileValidator)
  },
  { name: 'validation' },
)

const TYPE_NAMES: Record<string, string> = {
  string: 'un testo',
  integer: 'un numero intero',
  number: 'un numero',
  boolean: 'true o false',
  object: 'un oggetto',
  array: 'una lista',
  null: 'null',
}

function describeType(type: unknown): string {
  const types = Array.isArray(type) ? type : [type]
  return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(' o ')
}

/** "/tags/0" becomes "tags[0]"; the root is the empty string. */
function fieldName(path: string): string {
  return path
    .split('/')
    .slice(1)
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('')
}

function problem(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'type':
      return `deve essere ${describeType(p.type)}`
    case 'enum':
      return `deve essere uno tra: ${(p.allowedValues as unknown[]).join(', ')}`
    case 'pattern':
      return PATTERN_DESCRIPTIONS[String(p.pattern)] ?? 'contiene caratteri non ammessi'
    case 'format':
      return p.format === 'date-time'
        ? 'deve essere una data e ora ISO 8601 con fuso orario (es. 2026-03-01T09:30:00.000Z)'
        : p.format === 'uuid'
          ? 'deve essere un UUID'
          : p.format === 'email'
            ? EMAIL_REQUIREMENT
            : `deve essere nel formato ${String(p.format)}`
    default: {
      const [localized] = structuredClone([error])
      localizeIt([localized as ErrorObject])
      return localized?.message ?? 'non è valido'
    }
  }
}

/**
 * One Italian sentence for the first validation error, naming the field or query parameter.
 * `part` is what the request carried it in: the JSON body or the query string.
 */
export function describeValidationError(
  errors: readonly ErrorObject[],
  part: 'body' | 'querystring' | 'headers',
): string {
  const noun = { body: 'Il campo', querystring: 'Il parametro', headers: "L'intestazione" }[part]
  const error = errors[0]
  const whole = { body: 'Corpo della richiesta', querystring: 'Parametri della richiesta', headers: 'Intestazioni' }[
    part
  ]
  if (!error) return 'Richiesta non valida.'
  const p = error.params as Record<string, unknown>
  if (error.keyword === 'required') {
    const field = [fieldName(error.instancePath), String(p.missingProperty)].filter(Boolean).join('.')
    return `${noun} "${field}" è obbligatorio.`
  }
  if (error.keyword === 'additionalProperties') {
    const field = [fieldName(error.instancePath), String(p.additionalProperty)].filter(Boolean).join('.')
    return `${noun} "${field}" non è ammesso.`
  }
  const field = fieldName(error.instancePath)
  if (field === '') {
    return part === 'body'
      ? `Il corpo della richiesta ${problem(error)}: atteso un oggetto JSON.`
      : `${whole} non validi: ${problem(error)}.`
  }
  return `${noun} "${field}" non è ${part === 'headers' ? 'valida' : 'valido'}: ${problem(error)}.`
}
