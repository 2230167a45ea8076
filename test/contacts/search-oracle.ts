// What a search should find, computed in JavaScript from the contacts as a test wrote and read them, by the rules
// docs/api-search.md states: a second reading of those rules, independent of the SQL that implements them. Not a
// test file (no `.test.` in the name).

export interface Contact {
  id: string
  email: string | null
  firstName: string | null
  lastName: string | null
  phone: string | null
  emailStatus: string
  stage: string
  source: string
  consentType: string
  tags: string[]
  archivedAt: string | null
  acquiredAt: string
  createdAt: string
  updatedAt: string
}

export interface Filter {
  field: string
  op: string
  value?: unknown
}

export interface Search {
  filterGroups?: { filters: Filter[] }[]
  query?: string
  includeArchived?: boolean
}

/** Text as search compares it: lower case, typographic apostrophes as ', accents off, letters with inner marks plain. */
function fold(text: string): string {
  const plain: Record<string, string> = {
    ł: 'l',
    ø: 'o',
    đ: 'd',
    ı: 'i',
    ħ: 'h',
    ŧ: 't',
    ŀ: 'l',
    ς: 'σ',
    ß: 'ss',
    æ: 'ae',
    œ: 'oe',
  }
  return text
    .toLowerCase()
    .replace(/[\u2019\u2018\u02bc`\u00b4]/g, "'")
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[łøđıħŧŀςßæœ]/g, (letter) => plain[letter] ?? letter)
}

const SEPARATORS =
  /[\s\u00a0\u2000-\u200a\u202f\u205f\u3000.,;:!?@+_\-/\\()[\]{}<>"#$%&*=|~^\u2010-\u2015\u00b7\u00ab\u00bb\u201c-\u201f\u2022\u2026\u2039\u203a\u00bf\u00a1\u3001\u3002\uff0c]+/u

/** A text's words: split at white space and punctuation other than the apostrophe, which a word keeps inside. */
export function words(text: string): string[] {
  return fold(text)
    .split(SEPARATORS)
    .map((word) => word.replace(/^'+|'+$/g, ''))
    .filter((word) => word !== '')
}

const joined = (text: string) => words(text).join(' ')
const digits = (text: string) => text.replace(/[^0-9]/g, '')

/** The words a query word may start: a contact's words, and of one with an apostrophe, what follows it and it whole without. */
function searchableWords(contact: Contact): string[] {
  return words([contact.firstName, contact.lastName, contact.email].filter((x) => x !== null).join(' ')).flatMap(
    (word) => (word.includes("'") ? [word, word.replaceAll("'", ''), word.slice(word.indexOf("'") + 1)] : [word]),
  )
}

function matchesQuery(contact: Contact, query: string): boolean {
  const own = searchableWords(contact)
  return words(query).every((word) => own.some((candidate) => candidate.startsWith(word)))
}

/** An instant to the millisecond, as answers show it (the answers' own strings are ISO with milliseconds). */
const ms = (instant: string) => Math.floor(new Date(instant).getTime())

function compare(
  value: string | null,
  op: string,
  given: unknown,
  equal: (a: string, b: string) => boolean,
  starts: (a: string, b: string) => boolean,
): boolean {
  const list = given as string[]
  switch (op) {
    case 'exists':
      return value !== null
    case 'notExists':
      return value === null
    case 'eq':
      return value !== null && equal(value, given as string)
    case 'neq':
      return value === null || !equal(value, given as string)
    case 'in':
      return value !== null && list.some((v) => equal(value, v))
    case 'notIn':
      return value === null || !list.some((v) => equal(value, v))
    case 'prefix':
      return value !== null && starts(value, given as string)
  }
  throw new Error(`no operator ${op}`)
}

function matchesFilter(contact: Contact, filter: Filter): boolean {
  const { field, op, value } = filter
  const own = (contact as unknown as Record<string, unknown>)[field]
  switch (field) {
    case 'email':
      return compare(
        own as string | null,
        op,
        value,
        (a, b) => a.toLowerCase() === b.toLowerCase(),
        (a, b) => a.toLowerCase().startsWith(b.toLowerCase()),
      )
    case 'phone':
      return compare(
        own as string | null,
        op,
        value,
        (a, b) => digits(a) === digits(b),
        (a, b) => digits(a).startsWith(digits(b)),
      )
    case 'firstName':
    case 'lastName':
    case 'source':
    case 'consentType':
      return compare(
        own as string | null,
        op,
        value,
        (a, b) => joined(a) === joined(b),
        (a, b) => joined(a).startsWith(joined(b)),
      )
    case 'emailStatus':
    case 'stage':
      return compare(
        own as string,
        op,
        value,
        (a, b) => a === b,
        () => false,
      )
    case 'tags': {
      const tags = own as string[]
      const names = value as string[]
      if (op === 'exists') return tags.length > 0
      if (op === 'notExists') return tags.length === 0
      if (op === 'hasAll') return names.every((name) => tags.includes(name))
      if (op === 'hasAny') return names.some((name) => tags.includes(name))
      return !names.some((name) => tags.includes(name))
    }
    default: {
      const instant = own as string | null
      if (op === 'exists') return instant !== null
      if (op === 'notExists') return instant === null
      if (op === 'neq') return instant === null || ms(instant) !== ms(value as string)
      if (instant === null) return false
      const at = ms(instant)
      switch (op) {
        case 'eq':
          return at === ms(value as string)
        case 'lt':
          return at < ms(value as string)
        case 'lte':
          return at <= ms(value as string)
        case 'gt':
          return at > ms(value as string)
        case 'gte':
          return at >= ms(value as string)
        default: {
          const [from, to] = value as [string, string]
          return at >= ms(from) && at <= ms(to)
        }
      }
    }
  }
}

/** Whether the search finds the contact. */
export function finds(search: Search, contact: Contact): boolean {
  if (search.query !== undefined && !matchesQuery(contact, search.query)) return false
  const groups = search.filterGroups?.length ? search.filterGroups : [{ filters: [] }]
  return groups.some(
    ({ filters }) =>
      (search.includeArchived || contact.archivedAt === null || filters.some((f) => f.field === 'archivedAt')) &&
      filters.every((filter) => matchesFilter(contact, filter)),
  )
}
