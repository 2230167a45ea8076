// A search's `next`: where the next page starts, opaque to clients (base64url of a small JSON object), so that what
// it holds can change without changing the API. It names its sort: a cursor of another sort is refused.
import { errors } from '../../errors/catalogue.js'
import type { Sort } from './model.js'
import type { Position, Walk } from './sql.js'

/**
 * Where a walk is: after `at` in the sort's order (none: at the start). A walk by -updatedAt carries its `walk`
 * from its first page, and `changed` once it has passed every contact and goes on with those changed meanwhile.
 */
export interface Cursor {
  sort: Sort
  at?: Position
  walk?: Walk
  changed?: boolean
}

/** An instant as positions carry it: ISO 8601 in UTC, to the microsecond or less. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/
/** pg_snapshot's text: xmin:xmax:the ids running between them, comma-separated. */
const SNAPSHOT = /^\d{1,20}:\d{1,20}:(\d{1,20}(,\d{1,20})*)?$/
const NODE = /^[0-9a-f]{16}$/

/** A real instant of years 1 to 9999 (the pattern alone lets 2026-02-30 or month 13 through). */
function isInstant(text: string): boolean {
  const date = new Date(text)
  const year = date.getUTCFullYear()
  return (
    !Number.isNaN(date.getTime()) && year >= 1 && year <= 9999 && date.toISOString().slice(0, 19) === text.slice(0, 19)
  )
}

/**
 * The longest snapshot a cursor carries (about 30 transactions running at once). A longer one is replaced by
 * walkSnapshot() with one that sees nothing from its oldest running transaction on: the walk's end may then show
 * again some contacts changed shortly before it began, as docs/api-search.md says, but the cursor stays short.
 */
export const SNAPSHOT_LENGTH = 360

/** The snapshot a walk's cursor carries for the first page's `snapshot`. */
export function walkSnapshot(snapshot: string): string {
  if (snapshot.length <= SNAPSHOT_LENGTH) return snapshot
  const xmin = snapshot.slice(0, snapshot.indexOf(':'))
  return `${xmin}:${xmin}:`
}

export function encodeCursor(cursor: Cursor): string {
  const { sort, at, walk, changed } = cursor
  return Buffer.from(
    JSON.stringify({
      s: sort,
      ...(at && { c: at.created, ...(at.updated !== undefined && { u: at.updated }) }),
      ...(walk && { w: [walk.bound, walk.snapshot, walk.node] }),
      ...(changed && { ch: 1 }),
    }),
  ).toString('base64url')
}

const invalid = () =>
  errors.invalidInput(
    'invalid_body',
    'Il campo "cursor" non è valido: va ripetuto come l’ha dato "next" di una risposta, con lo stesso "sort".',
  )

/** The cursor `text` encodes, for a search sorted by `sort`; 400 invalid_body when no answer of it can have given it. */
export function decodeCursor(text: string, sort: Sort): Cursor {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
  } catch {
    throw invalid()
  }
  const { s, c, u, w, ch } = (value ?? {}) as Record<string, unknown>
  if (s !== sort) throw invalid()
  const byUpdated = sort === '-updatedAt' || sort === 'updatedAt'
  const instant = (x: unknown) => typeof x === 'string' && INSTANT.test(x) && isInstant(x)
  let at: Position | undefined
  if (c !== undefined || u !== undefined) {
    if (!instant(c) || (byUpdated ? !instant(u) : u !== undefined)) throw invalid()
    at = { created: c as string, ...(byUpdated && { updated: u as string }) }
  }
  let walk: Walk | undefined
  if (w !== undefined) {
    const [bound, snapshot, node] = Array.isArray(w) ? w : []
    if (
      sort !== '-updatedAt' ||
      !instant(bound) ||
      typeof snapshot !== 'string' ||
      snapshot.length > SNAPSHOT_LENGTH ||
      !SNAPSHOT.test(snapshot) ||
      !NODE.test(String(node))
    ) {
      throw invalid()
    }
    walk = { bound: bound as string, snapshot, node: String(node) }
  }
  if (ch !== undefined && (ch !== 1 || walk === undefined)) throw invalid()
  // A walk by -updatedAt always carries its walk; every other cursor has a position.
  if (sort === '-updatedAt' ? walk === undefined || (at === undefined && ch === undefined) : at === undefined) {
    throw invalid()
  }
  return { sort, ...(at && { at }), ...(walk && { walk }), ...(ch === 1 && { changed: true }) }
}
