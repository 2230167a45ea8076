// Response documentation shared by the operations: success bodies with the rate-limit headers, and every error
// status with the envelope schema and the codes it can carry.
import { type TSchema, Type } from '@sinclair/typebox'
import type { ErrorCode } from '../errors.js'
import { ErrorSchema } from './errors.js'

const rateLimitHeaders = {
  'X-RateLimit-Limit': { type: 'integer', description: 'Richieste consentite per finestra (per organizzazione)' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Richieste ancora disponibili nella finestra corrente' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Secondi alla fine della finestra corrente' },
  'X-Request-Id': { type: 'string', description: 'Identificativo della richiesta, anche nei log' },
}

const json = (schema: TSchema) => ({ 'application/json': { schema } })

export function success(description: string, schema: TSchema, headers: Record<string, object> = {}) {
  return { description, headers: { ...rateLimitHeaders, ...headers }, content: json(schema) }
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Richiesta non valida',
  401: 'Autenticazione mancante o non valida, oppure organizzazione chiusa',
  403: 'Scope o ruolo insufficiente, oppure organizzazione sospesa',
  404: 'Contatto inesistente o di un’altra organizzazione',
  409: 'Esiste già un contatto con la stessa email; `error.existing` indica quale',
  413: 'Corpo della richiesta troppo grande',
  429: 'Limite di richieste superato',
  500: 'Errore interno',
}

function failure(status: number, codes: readonly ErrorCode[]) {
  const retryAfter =
    status === 429 ? { 'Retry-After': { type: 'integer', description: 'Secondi da attendere prima di riprovare' } } : {}
  return {
    description: `${ERROR_DESCRIPTIONS[status]}. Codici: ${codes.join(', ')}.`,
    headers: { ...rateLimitHeaders, ...retryAfter },
    content: json(Type.Ref(ErrorSchema)),
  }
}

/** The error responses every authenticated operation can give. */
const common = {
  401: failure(401, ['missing_authorization', 'invalid_key_format', 'invalid_key', 'invalid_or_revoked']),
  403: failure(403, ['insufficient_scope', 'insufficient_role', 'tenant_suspended']),
  429: failure(429, ['rate_limit_exceeded']),
  500: failure(500, ['internal']),
}

export const errorResponses = {
  list: { ...common, 400: failure(400, ['invalid_query']) },
  read: { ...common, 404: failure(404, ['not_found']) },
  create: {
    ...common,
    400: failure(400, ['invalid_body', 'unknown_tag']),
    409: failure(409, ['conflict']),
    413: failure(413, ['payload_too_large']),
  },
  update: {
    ...common,
    400: failure(400, ['invalid_body']),
    404: failure(404, ['not_found']),
    413: failure(413, ['payload_too_large']),
  },
}
