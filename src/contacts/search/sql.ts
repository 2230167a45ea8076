// The search's SQL: a page of the contacts that match a search, in its order, from a position, and their count.
// A search is one WHERE: the tenant, its groups of filters ORed (each group's filters ANDed), its words, and the
// position. Each filter is a condition on the contact's columns; those an index serves are written on the indexed
// columns (the migration contacts_search and docs/decisions/0008-search-indexes.md): `tags` with @> and &&, names,
// email words and phones through `search_words` (@@), instants as ranges, so that a selective filter reads its
// matches from an index and not the tenant's contacts one by one, and a frequent one is checked cheaply on the
// contacts read in order. Statements
// whose best plan depends on their values are planned with them each time (REPLANNED); the others are prepared.
import { isoUtcMicros } from '../../db/iso-time.js'
import { REPLANNED, statementName } from '../../db/statement-name.js'
import { customCondition } from '../custom-fields/search.js'
import { contact } from '../model.js'
import { selectListOf } from '../sql.js'
import { CONTACT_SEARCH_FIELDS, type Filter, type SearchField, type Sort } from './model.js'

/** A search as the statements take it: its groups (ORed; none: every contact), its words, what it includes. */
export interface SearchSpec {
  groups: readonly (readonly Filter[])[]
  query?: string
  includeArchived: boolean
  sort: Sort
}

/** Where a page starts: after this contact in the sort's order (its instants to the microsecond, as text). */
export interface Position {
  updated?: string
  created: string
}

/**
 * What a walk by -updatedAt remembers from its first page, to end with the contacts that changed while it went
 * on (they moved before it): the earliest instant a change committed since can carry (`bound`), the first page's
 * snapshot (`snapshot`, as pg_snapshot's text) and the node that answered it (`node`: a tenant whose shards moved
 * is on another, whose transaction ids are not comparable).
 */
export interface Walk {
  bound: string
  snapshot: string
  node: string
}

export interface Statement {
  name: string
  sql: string
  params: unknown[]
}

const FIELDS = new Map(CONTACT_SEARCH_FIELDS.map((field) => [field.name, field]))
/** Each field's column (aliased `c`) and, for an enumeration, its type. */
const STORED = new Map(contact.storage.answer.map(({ field, stored }) => [field, stored]))

/** The parameters of one statement: $1 is the tenant; each value added answers its placeholder. */
class Params {
  readonly values: unknown[] = []
  /** The placeholder of `value`, cast to `type`. */
  add(value: unknown, type: string): string {
    this.values.push(value)
    return `$${this.values.length + 1}::${type}`
  }
}

/** An instant as the answers show it, to the millisecond. */
const millis = (placeholder: string) => `date_trunc('milliseconds', ${placeholder})`
const nextMillis = (placeholder: string) => `(${millis(placeholder)} + interval '1 millisecond')`

/**
 * The condition of a filter on text compared word by word (names, and other text without an index): `eq` and `in`
 * on the text's words, `prefix` on their start; the words index first where it holds the field (names).
 */
function wordsCondition(column: string, op: string, value: unknown, params: Params, indexed: boolean): string {
  const text = `search_text(${column})`
  const many = Array.isArray(value)
  const given = many ? params.add(value, 'text[]') : params.add(value, 'text')
  const texts = many ? given : `ARRAY[${given}]`
  // The words index first, where it holds the field (names; the values have a word at least, by their schema).
  const candidates = (prefix: boolean) =>
    indexed ? `c.search_words @@ contact_words_match(${texts}, ${prefix}) AND ` : ''
  const each = `ARRAY(SELECT search_text(v) FROM unnest(${given}) v)`
  switch (op) {
    case 'eq':
      return `${candidates(false)}${text} = search_text(${given})`
    case 'neq':
      return `(${column} IS NULL OR ${text} <> search_text(${given}))`
    case 'in':
      return `${candidates(false)}${text} = ANY(${each})`
    case 'notIn':
      return `(${column} IS NULL OR ${text} <> ALL(${each}))`
    default:
      return `${candidates(true)}starts_with(${text}, search_text(${given}))`
  }
}

