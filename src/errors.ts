// The one error shape of the API: {"error":{"code","message"}} with an Italian message and a machine code.
// Handlers and hooks throw ApiError; the error-envelope plugin turns every other error into one as well.

export const ERROR_CODES = [
  'bad_request',
  'invalid_header',
  'invalid_body',
  'invalid_query',
  'unknown_tag',
  'missing_authorization',
  'invalid_key_format',
  'invalid_key',
  'invalid_or_revoked',
  'insufficient_scope',
  'insufficient_role',
  'tenant_suspended',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'conflict',
  'idempotency_key_in_use',
  'precondition_failed',
  'payload_too_large',
  'unsupported_media_type',
  'expectation_failed',
  'idempotency_key_reused',
  'rate_limit_exceeded',
  'headers_too_large',
  'internal',
  'service_unavailable',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    /** Extra members of the `error` object, e.g. `existing` on a conflict. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }

  toBody() {
    return { error: { code: this.code, message: this.message, ...this.extra } }
  }
}

/** invalid_key and invalid_or_revoked must not tell a revoked key from a closed organisation: same words. */
const KEY_REFUSED = 'Chiave API non valida, revocata o non più utilizzabile.'

export const errors = {
  missingAuthorization: () =>
    new ApiError(401, 'missing_authorization', 'Intestazione Authorization mancante: usa "Bearer <chiave API>".'),
  invalidKeyFormat: () =>
    new ApiError(
      401,
      'invalid_key_format',
      'Intestazione Authorization non valida: atteso "Bearer svc_" seguito da 48 caratteri esadecimali.',
    ),
  invalidKey: () => new ApiError(401, 'invalid_key', KEY_REFUSED),
  invalidOrRevoked: () => new ApiError(401, 'invalid_or_revoked', KEY_REFUSED),
  tenantSuspended: () =>
    new ApiError(
      403,
      'tenant_suspended',
      "L'organizzazione è sospesa: le richieste sono rifiutate finché non torna attiva.",
    ),
  insufficientScope: (required: string, held: readonly string[]) =>
    new ApiError(
      403,
      'insufficient_scope',
      `Permessi insufficienti: serve lo scope "${required}"; la chiave ha ${
        held.length > 0 ? held.map((s) => `"${s}"`).join(', ') : 'nessuno scope'
      }.`,
    ),
  insufficientRole: (role: string) =>
    new ApiError(403, 'insufficient_role', `Il ruolo "${role}" della chiave non consente questa operazione.`),
  notFound: () => new ApiError(404, 'not_found', 'Risorsa non trovata.'),
  methodNotAllowed: (method: string, allowed: readonly string[]) =>
    new ApiError(
      405,
      'method_not_allowed',
      `Il metodo ${method} non è ammesso su questo percorso; metodi ammessi: ${allowed.join(', ')}.`,
    ),
  badRequest: () => new ApiError(400, 'bad_request', 'Richiesta HTTP non valida.'),
  requestTimeout: () =>
    new ApiError(408, 'request_timeout', 'La richiesta non è arrivata per intero in tempo: riprova.'),
  headersTooLarge: () =>
    new ApiError(
      431,
      'headers_too_large',
      'Le intestazioni della richiesta superano la dimensione massima consentita.',
    ),
  expectationFailed: () =>
    new ApiError(417, 'expectation_failed', 'Intestazione Expect non supportata: è ammesso solo "100-continue".'),
  preconditionFailed: () =>
    new ApiError(
      412,
      'precondition_failed',
      'Il contatto è cambiato dalla versione indicata in If-Match: rileggilo e riprova. Nulla è stato modificato.',
    ),
  idempotencyKeyReused: () =>
    new ApiError(
      422,
      'idempotency_key_reused',
      'Questa Idempotency-Key è già stata usata con una richiesta diversa: usa una chiave nuova per una richiesta nuova.',
    ),
  repeatedIdempotencyKey: () =>
    new ApiError(400, 'invalid_header', 'Intestazione "Idempotency-Key" ripetuta: ne è ammessa una sola.'),
  idempotencyKeyInUse: () =>
    new ApiError(
      409,
      'idempotency_key_in_use',
      'Una richiesta con questa Idempotency-Key è ancora in corso: riprova tra poco.',
    ),
  /** A validation failure of the body, query or headers, its message from describeValidationError. */
  invalidInput: (code: 'invalid_body' | 'invalid_query' | 'invalid_header', message: string) =>
    new ApiError(400, code, message),
  notJsonBody: () =>
    new ApiError(400, 'invalid_body', 'Il corpo della richiesta deve essere JSON (Content-Type: application/json).'),
  emptyBody: () => new ApiError(400, 'invalid_body', 'Il corpo della richiesta è vuoto: atteso un oggetto JSON.'),
  invalidJson: () => new ApiError(400, 'invalid_body', 'Il corpo della richiesta non è un JSON valido.'),
  invalidJsonOrForbiddenKeys: () =>
    new ApiError(400, 'invalid_body', 'Il corpo della richiesta non è un JSON valido o contiene chiavi vietate.'),
  invalidUtf8: () => new ApiError(400, 'invalid_body', 'Il corpo della richiesta non è testo UTF-8 valido.'),
  payloadTooLarge: () =>
    new ApiError(413, 'payload_too_large', 'Il corpo della richiesta supera la dimensione massima consentita.'),
  unsupportedEncoding: () =>
    new ApiError(
      415,
      'unsupported_media_type',
      'Content-Encoding non supportato: il corpo va inviato non compresso (JSON in UTF-8).',
    ),
  unsupportedMediaType: () =>
    new ApiError(
      415,
      'unsupported_media_type',
      'Codifica del corpo non supportata: il corpo deve essere JSON in UTF-8 (Content-Type: application/json).',
    ),
  conflict: (existing: { id: string; status: string }) =>
    new ApiError(409, 'conflict', 'Esiste già un contatto con questa email.', { existing }),
  unknownTags: (names: readonly string[]) =>
    new ApiError(
      400,
      'unknown_tag',
      `${names.length === 1 ? 'Tag inesistente' : 'Tag inesistenti'}: ${names.map((n) => `"${n}"`).join(', ')}.`,
    ),
  rateLimited: (max: number, windowSeconds: number, retryAfterSeconds: number) =>
    new ApiError(
      429,
      'rate_limit_exceeded',
      `Limite di ${max} richieste ogni ${windowSeconds} secondi superato: riprova tra ${retryAfterSeconds} ${
        retryAfterSeconds === 1 ? 'secondo' : 'secondi'
      }.`,
    ),
  internal: () => new ApiError(500, 'internal', 'Errore interno del server. Riprova più tardi.'),
  serviceUnavailable: () =>
    new ApiError(503, 'service_unavailable', 'Servizio temporaneamente non disponibile. Riprova tra poco.'),
}
