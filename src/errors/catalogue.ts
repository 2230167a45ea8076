// The one catalogue of the API's errors. Each code is declared here once: its HTTP status, when it happens (the
// table of docs/api.md, which a test compares with this file), whether the specification names it, and an
// example answer; its Italian messages are the constructors below. ApiError takes its status from here, the
// error-envelope plugin answers with it, and the OpenAPI responses list codes and examples from it.

export interface CodeSpec {
  status: number
  /** When the code is answered, in English: docs/api.md's error table. */
  when: string
  /** False for codes rubrica adds to the specification's list. */
  specified: boolean
  /** An answer with this code, as the document shows it. */
  example: () => ApiError
}

export const CATALOGUE = {
  invalid_body: {
    status: 400,
    when: 'malformed JSON, invalid UTF-8, JSON nested too deep or holding too many objects and lists, missing or non-JSON content type, wrong types, unknown fields, formats and lengths; names the field; bodies are never type-coerced',
    specified: true,
    example: (): ApiError =>
      errors.invalidInput('invalid_body', 'Il campo "firstName" non è valido: deve essere un testo.'),
  },
  invalid_query: {
    status: 400,
    when: 'a bad or unknown query parameter, named in the message',
    specified: false,
    example: (): ApiError =>
      errors.invalidInput('invalid_query', 'Il parametro "limit" non è valido: deve essere <= 200.'),
  },
  invalid_header: {
    status: 400,
    when: 'a malformed or repeated `Idempotency-Key`',
    specified: false,
    example: (): ApiError => errors.repeatedIdempotencyKey(),
  },
  unknown_tag: {
    status: 400,
    when: 'tags that do not exist in the tenant, every one named; nothing is created',
    specified: true,
    example: (): ApiError => errors.unknownTags(['clienti-vip']),
  },
  unknown_field: {
    status: 400,
    when: 'values of fields the tenant does not define (`GET /api/v1/fields`), every one named; nothing is written',
    specified: false,
    example: (): ApiError => errors.unknownFields(['livello']),
  },
  duplicate_in_batch: {
    status: 400,
    when: "a batch import's item whose email (without regard to case) an earlier item of the batch has; told in that item's result",
    specified: false,
    example: (): ApiError => errors.duplicateInBatch(3, 1),
  },
  bad_request: {
    status: 400,
    when: 'a request that breaks HTTP/1.1 (both Content-Length and Transfer-Encoding, two Content-Lengths, folded or bare-LF headers, no Host, an undecodable URL)',
    specified: false,
    example: (): ApiError => errors.badRequest(),
  },
  missing_authorization: {
    status: 401,
    when: 'no `Authorization` header',
    specified: true,
    example: (): ApiError => errors.missingAuthorization(),
  },
  invalid_key_format: {
    status: 401,
    when: 'an `Authorization` header that is not `Bearer svc_<48 hex>`, or two of them',
    specified: true,
    example: (): ApiError => errors.invalidKeyFormat(),
  },
  invalid_key: {
    status: 401,
    when: 'a key that does not exist or was revoked (one answer for both)',
    specified: true,
    example: (): ApiError => errors.invalidKey(),
  },
  invalid_or_revoked: {
    status: 401,
    when: 'a key of a closed organisation (same message as `invalid_key`)',
    specified: true,
    example: (): ApiError => errors.invalidOrRevoked(),
  },
  insufficient_scope: {
    status: 403,
    when: 'the key lacks a scope the operation needs; the message names every scope needed and those held',
    specified: true,
    example: (): ApiError => errors.insufficientScope(['contacts:write'], ['contacts:read']),
  },
  insufficient_role: {
    status: 403,
    when: "the key's role may not perform the operation (viewer: read only)",
    specified: true,
    example: (): ApiError => errors.insufficientRole('viewer'),
  },
  tenant_suspended: {
    status: 403,
    when: 'the organisation is suspended',
    specified: true,
    example: (): ApiError => errors.tenantSuspended(),
  },
  not_found: {
    status: 404,
    when: 'a contact that does not exist, belongs to another tenant, or whose id is not a UUID; also unknown paths',
    specified: true,
    example: (): ApiError => errors.notFound(),
  },
  method_not_allowed: {
    status: 405,
    when: 'a known path with another method; `Allow` lists the methods it has',
    specified: false,
    example: (): ApiError => errors.methodNotAllowed('HEAD', ['GET', 'POST']),
  },
  request_timeout: {
    status: 408,
    when: 'the request did not arrive whole within `REQUEST_TIMEOUT_MS`',
    specified: false,
    example: (): ApiError => errors.requestTimeout(),
  },
  conflict: {
    status: 409,
    when: 'POST with an email the tenant already has; `error.existing` names that contact',
    specified: true,
    example: (): ApiError => errors.conflict({ id: '8b4f3f2e-3f7c-4d0e-9a55-2f2b8d1c9e10', status: 'active' }),
  },
  contact_erased: {
    status: 409,
    when: "a POST, or a batch import's item (told in its result), whose email belongs to a contact the tenant erased (`DELETE /api/v1/contacts/:id`); an operator lifts it with `rubrica contact allow`",
    specified: false,
    example: (): ApiError => errors.contactErased(),
  },
  field_exists: {
    status: 409,
    when: 'a field definition whose name the tenant already has, or deleted a moment ago and is still removing its values from its contacts',
    specified: false,
    example: (): ApiError => errors.fieldExists('livello'),
  },
  field_in_use: {
    status: 409,
    when: 'a change of a field definition that values already stored would not satisfy (its type, options taken away, a shorter maxLength); says how many contacts hold them',
    specified: false,
    example: (): ApiError => errors.fieldInUse('livello', 12),
  },
  limit_reached: {
    status: 409,
    when: 'a webhook more than the 20 a tenant may have, a field definition more than the 100',
    specified: false,
    example: (): ApiError => errors.tooManyWebhooks(20),
  },
  idempotency_key_in_use: {
    status: 409,
    when: 'the first request with that `Idempotency-Key` is still running',
    specified: false,
    example: (): ApiError => errors.idempotencyKeyInUse(),
  },
  cursor_expired: {
    status: 410,
    when: 'an events position older than `EVENTS_RETENTION_DAYS`: the events after it were purged; resync from the contacts list',
    specified: false,
    example: (): ApiError => errors.cursorExpired(30),
  },
  precondition_failed: {
    status: 412,
    when: '`If-Match` names no current ETag; nothing changed',
    specified: false,
    example: (): ApiError => errors.preconditionFailed(),
  },
  payload_too_large: {
    status: 413,
    when: "a body larger than `BODY_LIMIT`, or than the batch import's own limit (about 7.4 MB)",
    specified: false,
    example: (): ApiError => errors.payloadTooLarge(),
  },
  unsupported_media_type: {
    status: 415,
    when: 'a JSON body declared in a charset other than UTF-8, or compressed',
    specified: false,
    example: (): ApiError => errors.unsupportedMediaType(),
  },
  expectation_failed: {
    status: 417,
    when: 'an `Expect` other than `100-continue`',
    specified: false,
    example: (): ApiError => errors.expectationFailed(),
  },
  idempotency_key_reused: {
    status: 422,
    when: 'the `Idempotency-Key` was used with another body',
    specified: false,
    example: (): ApiError => errors.idempotencyKeyReused(),
  },
  rate_limit_exceeded: {
    status: 429,
    when: 'over the limit; the message states the limit and the wait, `Retry-After` the seconds',
    specified: true,
    example: (): ApiError => errors.rateLimited(60, 60, 42),
  },
  headers_too_large: {
    status: 431,
    when: "a header block larger than Node's 16 KiB",
    specified: false,
    example: (): ApiError => errors.headersTooLarge(),
  },
  internal: {
    status: 500,
    when: 'an unforeseen failure: a generic message; the detail is only in the log, with the request id',
    specified: true,
    example: (): ApiError => errors.internal(),
  },
  server_busy: {
    status: 503,
    when: "the instance holds as many batch imports as `BATCH_CONCURRENCY` lets it, or the tenant one of the largest size (refused before the body is read); or a search waited 2 s for its turn behind the tenant's own (2 at once) or the instance's; `Retry-After` says when to retry",
    specified: false,
    example: (): ApiError => errors.serverBusy(3),
  },
  service_unavailable: {
    status: 503,
    when: "the database cannot be reached or a connection was cut, the request's transaction stayed a deadlock's victim after retries, or the server is shutting down; retry. Also an instance without its secrets key (`WEBHOOKS_SECRET_KEY`) asked to register a webhook, to erase a contact, or to create one in a tenant that has erased contacts",
    specified: false,
    example: (): ApiError => errors.serviceUnavailable(),
  },
} as const satisfies Record<string, CodeSpec>

