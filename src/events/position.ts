// Positions in a tenant's event feed. An event's position is (seq, n): the number its transaction took in the
// tenant's feed and its number within that transaction (src/events/sql.ts). Clients see one decimal number,
// seq · 10¹⁰ + n, opaque to them, ordered as the events are. Positions written before transactions were numbered
// ((xid, n), the transaction's id) still mean the same place: those transactions kept their ids as numbers.

export interface Position {
  seq: bigint
  n: bigint
}

const SPAN = 10_000_000_000n

export const START: Position = { seq: 0n, n: 0n }

/** The largest number a position holds (PostgreSQL's bigint): past it, no answer can have given one. */
export const LARGEST_SEQ = 2n ** 63n - 1n

export function encodePosition({ seq, n }: Position): string {
  return (seq * SPAN + n).toString()
}

/** The position a client sent back (validated by the POSITION pattern: decimal digits). */
export function decodePosition(text: string): Position {
  const value = BigInt(text)
  return { seq: value / SPAN, n: value % SPAN }
}

export function comparePositions(a: Position, b: Position): number {
  if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1
  return a.n === b.n ? 0 : a.n < b.n ? -1 : 1
}

/** A position from text columns, or null when the row has none. */
export function positionOf(seq: string | null, n: string | null): Position | null {
  return seq === null || n === null ? null : { seq: BigInt(seq), n: BigInt(n) }
}