function emailCondition(op: string, value: unknown, params: Params): string {
  const lowered = (placeholder: string) => `ARRAY(SELECT lower(v) FROM unnest(${placeholder}) v)`
  switch (op) {
    case 'eq':
      return `c.email_key = lower(${params.add(value, 'text')})`
    case 'neq':
      return `c.email_key IS DISTINCT FROM lower(${params.add(value, 'text')})`
    case 'in':
      return `c.email_key = ANY(${lowered(params.add(value, 'text[]'))})`
    case 'notIn':
      return `(c.email_key IS NULL OR c.email_key <> ALL(${lowered(params.add(value, 'text[]'))}))`
    default: {
      const given = params.add(value, 'text')
      return `c.search_words @@ contact_words_match(ARRAY[${given}], true) AND starts_with(c.email_key, lower(${given}))`
    }
  }
}

function phoneCondition(op: string, value: unknown, params: Params): string {
  const many = Array.isArray(value)
  const given = many ? params.add(value, 'text[]') : params.add(value, 'text')
  const phones = many ? given : `ARRAY[${given}]`
  switch (op) {
    case 'neq':
      return `(c.phone IS NULL OR phone_digits(c.phone) <> phone_digits(${given}))`
    case 'notIn':
      return `(c.phone IS NULL OR phone_digits(c.phone) <> ALL(ARRAY(SELECT phone_digits(v) FROM unnest(${given}) v)))`
    default:
      return `c.search_words @@ contact_phone_match(${phones}, ${op === 'prefix'})`
  }
}

function enumCondition(column: string, type: string, op: string, value: unknown, params: Params): string {
  switch (op) {
    case 'eq':
      return `${column} = ${params.add(value, type)}`
    case 'neq':
      return `${column} <> ${params.add(value, type)}`
    case 'in':
      return `${column} = ANY(${params.add(value, `${type}[]`)})`
    default:
      return `${column} <> ALL(${params.add(value, `${type}[]`)})`
  }
}

/**
 * An instant of a filter, in UTC to the millisecond: PostgreSQL takes offsets up to ±15:59, RFC 3339 up to ±23:59,
 * and the comparison is to the millisecond anyway.
 */
const utc = (value: unknown) => new Date(value as string).toISOString()

/** Instants compared as the answers show them, to the millisecond: ranges on the column, which its index serves. */
function instantCondition(column: string, op: string, value: unknown, params: Params): string {
  if (op === 'between') {
    const [from, to] = (value as [string, string]).map(utc)
    return `${column} >= ${millis(params.add(from, 'timestamptz'))} AND ${column} < ${nextMillis(params.add(to, 'timestamptz'))}`
  }
  const at = params.add(utc(value), 'timestamptz')
  switch (op) {
    case 'eq':
      return `${column} >= ${millis(at)} AND ${column} < ${nextMillis(at)}`
    case 'neq':
      return `(${column} IS NULL OR ${column} < ${millis(at)} OR ${column} >= ${nextMillis(at)})`
    case 'lt':
      return `${column} < ${millis(at)}`
    case 'lte':
      return `${column} < ${nextMillis(at)}`
    case 'gt':
      return `${column} >= ${nextMillis(at)}`
    default:
      return `${column} >= ${millis(at)}`
  }
}

function tagsCondition(op: string, value: unknown, params: Params): string {
  const names = params.add(value, 'text[]')
  switch (op) {
    case 'hasAll':
      return `c.tags @> ${names}`
    case 'hasAny':
      return `c.tags && ${names}`
    default:
      return `NOT (c.tags && ${names})`
  }
}

