// The responses of the operations, as the document describes them: every status the server can send, the codes
// each can carry with an example of each, and the headers that come with it (required where always sent).
import { type TSchema, Type } from '@sinclair/typebox'
import { ApiError, type ErrorCode, errors } from '../errors.js'
import { EMAIL_REQUIREMENT } from './common.js'
import { EXAMPLE_ID } from './contacts.js'
import { ErrorResponseSchema } from './errors.js'

export interface HeaderSpec {
  type: 'string' | 'integer'
  description: string
  example: string | number
  /** Moved to the header object by the swagger plugin (src/plugins/external/swagger.ts). */
  required: true
}

const header = (type: HeaderSpec['type'], description: string, example: string | number): HeaderSpec => ({
  type,
  description,
  example,
  required: true,
})

/** On every answer of the service, including those refused before routing. */
const always = {
  'X-Request-Id': header(
    'string',
    'Identificativo della richiesta, anche nei log',
    '6f1c2b9e-8d0a-4f37-9c55-1e2d3c4b5a69',
  ),
  'Cache-Control': header('string', 'Le risposte non vanno conservate da cache e browser', 'no-store'),
  'X-Content-Type-Options': header('string', 'Il tipo del contenuto non va indovinato', 'nosniff'),
}

/** On every answer that the rate limiter counted: successes and the refusals that come after counting. */
const rateLimit = {
  'X-RateLimit-Limit': header('integer', 'Richieste consentite per finestra (per organizzazione)', 60),
  'X-RateLimit-Remaining': header('integer', 'Richieste ancora disponibili nella finestra corrente', 59),
  'X-RateLimit-Reset': header('integer', 'Secondi alla fine della finestra corrente', 42),
}

const json = (schema: TSchema, examples?: Record<string, { summary: string; value: unknown }>) => ({
  'application/json': { schema, ...(examples && { examples }) },
})

export function success(
  description: string,
  schema: TSchema,
  headers: Record<string, HeaderSpec | (typeof replayedHeader)['Idempotent-Replayed']> = {},
) {
  return { description, headers: { ...always, ...rateLimit, ...headers }, content: json(schema) }
}

export const locationHeader = {
  Location: header('string', 'Percorso del nuovo contatto', `/api/v1/contacts/${EXAMPLE_ID}`),
}

export const etagHeader = {
  ETag: header('string', 'Versione del contatto, da usare con If-Match e If-None-Match', '"v3"'),
}

/** Sent only on answers given again for an Idempotency-Key, so not required. */
export const replayedHeader = {
  'Idempotent-Replayed': {
    type: 'string' as const,
    description: 'true se la risposta è quella della prima richiesta con la stessa Idempotency-Key',
    example: 'true',
  },
}

/** 304: the client's copy (If-None-Match) is the current one; no body. */
export function notModified() {
  return {
    description: 'Non modificato: la copia del client (If-None-Match) è quella attuale. Nessun corpo.',
    type: 'null',
    headers: { ...always, ...rateLimit, ...etagHeader },
  }
}

interface StatusSpec {
  description: string
  /** Whether every answer with this status was counted by the rate limiter (and so has its headers). */
  counted: boolean
}

const STATUSES: Record<number, StatusSpec> = {
  400: { description: 'Richiesta non valida', counted: false },
  401: { description: 'Autenticazione mancante o non valida, oppure organizzazione chiusa', counted: true },
  403: { description: 'Scope o ruolo insufficiente, oppure organizzazione sospesa', counted: true },
  404: { description: 'Contatto inesistente, di un’altra organizzazione, o id non UUID', counted: true },
  405: {
    description: 'Metodo non ammesso su questo percorso (ad esempio HEAD); `Allow` elenca quelli ammessi',
    counted: false,
  },
  408: { description: 'La richiesta non è arrivata per intero in tempo', counted: false },
  409: {
    description:
      'Esiste già un contatto con la stessa email (`error.existing` indica quale), oppure una richiesta con la stessa ' +
      'Idempotency-Key è ancora in corso',
    counted: true,
  },
  412: { description: 'Il contatto non ha più la versione indicata in If-Match: nulla è cambiato', counted: true },
  413: { description: 'Corpo della richiesta troppo grande', counted: true },
  415: { description: 'Corpo JSON in una codifica diversa da UTF-8', counted: true },
  417: { description: 'Intestazione Expect non supportata', counted: false },
  422: { description: 'Idempotency-Key già usata con una richiesta diversa', counted: true },
  429: { description: 'Limite di richieste superato', counted: true },
  431: { description: 'Intestazioni della richiesta troppo grandi', counted: false },
  500: { description: 'Errore interno: il dettaglio è solo nel log, con l’id della richiesta', counted: false },
  503: {
    description: 'Servizio temporaneamente non disponibile (database irraggiungibile o arresto in corso): riprovare',
    counted: false,
  },
}

