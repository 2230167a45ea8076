// The search body's validator: Ajv checks it against the document's schema (SearchRequest), and when a filter is
// wrong, the answer names that filter (`filterGroups[1].filters[0]`) and says what is wrong with it in the
// search's own terms (a field that does not exist, an operator its type lacks, a value of another type), which a
// union of every field's filters cannot say through Ajv's keywords. Also the one limit JSON Schema cannot state:
// the filters of all the groups together.
import type { ErrorObject } from 'ajv'
import { fieldName, problem, SENTENCE } from '../../errors/validation-messages.js'
import type { CompileValidator, Validator } from '../../plugins/app/validation.js'
import { ALL_CUSTOM_OPERATORS, CUSTOM_FIELD_PREFIX } from '../custom-fields/search.js'
import { operatorsOf, SEARCH_LIMITS, type SearchField, valueSchemaOf } from './model.js'

const FILTER_PATH = /^\/filterGroups\/(\d+)\/filters\/(\d+)/
const FILTER_KEYS = ['field', 'op', 'value']

const sentence = (instancePath: string, text: string): ErrorObject => ({
  keyword: SENTENCE,
  instancePath,
  schemaPath: '#',
  params: { sentence: text },
})

const list = (names: readonly string[]) => names.join(', ')

/** What is wrong with a filter, in the search's terms: the fields searched, and a validator for each value. */
function filterProblems(compile: CompileValidator, fields: readonly SearchField[]) {
  const byName = new Map(fields.map((field) => [field.name, field]))
  const names = list([...byName.keys()])
  const values = new Map<string, Validator>()
  const valueValidator = (field: SearchField, op: string, schema: object) => {
    const key = `${field.name}\u0000${op}`
    let validator = values.get(key)
    if (!validator) {
      validator = compile({ schema, httpPart: 'body' })
      values.set(key, validator)
    }
    return validator
  }
  /** What is wrong with `filter`, as the end of a sentence; null when nothing is. */
  return (filter: unknown): string | null => {
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
      return 'deve essere un oggetto con "field", "op" e, salvo exists e notExists, "value"'
    }
    const given = filter as Record<string, unknown>
    const extra = Object.keys(given).find((key) => !FILTER_KEYS.includes(key))
    if (extra !== undefined) return `la proprietà "${extra}" non è ammessa (un filtro ha "field", "op" e "value")`
    if (typeof given.field !== 'string') return `manca "field", il campo da confrontare (uno tra: ${names})`
    if (given.field.startsWith(CUSTOM_FIELD_PREFIX)) {
      return (
        `"${given.field}" non è il nome di un campo proprio, o "op" non è tra: ${list(ALL_CUSTOM_OPERATORS)}, o ` +
        '"value" non è un testo, un numero, un booleano o una lista di questi'
      )
    }
    const field = byName.get(given.field)
    if (!field) return `il campo "${given.field}" non esiste; si può cercare per: ${names}`
    const ops = operatorsOf(field.kind)
    if (typeof given.op !== 'string' || !ops.includes(given.op)) {
      const what = typeof given.op === 'string' ? `l’operatore "${given.op}" non si applica a` : 'manca "op" per'
      return `${what} "${field.name}"; i suoi operatori sono: ${list(ops)}`
    }
    const schemaOfValue = valueSchemaOf(field, given.op)
    if (schemaOfValue === undefined) return 'value' in given ? `con "${given.op}" non va indicato "value"` : null
    if (!('value' in given)) return `manca "value", il valore con cui "${given.op}" confronta "${field.name}"`
    const validate = valueValidator(field, given.op, schemaOfValue)
    if (validate(given.value)) return null
    const [error] = validate.errors ?? []
    if (!error) return '"value" non è valido'
    return `"value${fieldName(`/x${error.instancePath}`).slice(1)}" non è valido: ${problem(error)}`
  }
}

/**
 * A validator of search bodies over `fields` (the Contact's), against `schema` (SearchRequest): compiled with
 * `compile`, as every route of the service validates.
 */
export function searchBodyValidator(
  compile: CompileValidator,
  schema: object,
  fields: readonly SearchField[],
): Validator {
  const whole = compile({ schema, httpPart: 'body' })
  const wrongWith = filterProblems(compile, fields)
  const validator: Validator = (body) => {
    if (whole(body)) {
      const groups = (body as { filterGroups?: { filters: unknown[] }[] }).filterGroups ?? []
      const filters = groups.reduce((sum, group) => sum + group.filters.length, 0)
      if (filters <= SEARCH_LIMITS.filters) return true
      const text = `Il campo "filterGroups" non è valido: i gruppi hanno ${filters} filtri in tutto, al massimo ${SEARCH_LIMITS.filters}.`
      validator.errors = [sentence('/filterGroups', text)]
      return false
    }
    const errors = whole.errors ?? []
    const at = errors.map((error) => FILTER_PATH.exec(error.instancePath)).find((match) => match !== null)
    if (at) {
      const [path, group, index] = at
      const groups = (body as { filterGroups: { filters: unknown[] }[] }).filterGroups
      const wrong = wrongWith(groups[Number(group)]?.filters[Number(index)])
      if (wrong !== null) {
        validator.errors = [sentence(path, `Il filtro "${fieldName(path)}" non è valido: ${wrong}.`)]
        return false
      }
    }
    validator.errors = errors
    return false
  }
  return validator
}
