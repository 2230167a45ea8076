// Request validation with two Ajv instances: bodies are never type-coerced ("firstName": 5 is an error), while
// query strings, which are text by nature, are coerced to the declared integers, booleans and lists. Unknown fields are
// errors everywhere (Fastify's default would silently drop them).
import Ajv, { type ErrorObject, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import fp from 'fastify-plugin'
import { type ParsedQuery, PLUSES_AS_SENT } from '../../http-query.js'
import { EMAIL, UUID } from '../../schemas/common.js'

const shared: Options = { allErrors: false, removeAdditional: false, useDefaults: true, strict: false }

const SECONDS = /[Tt]\d{2}:\d{2}:(\d{2})/
/** RFC 3339's date-time as JSON Schema's format names it: a T between date and time, an offset with its colon. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
// addFormats.get is ajv-formats' public way to a format's definition (its `dist/` files are not).
const rfc3339 = addFormats.default.get('date-time', 'full') as { validate: (value: string) => boolean }

/**
 * An RFC 3339 timestamp that is also an instant the database can store: leap seconds (:60) and dates outside
 * years 1 to 9999 pass the plain format but fail later, in Date or in PostgreSQL. As strict as the document's
 * format: ajv-formats also takes a space for the T and an offset without its colon (+0100).
 */
function isStorableDateTime(value: string): boolean {
  if (!DATE_TIME.test(value) || !rfc3339.validate(value) || Number(SECONDS.exec(value)?.[1]) > 59) return false
  const instant = new Date(value)
  const year = instant.getUTCFullYear()
  return !Number.isNaN(instant.getTime()) && year >= 1 && year <= 9999
}

function createAjv(coerceTypes: Options['coerceTypes']) {
  const ajv = new Ajv.default({ ...shared, coerceTypes })
  addFormats.default(ajv)
  ajv.addFormat('uuid', UUID)
  ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime })
  // The document's `pattern` for emails, as the format: the server refuses what a client's validator refuses.
  ajv.addFormat('email', new RegExp(EMAIL, 'u'))
  return ajv
}

/** A validator as Fastify calls it: false with `errors` set, or true. */
export type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }

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

/**
 * An email never holds a space, nor an instant before its offset's digits: in those parameters, a "+" the query
 * string held unencoded was a plus (mario+news@example.it, …T10:00:00+01:00), not the space forms mean by it.
 */
function plusesRestored(schema: unknown, validate: Validator): Validator {
  const properties = (schema as { properties?: Record<string, { format?: unknown }> }).properties ?? {}
  const names = Object.keys(properties).filter((name) =>
    ['email', 'date-time'].includes(String(properties[name]?.format)),
  )
  const restored: Validator = (data) => {
    const query = data as ParsedQuery | null
    const asSent = query?.[PLUSES_AS_SENT]
    if (query && asSent) {
      for (const name of names) if (typeof query[name] === 'string') query[name] = asSent[name]
    }
    const valid = validate(data)
    restored.errors = validate.errors
    return valid
  }
  return restored
}

/** What a compiler is asked: a route's schema for one part of the request. */
export interface ValidatorRequest {
  schema: object
  httpPart?: string
}

export type CompileValidator = (request: ValidatorRequest) => Validator

/**
 * A compiler of request validators against the schemas `registered` answers (those the features added by $id):
 * the ones added since the last compile are added first, so that a feature registered later is known too.
 */
export function validatorCompiler(registered: () => Iterable<object>): CompileValidator {
  const bodyAjv = createAjv(false)
  // Query strings: a parameter given once is a list of one where the schema wants a list (`?tag=vip`).
  const textAjv = createAjv('array')
  const known = new Set<object>()
  const learn = () => {
    for (const schema of registered()) {
      if (known.has(schema)) continue
      bodyAjv.addSchema(schema)
      textAjv.addSchema(schema)
      known.add(schema)
    }
  }
  return ({ schema, httpPart }) => {
    learn()
    if (httpPart === 'body') return bodyAjv.compile(schema)
    if (httpPart === 'querystring') return plainNumbers(schema, plusesRestored(schema, textAjv.compile(schema)))
    return textAjv.compile(schema)
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Compiles as every route of the service validates, against the schemas registered on the app. */
    compileValidator: CompileValidator
  }
}

export default fp(
  async function validation(fastify) {
    const compile = validatorCompiler(() =>
      Object.values(fastify.getSchemas()).filter((schema): schema is object => typeof schema === 'object'),
    )
    fastify.decorate('compileValidator', compile)
    fastify.setValidatorCompiler(compile)
  },
  { name: 'validation' },
)