/** The SQL condition of one filter, its values added to `params`. */
function condition(field: SearchField, filter: Filter, params: Params): string {
  const stored = STORED.get(field.name)
  if (!stored) throw new Error(`no column for ${field.name}`)
  const column = `c.${stored.column}`
  if (filter.op === 'exists') return field.kind === 'tags' ? 'cardinality(c.tags) > 0' : `${column} IS NOT NULL`
  if (filter.op === 'notExists') return field.kind === 'tags' ? 'cardinality(c.tags) = 0' : `${column} IS NULL`
  switch (field.kind) {
    case 'email':
      return emailCondition(filter.op, filter.value, params)
    case 'words':
      return wordsCondition(column, filter.op, filter.value, params, true)
    case 'label':
      return wordsCondition(column, filter.op, filter.value, params, false)
    case 'phone':
      return phoneCondition(filter.op, filter.value, params)
    case 'enum':
      return enumCondition(column, stored.cast.slice(2), filter.op, filter.value, params)
    case 'instant':
      return instantCondition(column, filter.op, filter.value, params)
    default:
      return tagsCondition(filter.op, filter.value, params)
  }
}

/** Whether a statement with this filter is best planned with its values (an index chosen by how many match). */
const valueDependent = (field: SearchField, filter: Filter) =>
  !(field.kind === 'enum' || filter.op === 'exists' || filter.op === 'notExists')

/** Archived contacts only where asked: includeArchived, or a group that names archivedAt. */
const leavesOutArchived = (spec: SearchSpec, filters: readonly Filter[]) =>
  !spec.includeArchived && !filters.some((filter) => filter.field === 'archivedAt')

/**
 * The WHERE of a search without its position, and whether its plan depends on its values. `wordsOnce`: the words
 * folded once per execution (a subquery), for a prepared statement: its generic plan would fold them again for
 * each contact it checks (16 µs each), where a plan made with the values folds them while planning.
 */
function searchWhere(spec: SearchSpec, params: Params, wordsOnce = false): { where: string; replanned: boolean } {
  let replanned = false
  const group = (filters: readonly Filter[]) => {
    const conditions = filters.map((filter) => {
      if (filter.definition) {
        replanned = true
        return customCondition(filter.definition, filter.op, filter.value, (value, type) => params.add(value, type))
      }
      const field = FIELDS.get(filter.field)
      if (!field) throw new Error(`no searchable field ${filter.field}`)
      if (valueDependent(field, filter)) replanned = true
      return condition(field, filter, params)
    })
    if (leavesOutArchived(spec, filters)) conditions.push('c.archived_at IS NULL')
    return conditions.length > 0 ? conditions.join(' AND ') : 'true'
  }
  const groups = spec.groups.length > 0 ? spec.groups.map(group) : [group([])]
  const conditions = [
    'c.tenant_id = $1',
    groups.length === 1 ? groups[0] : `(${groups.map((g) => `(${g})`).join(' OR ')})`,
  ]
  if (spec.query !== undefined) {
    replanned = true
    const match = `contact_words_match(ARRAY[${params.add(spec.query, 'text')}], true)`
    conditions.push(`c.search_words @@ ${wordsOnce ? `(SELECT ${match})` : match}`)
  }
  return { where: conditions.filter((c) => c !== 'true').join(' AND '), replanned }
}

/**
 * Page sizes written into the statements. A literal LIMIT lets PostgreSQL plan for the rows it will read (with
 * `LIMIT $n` a generic plan assumes a tenth of the table); a page is read at the smallest size that holds it, and
 * the few sizes keep the number of prepared statements small.
 */
const PAGE_SIZES = [1, 2, 5, 10, 20, 25, 50, 100, 150, 200] as const

/** The rows a page of `limit` reads: the page and one more, which tells whether another page follows. */
export const rowsFor = (limit: number) => (PAGE_SIZES.find((size) => size >= limit) ?? limit) + 1

const selectContact = selectListOf(contact.storage)
/**
 * A contact with the instants its position is made of, to the microsecond: formatted for the rows a page keeps
 * alone, outside the subquery that chooses them (a plan that sorts the matches would otherwise format them all).
 */
const PAGE_COLUMNS = `${selectContact('c')}, ${isoUtcMicros('c.created_at')} AS "positionCreated",
    ${isoUtcMicros('c.updated_at')} AS "positionUpdated"`

/** Which node answers, as a hash of its system identifier (the cursor need not tell it). */
const NODE = 'left(md5((SELECT system_identifier FROM pg_control_system())::text), 16)'