export type ErrorCode = keyof typeof CATALOGUE

/** The statuses errors are answered with: the document describes each (src/openapi/responses.ts). */
export type ErrorStatus = (typeof CATALOGUE)[ErrorCode]['status']

/** Every code, in the catalogue's order (by status). */
export const ERROR_CODES = Object.keys(CATALOGUE) as ErrorCode[]

export class ApiError extends Error {
  readonly statusCode: number

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra members of the `error` object, e.g. `existing` on a conflict. */
    readonly extra: Record<string, unknown> = {},
    /** Headers the answer carries, e.g. `retry-after` on a server_busy. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
    this.statusCode = CATALOGUE[code].status
  }

  toBody() {
    return { error: { code: this.code, message: this.message, ...this.extra } }
  }
}

/** What a contact's own fields may hold at most, in bytes (CUSTOM_FIELD_LIMITS.valuesBytes; a test compares them). */
export const FIELD_VALUES_BYTES = 8192

/** invalid_key and invalid_or_revoked must not tell a revoked key from a closed organisation: same words. */
const KEY_REFUSED = 'Chiave API non valida, revocata o non più utilizzabile.'

/** Why an erased address cannot come back, and how it can (the operators' command, docs/cli.md). */
const ERASED_ADDRESS =
  'Questo indirizzo email appartiene a un contatto cancellato su richiesta dell’interessato e non può essere aggiunto di nuovo.'
const HOW_TO_ALLOW =
  'Se la persona ha dato di nuovo il consenso, un amministratore del servizio può riammetterlo con "rubrica contact allow".'

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many)
/** "a"; "a" e "b"; "a", "b" e "c". */
const quotedList = (names: readonly string[]) => {
  const quoted = names.map((name) => `"${name}"`)
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} e ${quoted.at(-1)}` : (quoted[0] ?? '')
}

/** The API's errors with their Italian messages: handlers, hooks and plugins throw these. */
export const errors = {
  missingAuthorization: () =>
    new ApiError('missing_authorization', 'Intestazione Authorization mancante: usa "Bearer <chiave API>".'),
  invalidKeyFormat: () =>
    new ApiError(
      'invalid_key_format',
      'Intestazione Authorization non valida: atteso "Bearer svc_" seguito da 48 caratteri esadecimali.',
    ),
  invalidKey: () => new ApiError('invalid_key', KEY_REFUSED),
  invalidOrRevoked: () => new ApiError('invalid_or_revoked', KEY_REFUSED),
  tenantSuspended: () =>
    new ApiError(
      'tenant_suspended',
      "L'organizzazione è sospesa: le richieste sono rifiutate finché non torna attiva.",
    ),
  insufficientScope: (required: readonly string[], held: readonly string[]) =>
    new ApiError(
      'insufficient_scope',
      `Permessi insufficienti: ${plural(required.length, 'serve lo scope', 'servono gli scope')} ${quotedList(
        required,
      )}; la chiave ha ${held.length > 0 ? held.map((s) => `"${s}"`).join(', ') : 'nessuno scope'}.`,
    ),
  insufficientRole: (role: string) =>
    new ApiError('insufficient_role', `Il ruolo "${role}" della chiave non consente questa operazione.`),
  notFound: () => new ApiError('not_found', 'Risorsa non trovata.'),
  cursorExpired: (retentionDays: number) =>
    new ApiError(
      'cursor_expired',
      `Gli eventi dopo questa posizione sono stati eliminati (si conservano ${retentionDays} giorni): rileggi i ` +
        'contatti dalla lista e riparti dalla posizione "now".',
    ),
  unknownPosition: () =>
    new ApiError(
      'invalid_query',
      'Il parametro "after" non è valido: nessuna risposta ha mai dato questa posizione; usa "next" di una risposta o "now".',
    ),
  methodNotAllowed: (method: string, allowed: readonly string[]) =>
    new ApiError(
      'method_not_allowed',
      `Il metodo ${method} non è ammesso su questo percorso; metodi ammessi: ${allowed.join(', ')}.`,
    ),
  badRequest: () => new ApiError('bad_request', 'Richiesta HTTP non valida.'),
  requestTimeout: () => new ApiError('request_timeout', 'La richiesta non è arrivata per intero in tempo: riprova.'),
  headersTooLarge: () =>
    new ApiError('headers_too_large', 'Le intestazioni della richiesta superano la dimensione massima consentita.'),
  expectationFailed: () =>
    new ApiError('expectation_failed', 'Intestazione Expect non supportata: è ammesso solo "100-continue".'),
  preconditionFailed: () =>
    new ApiError(
      'precondition_failed',
      'Il contatto è cambiato dalla versione indicata in If-Match: rileggilo e riprova. Nulla è stato modificato.',
    ),
  idempotencyKeyReused: () =>
    new ApiError(
      'idempotency_key_reused',
      'Questa Idempotency-Key è già stata usata con una richiesta diversa: usa una chiave nuova per una richiesta nuova.',
    ),
  repeatedIdempotencyKey: () =>
    new ApiError('invalid_header', 'Intestazione "Idempotency-Key" ripetuta: ne è ammessa una sola.'),
  idempotencyKeyInUse: () =>
    new ApiError(
      'idempotency_key_in_use',
      'Una richiesta con questa Idempotency-Key è ancora in corso: riprova tra poco.',
    ),
  /** A validation failure of the body, query or headers, its message from describeValidationError. */
  invalidInput: (code: 'invalid_body' | 'invalid_query' | 'invalid_header', message: string) =>
    new ApiError(code, message),
  notJsonBody: () =>
    new ApiError('invalid_body', 'Il corpo della richiesta deve essere JSON (Content-Type: application/json).'),
  emptyBody: () => new ApiError('invalid_body', 'Il corpo della richiesta è vuoto: atteso un oggetto JSON.'),
  invalidJson: () => new ApiError('invalid_body', 'Il corpo della richiesta non è un JSON valido.'),
  invalidJsonOrForbiddenKeys: () =>
    new ApiError('invalid_body', 'Il corpo della richiesta non è un JSON valido o contiene chiavi vietate.'),
  invalidUtf8: () => new ApiError('invalid_body', 'Il corpo della richiesta non è testo UTF-8 valido.'),
  jsonTooDeep: (maxDepth: number) =>
    new ApiError(
      'invalid_body',
      `Il JSON del corpo annida oggetti e liste su più di ${maxDepth} livelli, il massimo consentito.`,
    ),
  jsonTooManyContainers: (maxContainers: number) =>
    new ApiError(
      'invalid_body',
      `Il JSON del corpo contiene più di ${maxContainers} oggetti e liste, il massimo consentito.`,
    ),
  payloadTooLarge: () =>
    new ApiError('payload_too_large', 'Il corpo della richiesta supera la dimensione massima consentita.'),
  unsupportedEncoding: () =>
    new ApiError(
      'unsupported_media_type',
      'Codifica del corpo non supportata (Content-Encoding o Transfer-Encoding): il corpo va inviato non compresso (JSON in UTF-8).',
    ),
  unsupportedMediaType: () =>
    new ApiError(
      'unsupported_media_type',
      'Codifica del corpo non supportata: il corpo deve essere JSON in UTF-8 (Content-Type: application/json).',
    ),
  contactErased: () => new ApiError('contact_erased', `${ERASED_ADDRESS} ${HOW_TO_ALLOW}`),
  /** An item of a batch import whose email was erased. */
  contactErasedInItem: (index: number) =>
    new ApiError(
      'contact_erased',
      `Il campo "contacts[${index}].email": ${ERASED_ADDRESS.charAt(0).toLowerCase()}${ERASED_ADDRESS.slice(1)} ${HOW_TO_ALLOW}`,
    ),
  erasureUnavailable: () =>
    new ApiError(
      'service_unavailable',
      'La cancellazione dei contatti non è disponibile su questo servizio: manca la chiave con cui si registrano gli ' +
        'indirizzi cancellati.',
    ),
  /** A create in a tenant with erased addresses, on an instance that cannot tell which they are. */
  erasedCheckUnavailable: () =>
    new ApiError(
      'service_unavailable',
      'Il servizio non può verificare se questo indirizzo è stato cancellato su richiesta dell’interessato: manca ' +
        'la chiave con cui si registrano gli indirizzi cancellati. Nulla è stato creato.',
    ),
  conflict: (existing: { id: string; status: string }) =>
    new ApiError('conflict', 'Esiste già un contatto con questa email.', { existing }),
  unknownTags: (names: readonly string[]) =>
    new ApiError(
      'unknown_tag',
      `${plural(names.length, 'Tag inesistente', 'Tag inesistenti')}: ${names.map((n) => `"${n}"`).join(', ')}.`,
    ),
  /** An item of a batch import that names tags the tenant does not have. */
  unknownTagsInItem: (index: number, names: readonly string[]) =>
    new ApiError(
      'unknown_tag',
      `Il campo "contacts[${index}].tags" nomina ${plural(names.length, 'un tag inesistente', 'tag inesistenti')}: ${names
        .map((n) => `"${n}"`)
        .join(', ')}.`,
    ),
  duplicateInBatch: (index: number, earlier: number) =>
    new ApiError(
      'duplicate_in_batch',
      `Il campo "contacts[${index}].email" ripete l’email di "contacts[${earlier}]": un contatto compare una volta ` +
        'sola per lotto, e vale il primo.',
    ),
  rateLimited: (max: number, windowSeconds: number, retryAfterSeconds: number) =>
    new ApiError(
      'rate_limit_exceeded',
      `Limite di ${max} richieste ogni ${windowSeconds} secondi superato: riprova tra ${retryAfterSeconds} ${plural(
        retryAfterSeconds,
        'secondo',
        'secondi',
      )}.`,
    ),
  internal: () => new ApiError('internal', 'Errore interno del server. Riprova più tardi.'),
  invalidWebhookUrl: (reason: string) => new ApiError('invalid_body', `Il campo "url" non è valido: ${reason}.`),
  unknownFields: (names: readonly string[], at = 'fields') =>
    new ApiError(
      'unknown_field',
      `Il campo "${at}" nomina ${plural(names.length, 'un campo inesistente', 'campi inesistenti')}: ${names
        .map((n) => `"${n}"`)
        .join(', ')}. I campi dell’organizzazione sono in GET /api/v1/fields.`,
    ),
  fieldsTooLarge: (bytes: number, at = 'fields') =>
    new ApiError(
      'invalid_body',
      `Il campo "${at}" non è valido: i valori dei campi propri del contatto occuperebbero ${bytes} byte, al massimo ${FIELD_VALUES_BYTES}.`,
    ),
  fieldsOutsideDefinitions: (names: readonly string[]) =>
    new ApiError(
      'invalid_body',
      `Il campo "fields" non è valido: ${plural(names.length, 'la definizione di', 'le definizioni di')} ${names
        .map((n) => `"${n}"`)
        .join(
          ', ',
        )} ${plural(names.length, 'è cambiata', 'sono cambiate')} mentre il contatto veniva scritto, e ${plural(
        names.length,
        'il valore dato non la rispetta',
        'i valori dati non le rispettano',
      )}. Le definizioni sono in GET /api/v1/fields.`,
    ),
  fieldExists: (name: string, removing = false) =>
    new ApiError(
      'field_exists',
      removing
        ? `Il campo "${name}" è stato appena eliminato e i suoi valori sono ancora in rimozione: riprova tra poco.`
        : `L'organizzazione ha già un campo "${name}".`,
    ),
  fieldInUse: (name: string, contacts: number) =>
    new ApiError(
      'field_in_use',
      `La modifica di "${name}" non ammetterebbe i valori che ${plural(contacts, 'un contatto ha', `${contacts} contatti hanno`)}: aggiornali o toglili prima.`,
    ),
  fieldNotFound: (name: string) => new ApiError('not_found', `Il campo "${name}" non esiste.`),
  tooManyFields: (max: number) =>
    new ApiError('limit_reached', `L'organizzazione ha già ${max} campi propri, il massimo: eliminane uno prima.`),
  tooManyWebhooks: (max: number) =>
    new ApiError('limit_reached', `L'organizzazione ha già ${max} webhook, il massimo: eliminane uno prima.`),
  webhooksUnavailable: () =>
    new ApiError(
      'service_unavailable',
      'I webhook non sono disponibili su questo servizio: manca la chiave che ne protegge i segreti.',
    ),
  serverBusy: (retryAfterSeconds: number) =>
    new ApiError(
      'server_busy',
      `Il servizio sta già eseguendo tutte le importazioni in blocco che può: riprova tra ${retryAfterSeconds} ${plural(
        retryAfterSeconds,
        'secondo',
        'secondi',
      )}.`,
    ),
  /** The tenant's searches, or the instance's, already running as many as it runs at once. */
  searchBusy: (retryAfterSeconds: number) =>
    new ApiError(
      'server_busy',
      `Il servizio sta già eseguendo tutte le ricerche che può per questa organizzazione: riprova tra ${retryAfterSeconds} ${plural(
        retryAfterSeconds,
        'secondo',
        'secondi',
      )}.`,
      {},
      { 'retry-after': String(retryAfterSeconds) },
    ),
  /** The tenant's own batches already hold its share of the instance: another would only wait behind them. */
  tenantBatchesBusy: (retryAfterSeconds: number) =>
    new ApiError(
      'server_busy',
      `Le importazioni in blocco già in corso di questa organizzazione occupano la sua parte del servizio: riprova tra ${retryAfterSeconds} ${plural(
        retryAfterSeconds,
        'secondo',
        'secondi',
      )}.`,
    ),
  serviceUnavailable: () =>
    new ApiError('service_unavailable', 'Servizio temporaneamente non disponibile. Riprova tra poco.'),
}
