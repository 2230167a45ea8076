// Positions in a tenant's event feed. An event's position is (xid, n): the id of the transaction that recorded it
// and its number within that transaction (src/events/sql.ts). Clients see one decimal number, xid · 10¹⁰ + n,
// opaque to them, ordered as the events are: a position written before positions had a transaction id (n alone,
// xid 0) still means the same place.

export interface Position {
  xid: bigint
  n: bigint
}

const SPAN = 10_000_000_000n

export const START: Position = { xid: 0n, n: 0n }

/** The largest transaction id a position holds (PostgreSQL's bigint): past it, no answer can have given one. */
export const LARGEST_XID = 2n ** 63n - 1n

export function encodePosition({ xid, n }: Position): string {
  return (xid * SPAN + n).toString()
}

/** The position a client sent back (validated by the POSITION pattern: decimal digits). */
export function decodePosition(text: string): Position {
  const value = BigInt(text)
  return { xid: value / SPAN, n: value % SPAN }
}

export function comparePositions(a: Position, b: Position): number {
  if (a.xid !== b.xid) return a.xid < b.xid ? -1 : 1
  return a.n === b.n ? 0 : a.n < b.n ? -1 : 1
}

/** A position from text columns, or null when the row has none. */
export function positionOf(xid: string | null, n: string | null): Position | null {
  return xid === null || n === null ? null : { xid: BigInt(xid), n: BigInt(n) }
}