/**
 * The transaction id (64 bits, as pg_snapshot's) that wrote the row's current version: its 32-bit xmin put in the
 * epoch of the snapshot's xmax, which no live row's xmin is more than 2^31 before.
 */
const ROW_XID = `(pg_snapshot_xmax(pg_current_snapshot())::text::bigint
      - ((pg_snapshot_xmax(pg_current_snapshot())::text::bigint - c.xmin::text::bigint) % 4294967296 + 4294967296) % 4294967296)::text::xid8`

/**
 * What a walk by -updatedAt notes on its first page: the earliest a change committed after this statement can
 * carry as updatedAt (the start of the oldest transaction open on the node, or now; less a minute, for the clocks
 * of a distributed PostgreSQL, whose coordinator gives now()), the snapshot, and the node.
 */
const WALK_COLUMNS = `${isoUtcMicros(`(LEAST(statement_timestamp(), (SELECT min(a.xact_start) FROM pg_stat_get_activity(NULL) a
      WHERE a.datid = (SELECT m.datid FROM pg_stat_get_activity(pg_backend_pid()) m))) - interval '1 minute')`)} AS "walkBound",
    pg_current_snapshot()::text AS "walkSnapshot",
    ${NODE} AS "walkNode"`

/** Statements by their text: one name each. */
const names = new Map<string, string>()
function named(sql: string, params: Params, replanned: boolean): Statement {
  if (replanned) return { name: REPLANNED, sql, params: params.values }
  let name = names.get(sql)
  if (name === undefined) {
    name = statementName('contacts_search', sql)
    names.set(sql, name)
  }
  return { name, sql, params: params.values }
}

const ORDER: Record<Sort, { by: string; after: (p: Params, at: Position) => string }> = {
  '-createdAt': { by: 'c.created_at DESC', after: (p, at) => `c.created_at < ${p.add(at.created, 'timestamptz')}` },
  createdAt: { by: 'c.created_at', after: (p, at) => `c.created_at > ${p.add(at.created, 'timestamptz')}` },
  '-updatedAt': {
    by: 'c.updated_at DESC, c.created_at DESC',
    after: (p, at) =>
      `(c.updated_at, c.created_at) < (${p.add(at.updated, 'timestamptz')}, ${p.add(at.created, 'timestamptz')})`,
  },
  updatedAt: {
    by: 'c.updated_at, c.created_at',
    after: (p, at) =>
      `(c.updated_at, c.created_at) > (${p.add(at.updated, 'timestamptz')}, ${p.add(at.created, 'timestamptz')})`,
  },
}

/**
 * A page of `rows` contacts of the search in its order, after `after` (none: from the start). `walkStart`: the
 * first page of a walk by -updatedAt, which also answers the walk's columns.
 */
export function pageStatement(spec: SearchSpec, rows: number, after?: Position, walkStart = false): Statement {
  const params = new Params()
  const { where, replanned } = searchWhere(spec, params)
  const order = ORDER[spec.sort]
  const position = after ? ` AND ${order.after(params, after)}` : ''
  const walk = walkStart ? `, ${WALK_COLUMNS}` : ''
  const sql = `SELECT ${PAGE_COLUMNS}${walk}
    FROM (SELECT * FROM contacts c WHERE ${where}${position} ORDER BY ${order.by} LIMIT ${rows}) c
    ORDER BY ${order.by}`
  return named(sql, params, replanned)
}

/**
 * Whether a page may be read through contact_words first (wordsPageStatement): a search of one word alone (no
 * filter to narrow it otherwise), of three letters or digits or more, in createdAt's order (the order contact_words
 * keeps). The statement checks the word as search folds it (a modifier letter apostrophe, ʼ, is a letter here and an
 * apostrophe there, dropped at a word's ends): one word of three characters or more, or it reads nothing and the
 * page is read as PostgreSQL plans it. Other searches with words are planned by PostgreSQL among the contacts' own
 * indexes (several words: the GIN index of search_words).
 */
export const ledByWords = (spec: SearchSpec) =>
  spec.query !== undefined &&
  spec.groups.every((group) => group.length === 0) &&
  (spec.sort === '-createdAt' || spec.sort === 'createdAt') &&
  /^[\p{L}\p{N}]{3,}$/u.test(spec.query.trim())

