// The responses of the operations, as the document describes them: every status the server can send, the codes
// each can carry with an example of each, and the headers that come with it (required where always sent).
import type { TSchema } from '@sinclair/typebox'
import { CATALOGUE, ERROR_CODES, type ErrorCode, type ErrorStatus } from '../errors/catalogue.js'
import { ErrorResponseRef } from '../errors/schemas.js'

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

export const locationHeader = (description: string, example: string) => ({
  Location: header('string', description, example),
})

export const etagHeader = (description: string) => ({ ETag: header('string', description, '"v3"') })

/** Sent only on answers given again for an Idempotency-Key, so not required. */
export const replayedHeader = {
  'Idempotent-Replayed': {
    type: 'string' as const,
    description: 'true se la risposta è quella della prima richiesta con la stessa Idempotency-Key',
    example: 'true',
  },
}

/** 304: the client's copy (If-None-Match) is the current one; no body. */
export function notModified(etag: ReturnType<typeof etagHeader>) {
  return {
    description: 'Non modificato: la copia del client (If-None-Match) è quella attuale. Nessun corpo.',
    type: 'null',
    headers: { ...always, ...rateLimit, ...etag },
  }
}

/** A success without a body (204). */
export function noContent(description: string) {
  return { description, type: 'null', headers: { ...always, ...rateLimit } }
}

interface StatusSpec {
  description: string
  /** Whether every answer with this status was counted by the rate limiter (and so has its headers). */
  counted: boolean
}

/** Per status that errors use: a status added to the catalogue without its entry here does not compile. */
const STATUSES: Record<ErrorStatus, StatusSpec> = {
  400: { description: 'Richiesta non valida', counted: false },
  401: { description: 'Autenticazione mancante o non valida, oppure organizzazione chiusa', counted: true },
  403: { description: 'Scope o ruolo insufficiente, oppure organizzazione sospesa', counted: true },
  404: { description: 'Risorsa inesistente, di un’altra organizzazione, o id non UUID', counted: true },
  405: {
    description: 'Metodo non ammesso su questo percorso (ad esempio HEAD); `Allow` elenca quelli ammessi',
    counted: false,
  },
  408: { description: 'La richiesta non è arrivata per intero in tempo', counted: false },
  409: {
    description:
      'In conflitto con lo stato attuale: una risorsa uguale esiste già (`conflict`, con `error.existing`), l’email ' +
      'è di un contatto cancellato su richiesta dell’interessato (`contact_erased`), oppure una richiesta con la ' +
      'stessa Idempotency-Key è ancora in corso',
    counted: true,
  },
  410: { description: 'La posizione indicata è più vecchia degli eventi conservati', counted: true },
  412: { description: 'La risorsa non ha più la versione indicata in If-Match: nulla è cambiato', counted: true },
  413: { description: 'Corpo della richiesta troppo grande', counted: true },
  415: { description: 'Corpo JSON in una codifica diversa da UTF-8', counted: true },
  417: { description: 'Intestazione Expect non supportata', counted: false },
  422: { description: 'Idempotency-Key già usata con una richiesta diversa', counted: true },
  429: { description: 'Limite di richieste superato', counted: true },
  431: { description: 'Intestazioni della richiesta troppo grandi', counted: false },
  500: { description: 'Errore interno: il dettaglio è solo nel log, con l’id della richiesta', counted: false },
  503: {
    description:
      'Servizio temporaneamente non disponibile (database irraggiungibile, arresto in corso, o troppe importazioni ' +
      'in blocco in corso): riprovare; oppure servizio senza la chiave dei suoi segreti, che servono a webhook e ' +
      'cancellazioni',
    counted: false,
  },
}

/** Sent with server_busy only, so not required on a 503. */
const busyRetryAfter = {
  type: 'integer' as const,
  description: 'Con server_busy: secondi da attendere prima di riprovare',
  example: 3,
}

function failure(status: ErrorStatus, codes: readonly ErrorCode[]) {
  const spec = STATUSES[status]
  const examples = Object.fromEntries(
    codes.map((code) => [code, { summary: code, value: CATALOGUE[code].example().toBody() }]),
  )
  const retryAfter =
    status === 429
      ? { 'Retry-After': header('integer', 'Secondi da attendere prima di riprovare', 42) }
      : codes.includes('server_busy')
        ? { 'Retry-After': busyRetryAfter }
        : {}
  const allow = status === 405 ? { Allow: header('string', 'Metodi ammessi su questo percorso', 'GET, POST') } : {}
  return {
    description: `${spec.description}. Codici: ${codes.join(', ')}.`,
    headers: { ...always, ...(spec.counted ? rateLimit : {}), ...retryAfter, ...allow },
    content: json(ErrorResponseRef, examples),
  }
}

/** The codes every operation under /api/v1 can answer with, whatever it does. */
export const COMMON_CODES = [
  'bad_request',
  'invalid_query',
  'missing_authorization',
  'invalid_key_format',
  'invalid_key',
  'invalid_or_revoked',
  'insufficient_scope',
  'insufficient_role',
  'tenant_suspended',
  'method_not_allowed',
  'request_timeout',
  'expectation_failed',
  'rate_limit_exceeded',
  'headers_too_large',
  'internal',
  'service_unavailable',
] as const satisfies readonly ErrorCode[]

/** The codes of an operation that takes a JSON body, beyond its own. */
export const BODY_CODES = [
  'invalid_body',
  'payload_too_large',
  'unsupported_media_type',
] as const satisfies readonly ErrorCode[]

/** The error responses of an operation that can answer with `codes`: one per status, from the catalogue. */
export function errorResponses(codes: readonly ErrorCode[]) {
  const byStatus = new Map<ErrorStatus, ErrorCode[]>()
  // In the catalogue's order, whatever order the operation lists them in.
  for (const code of ERROR_CODES.filter((known) => codes.includes(known))) {
    const status = CATALOGUE[code].status
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  return Object.fromEntries([...byStatus].map(([status, grouped]) => [status, failure(status, grouped)]))
}
