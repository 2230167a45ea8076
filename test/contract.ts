// Every answer the suite receives from build()'s app, checked against the committed openapi.json with an OpenAPI
// validator (openapi-backend): the status must be documented for the operation, the documented headers present
// (the document lists only headers that are always sent, each marked required) and the body within its schema.
// Requests for no operation (unknown paths, other methods) must be the documented 404/405 error envelope.
import { readFileSync } from 'node:fs'
import addFormats from 'ajv-formats'
import { OpenAPIBackend } from 'openapi-backend'
import { ERROR_CODES } from '../src/errors/catalogue.ts'

export interface Exchange {
  method: string
  url: string
  status: number
  headers: Record<string, unknown>
  payload: unknown
  /**
   * The route the server's router matched (Fastify's URL, `/api/v1/contacts/:id`); null when it matched none (its
   * 404/405 handler answered); absent, the operation is found from the URL alone. The router's choice is what
   * was served: a lenient path matcher would map `/contacts/x//` to an operation the router never reached, and
   * `/contacts//` to the list where the router serves an empty id.
   */
  route?: string | null
}

interface DocumentedResponse {
  headers?: Record<string, { required?: boolean }>
  content?: unknown
}

interface Document {
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, DocumentedResponse> }>>
}

const document = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as Document
// quick: openapi-backend would otherwise check the document against OpenAPI 3.0's schema, which refuses 3.1's
// fields; the document itself is validated by `npm run openapi:check` (Redocly, Spectral, swagger-parser).
const api = new OpenAPIBackend({
  definition: document as never,
  quick: true,
  validate: true,
  // The formats the document uses (uuid, email, date-time) are checked too, as ajv-formats defines them.
  customizeAjv: (ajv) => {
    addFormats.default(ajv as never)
    return ajv
  },
})
const ready = api.init()

/** Routes of the service that are deliberately not in the document. */
const UNDOCUMENTED = /^\/(health|ready|openapi\.(json|yaml)|docs)(\/|$|\?)/

function bodyOf(payload: unknown): { parsed: unknown } | { error: string } {
  if (typeof payload !== 'string') return { error: `a body that is not JSON text (${typeof payload})` }
  try {
    return { parsed: JSON.parse(payload) }
  } catch {
    return { error: `a body that is not JSON: ${payload.slice(0, 80)}` }
  }
}

/** The 404 or 405 of a request that matches no operation: the envelope, with Allow on a 405. */
function offDocument(exchange: Exchange, body: unknown): string[] {
  const problems: string[] = []
  if (exchange.status !== 404 && exchange.status !== 405) problems.push(`status ${exchange.status} for no operation`)
  if (exchange.status === 405 && typeof exchange.headers.allow !== 'string') problems.push('a 405 without Allow')
  const error = (body as { error?: Record<string, unknown> })?.error
  const keys = Object.keys(error ?? {}).sort()
  if (keys.join() !== 'code,message' || !(ERROR_CODES as readonly unknown[]).includes(error?.code)) {
    problems.push(`not the error envelope: ${JSON.stringify(body)}`)
  }
  return problems
}

/** What is wrong with an exchange according to the document; empty when it conforms. */
export async function contractViolations(exchange: Exchange): Promise<string[]> {
  if (UNDOCUMENTED.test(exchange.url)) return []
  await ready
  const [urlPath = '/', query = ''] = exchange.url.split('?', 2)
  // A route's parameters filled with a placeholder: the path then names the route's operation and no other.
  const path = exchange.route ? exchange.route.replace(/:\w+/g, 'x') : urlPath
  const operation = api.matchOperation({ method: exchange.method, path, query, headers: {} }) as
    | { operationId?: string; responses?: Record<string, DocumentedResponse> }
    | undefined
  if (!operation?.operationId || exchange.route === null) {
    const body = bodyOf(exchange.payload)
    return 'error' in body ? [body.error] : offDocument(exchange, body.parsed)
  }
  const documented = operation.responses?.[String(exchange.status)]
  if (!documented) return [`status ${exchange.status} is not documented for ${operation.operationId}`]
  const problems = headerProblems(exchange, operation.operationId, documented)
  if (documented.content === undefined) {
    // A response without content (304): nothing may be sent.
    if (exchange.payload !== undefined && exchange.payload !== '') problems.push('a body where none is documented')
    return problems
  }
  const body = bodyOf(exchange.payload)
  if ('error' in body) return [...problems, body.error]
  const response = api.validateResponse(body.parsed, operation.operationId, exchange.status)
  for (const error of response.errors ?? []) problems.push(`body: ${error.instancePath} ${error.message}`)
  return problems
}

/** Headers marked required must be there; every documented header that is there must fit its schema. */
function headerProblems(exchange: Exchange, operationId: string, documented: DocumentedResponse): string[] {
  const sent = new Set(Object.keys(exchange.headers).map((name) => name.toLowerCase()))
  const missing = Object.entries(documented.headers ?? {})
    .filter(([name, header]) => header.required === true && !sent.has(name.toLowerCase()))
    .map(([name]) => `headers: ${name} is required`)
  const checked = api.validateResponseHeaders(exchange.headers, operationId, {
    statusCode: exchange.status,
    setMatchType: 'any' as never,
  })
  return [...missing, ...(checked.errors ?? []).map((error) => `headers: ${error.instancePath} ${error.message}`)]
}