/**
 * The words of contact_words under the word's first three characters that a page reads at most: past them, a word
 * whose start is rare among those words (`examplez`, beside every contact's `example`) is better found through the
 * GIN index of search_words, which holds its few matches.
 */
export const WORDS_SCANNED = 2000

/** The word a search of one word is led by (`lead`), and the position of a page of it, shared by its statements. */
function wordsLead(spec: SearchSpec, params: Params, after?: Position) {
  const word = params.add(spec.query, 'text')
  const newestFirst = spec.sort === '-createdAt'
  const position = after
    ? ` AND w.created_at ${newestFirst ? '<' : '>'} ${params.add(after.created, 'timestamptz')}`
    : ''
  return {
    lead: `WITH lead AS MATERIALIZED (SELECT w AS word FROM search_text(${word}) w WHERE length(w) >= 3 AND strpos(w, ' ') = 0)`,
    /** The words under the word's first three characters, after the position. */
    under: `w.tenant_id = $1 AND w.prefix = word_prefix((SELECT word FROM lead))${position}`,
    direction: newestFirst ? 'DESC' : 'ASC',
  }
}

/**
 * A page of a search of one word, in createdAt's order, through contact_words: of the WORDS_SCANNED words next in
 * order under the word's first three characters, the contacts of those that start with the word, once each however
 * many such words they have, each then checked against the whole search on its own row, until the page is full. A
 * page it leaves short is the last, unless wordsReadAgainStatement says otherwise. Its plan does not depend on the
 * word: it is prepared.
 */
export function wordsPageStatement(spec: SearchSpec, rows: number, after?: Position): Statement {
  const params = new Params()
  const { where } = searchWhere(spec, params, true)
  const { lead, under, direction } = wordsLead(spec, params, after)
  const sql = `${lead}
    SELECT ${PAGE_COLUMNS}
    FROM (SELECT DISTINCT w.created_at
        FROM (SELECT w.created_at, w.word FROM contact_words w
          WHERE ${under}
          ORDER BY w.created_at ${direction} LIMIT ${WORDS_SCANNED}) w
        WHERE starts_with(w.word, (SELECT word FROM lead))
        ORDER BY w.created_at ${direction}) w
      CROSS JOIN LATERAL (SELECT * FROM contacts c WHERE c.created_at = w.created_at AND ${where} LIMIT 1) c
    ORDER BY w.created_at ${direction} LIMIT ${rows}`
  return named(sql, params, false)
}

/**
 * Whether a page that wordsPageStatement left short is to be read again as PostgreSQL plans it (pageStatement):
 * when it stopped at WORDS_SCANNED words under the word's first three characters (the word is rare among them:
 * `examplez`, beside every contact's `example`), or read none (folded, the search is not one word of three
 * characters or more). Otherwise it read every word there, and the page is the search's last. Index-only, at most
 * WORDS_SCANNED entries; prepared.
 */
export function wordsReadAgainStatement(spec: SearchSpec, after?: Position): Statement {
  const params = new Params()
  const { lead, under } = wordsLead(spec, params, after)
  const sql = `${lead}
    SELECT (SELECT word FROM lead) IS NULL
      OR (SELECT count(*) FROM (SELECT 1 FROM contact_words w WHERE ${under} LIMIT ${WORDS_SCANNED}) w) = ${WORDS_SCANNED}
      AS "readAgain"`
  return named(sql, params, false)
}

/** The tags and the stage a search of one group is led by (tagsPageStatement), when it has both. */
function tagsAndStage(spec: SearchSpec): { tags: string[]; stage: string } | undefined {
  if (spec.groups.length !== 1 || spec.query !== undefined) return undefined
  if (spec.sort !== '-createdAt' && spec.sort !== 'createdAt') return undefined
  const group = spec.groups[0] ?? []
  const tags = group.find((filter) => filter.field === 'tags' && filter.op === 'hasAll')
  const stage = group.find((filter) => filter.field === 'stage' && filter.op === 'eq')
  return tags && stage ? { tags: tags.value as string[], stage: stage.value as string } : undefined
}

