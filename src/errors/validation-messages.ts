// The Italian sentence a validation error becomes in the envelope's message: what the field or parameter is and
// what was wrong with it. Ajv's own keywords are named by hand where the wording matters; the rest are localized.
import type { ErrorObject } from 'ajv'
import localizeItModule from 'ajv-i18n/localize/it/index.js'
import { EMAIL_REQUIREMENT, PATTERN_DESCRIPTIONS } from '../schemas/common.js'

// ajv-i18n is CommonJS (module.exports = localize) but declares an ES default export.
const localizeIt = localizeItModule as unknown as (errors: ErrorObject[]) => void

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

/** The keyword of a validation error whose params hold the whole sentence (`sentence`). */
export const SENTENCE = 'sentence'

/** "/tags/0" becomes "tags[0]"; the root is the empty string. */
export function fieldName(path: string): string {
  return path
    .split('/')
    .slice(1)
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('')
}

/** What was wrong with a value, in Italian: the end of a sentence that names it ("deve essere un testo"). */
export function problem(error: ErrorObject): string {
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
        ? 'deve essere una data e ora ISO 8601 con fuso orario, dall’anno 1 al 9999 in UTC (es. 2026-03-01T09:30:00.000Z)'
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
  // A validator that understood the mistake better than Ajv's keywords say wrote the sentence itself.
  if (error?.keyword === SENTENCE) return String((error.params as { sentence: unknown }).sentence)
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
