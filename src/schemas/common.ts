import { type TSchema, type TUnsafe, Type } from '@sinclair/typebox'

/** Characters no text field may hold, as the body of a character class. */
const FORBIDDEN =
  // Control characters (C0, DEL, C1: PostgreSQL refuses NUL, and none belongs in a name); lone surrogate halves
  // (UTF-8 cannot store them); format characters (category Cf: bidi overrides that disguise text, zero-width
  // characters, U+FEFF, which some stores drop); line and paragraph separators.
  '\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF\\p{Cf}\\u2028\\u2029'

/**
 * Text without forbidden characters. Ajv compiles patterns in Unicode mode, where \p{…} works and a surrogate
 * range matches only unpaired halves; code elsewhere must compile it with the `u` flag too.
 */
export const PRINTABLE = `^[^${FORBIDDEN}]*$`

/** PRINTABLE text with at least one character that is not white space: names and the legal basis. */
export const VISIBLE_TEXT = `^(?!\\s*$)[^${FORBIDDEN}]*$`

/**
 * PRINTABLE text with a letter or a digit: a value that search compares word by word has a word at least. U+02BC,
 * a letter to Unicode, is an apostrophe to search.
 */
export const WORDED_TEXT = `^(?=[^${FORBIDDEN}]*(?!\\u02BC)[\\p{L}\\p{N}])[^${FORBIDDEN}]*$`

/** Digits, spaces, a leading +, dots, dashes and parentheses, with at least 3 digits. */
export const PHONE = '^\\+?(?:[ ().-]*[0-9]){3}[0-9 ().-]*$'

/**
 * An Idempotency-Key: 1 to 255 printable ASCII characters, not starting or ending with a space. Spaces and tabs
 * around it may be sent: HTTP takes them off before the server sees the value (RFC 9110, 5.5), so they are not part
 * of the key, and the document allows them, to say what the server accepts.
 */
export const IDEMPOTENCY_KEY = '^[ \\t]*[\\x21-\\x7E](?:[\\x20-\\x7E]{0,253}[\\x21-\\x7E])?[ \\t]*$'

/**
 * An events position as clients send it back: `now`, or a number of at most 30 digits without leading zeros (a
 * transaction id of up to 20 digits and 10 for the event's number within it: src/events/position.ts).
 */
export const POSITION = '^(now|0|[1-9][0-9]{0,29})$'

/** An atom of an address's local part (RFC 5322's atext). */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
/** A domain label: letters, digits and inner hyphens, at most 63 characters (RFC 1035). */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?'

/**
 * The addresses a mailing list can deliver to, and the only ones the API takes: a dot-atom local part of at most
 * 64 characters, `@`, and a domain name of at least two labels. Stricter than RFC 5322 on purpose (no quoted local
 * parts, no address literals such as [127.0.0.1], no single-label domains such as localhost), and written in the
 * document as this pattern beside `format: email`, so that clients and validators refuse exactly what the server
 * refuses. The server checks the format with this same expression.
 */
export const EMAIL = `^(?=[^@]{1,64}@)${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${LABEL}$`

/** What EMAIL requires, in the words of validation messages. */
export const EMAIL_REQUIREMENT =
  'deve essere un indirizzo email valido con un dominio di almeno due parti (es. nome@esempio.it); non sono ' +
  'ammessi indirizzi tra virgolette né indirizzi IP'

/** The Italian words for what a pattern requires, keyed by the pattern (validation messages use them). */
export const PATTERN_DESCRIPTIONS: Record<string, string> = {
  [PRINTABLE]: 'non deve contenere caratteri di controllo, di formato (invisibili) o separatori di riga',
  [VISIBLE_TEXT]:
    'deve contenere almeno un carattere visibile e nessun carattere di controllo, di formato (invisibile) o ' +
    'separatore di riga',
  [WORDED_TEXT]:
    'deve contenere almeno una lettera o una cifra e nessun carattere di controllo, di formato (invisibile) o ' +
    'separatore di riga',
  [PHONE]: 'deve contenere almeno 3 cifre e solo cifre, spazi, + iniziale, punti, trattini e parentesi',
  [IDEMPOTENCY_KEY]: 'deve avere da 1 a 255 caratteri ASCII stampabili, senza spazi all’inizio o alla fine',
  [EMAIL]: EMAIL_REQUIREMENT,
  [POSITION]: 'deve essere "now" o il valore di "next" di una risposta precedente',
}

/** A plain UUID, any case. ajv-formats' uuid also accepts a "urn:uuid:" prefix, which PostgreSQL's uuid type does not. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** `type: [T, "null"]`, the OpenAPI 3.1 way to say "or null"; a list of values (`enum`) gains null too. */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<T['static'] | null> {
  const { type, ...rest } = schema as unknown as { type: string; enum?: unknown[] } & Record<string, unknown>
  return Type.Unsafe<T['static'] | null>({
    ...rest,
    type: [type, 'null'],
    ...(rest.enum && { enum: [...rest.enum, null] }),
  })
}

/** Timestamps: ISO 8601, UTC, millisecond precision, suffix Z (e.g. 2026-03-01T09:30:00.000Z). */
export const Timestamp = (options: Record<string, unknown> = {}) =>
  Type.String({ format: 'date-time', examples: ['2026-03-01T09:30:00.000Z'], ...options })