/** Whether a page may be read through the stage's index first (tagsPageStatement). */
export const ledByTags = (spec: SearchSpec) => tagsAndStage(spec) !== undefined

/**
 * The candidates a page of tagsPageStatement checks on their rows at most (entries of the stage's index whose
 * signature holds the tags'; the entries without are skipped in the index, however many): past them, a search
 * whose other filters (or a signature shared by other tags) leave few matches among them is better planned by
 * PostgreSQL.
 */
export const SIGNATURES_SCANNED = 2000

/**
 * A page of a search of one group with `tags hasAll` and `stage eq`, in createdAt's order, through the stage's
 * index (contacts_stage_signature_idx): its contacts of the stage, in order, in the index alone, those whose tags'
 * signature holds every bit of the tags asked, at most SIGNATURES_SCANNED of them; then each contact by its
 * createdAt, checked against the whole search on its own row, until the page is full. The tags asked make one
 * signature, computed once per execution (a subquery). A page it leaves short is read again as PostgreSQL plans
 * it. Prepared: its plan does not depend on the tags.
 */
export function tagsPageStatement(spec: SearchSpec, rows: number, after?: Position): Statement {
  const led = tagsAndStage(spec)
  if (!led) throw new Error('tagsPageStatement: a search of tags and a stage')
  const params = new Params()
  const { where } = searchWhere(spec, params)
  const newestFirst = spec.sort === '-createdAt'
  const direction = newestFirst ? 'DESC' : 'ASC'
  const stage = params.add(led.stage, STORED.get('stage')?.cast.slice(2) ?? 'text')
  const signature = `(SELECT tags_signature(${params.add(led.tags, 'text[]')}))`
  const archived = leavesOutArchived(spec, spec.groups[0] ?? []) ? ' AND s.archived_at IS NULL' : ''
  const position = after
    ? ` AND s.created_at ${newestFirst ? '<' : '>'} ${params.add(after.created, 'timestamptz')}`
    : ''
  const sql = `SELECT ${PAGE_COLUMNS}
    FROM (SELECT s.created_at FROM contacts s
        WHERE s.tenant_id = $1 AND s.stage = ${stage} AND s.tags_signature & ${signature} = ${signature}${archived}${position}
        ORDER BY s.created_at ${direction} LIMIT ${SIGNATURES_SCANNED}) s
      CROSS JOIN LATERAL (SELECT * FROM contacts c WHERE c.created_at = s.created_at AND ${where} LIMIT 1) c
    ORDER BY s.created_at ${direction} LIMIT ${rows}`
  return named(sql, params, false)
}

/**
 * The end of a walk by -updatedAt: the contacts of the search that changed since its first page (their row written
 * by a transaction that its snapshot did not see, on the node that answered it; on another node, every contact
 * changed since the walk's bound), oldest change first, after `after` (none: from the start).
 */
export function changedStatement(spec: SearchSpec, rows: number, walk: Walk, after?: Position): Statement {
  const params = new Params()
  const { where } = searchWhere(spec, params)
  const bound = params.add(walk.bound, 'timestamptz')
  const snapshot = params.add(walk.snapshot, 'pg_snapshot')
  const node = params.add(walk.node, 'text')
  const position = after ? ` AND ${ORDER.updatedAt.after(params, after)}` : ''
  const sql = `SELECT ${PAGE_COLUMNS}
    FROM (SELECT * FROM contacts c WHERE ${where} AND c.updated_at >= ${bound}
      AND CASE WHEN ${NODE} = ${node} THEN NOT pg_visible_in_snapshot(${ROW_XID}, ${snapshot}) ELSE true END${position}
      ORDER BY ${ORDER.updatedAt.by} LIMIT ${rows}) c
    ORDER BY ${ORDER.updatedAt.by}`
  return named(sql, params, true)
}

/** How many contacts the search finds. */
export function countStatement(spec: SearchSpec): Statement {
  const params = new Params()
  const { where } = searchWhere(spec, params)
  return named(`SELECT count(*)::int AS total FROM contacts c WHERE ${where}`, params, true)
}