/** What a client sees for each code: the server's own messages, with example values. */
const EXAMPLES: Record<ErrorCode, ApiError> = {
  bad_request: errors.badRequest(),
  invalid_header: new ApiError(
    400,
    'invalid_header',
    'L\'intestazione "idempotency-key" non è valida: deve avere da 1 a 255 caratteri ASCII stampabili.',
  ),
  invalid_body: new ApiError(400, 'invalid_body', `Il campo "email" non è valido: ${EMAIL_REQUIREMENT}.`),
  invalid_query: new ApiError(400, 'invalid_query', 'Il parametro "limit" non è valido: deve essere <= 200.'),
  unknown_tag: errors.unknownTags(['clienti-vip']),
  missing_authorization: errors.missingAuthorization(),
  invalid_key_format: errors.invalidKeyFormat(),
  invalid_key: errors.invalidKey(),
  invalid_or_revoked: errors.invalidOrRevoked(),
  insufficient_scope: errors.insufficientScope('contacts:write', ['contacts:read']),
  insufficient_role: errors.insufficientRole('viewer'),
  tenant_suspended: errors.tenantSuspended(),
  not_found: errors.notFound(),
  method_not_allowed: errors.methodNotAllowed('HEAD', ['GET', 'POST']),
  request_timeout: errors.requestTimeout(),
  conflict: errors.conflict({ id: EXAMPLE_ID, status: 'active' }),
  idempotency_key_in_use: errors.idempotencyKeyInUse(),
  idempotency_key_reused: errors.idempotencyKeyReused(),
  precondition_failed: errors.preconditionFailed(),
  payload_too_large: errors.payloadTooLarge(),
  unsupported_media_type: errors.unsupportedMediaType(),
  expectation_failed: errors.expectationFailed(),
  rate_limit_exceeded: errors.rateLimited(60, 60, 42),
  headers_too_large: errors.headersTooLarge(),
  internal: errors.internal(),
  service_unavailable: errors.serviceUnavailable(),
}

function failure(status: number, codes: readonly ErrorCode[], extraHeaders: Record<string, object> = {}) {
  const spec = STATUSES[status] ?? { description: 'Errore', counted: false }
  const examples = Object.fromEntries(codes.map((code) => [code, { summary: code, value: EXAMPLES[code].toBody() }]))
  const retryAfter =
    status === 429 ? { 'Retry-After': header('integer', 'Secondi da attendere prima di riprovare', 42) } : {}
  const allow = status === 405 ? { Allow: header('string', 'Metodi ammessi su questo percorso', 'GET, POST') } : {}
  return {
    description: `${spec.description}. Codici: ${codes.join(', ')}.`,
    headers: { ...always, ...(spec.counted ? rateLimit : {}), ...retryAfter, ...allow, ...extraHeaders },
    content: json(Type.Ref(ErrorResponseSchema), examples),
  }
}

/** The error responses every operation can give. */
const common = {
  401: failure(401, ['missing_authorization', 'invalid_key_format', 'invalid_key', 'invalid_or_revoked']),
  403: failure(403, ['insufficient_scope', 'insufficient_role', 'tenant_suspended']),
  405: failure(405, ['method_not_allowed']),
  408: failure(408, ['request_timeout']),
  417: failure(417, ['expectation_failed']),
  429: failure(429, ['rate_limit_exceeded']),
  431: failure(431, ['headers_too_large']),
  500: failure(500, ['internal']),
  503: failure(503, ['service_unavailable']),
}

const bodies = {
  413: failure(413, ['payload_too_large']),
  415: failure(415, ['unsupported_media_type']),
}

export const errorResponses = {
  list: { ...common, 400: failure(400, ['invalid_query', 'bad_request']) },
  read: { ...common, 400: failure(400, ['invalid_query', 'bad_request']), 404: failure(404, ['not_found']) },
  create: {
    ...common,
    ...bodies,
    400: failure(400, ['invalid_body', 'unknown_tag', 'invalid_query', 'invalid_header', 'bad_request']),
    409: failure(409, ['conflict', 'idempotency_key_in_use']),
    422: failure(422, ['idempotency_key_reused']),
  },
  update: {
    ...common,
    ...bodies,
    400: failure(400, ['invalid_body', 'invalid_query', 'bad_request']),
    404: failure(404, ['not_found']),
    412: failure(412, ['precondition_failed']),
  },
}
