import { type TSchema, type TUnsafe, Type } from '@sinclair/typebox'

/**
 * No control characters (C0, DEL, C1: PostgreSQL refuses NUL, and none belongs in a name), no lone surrogate
 * halves (UTF-8 cannot store them) and no U+FEFF (some stores drop it). Ajv matches patterns in Unicode mode,
 * where a surrogate range matches only unpaired halves.
 */
export const PRINTABLE = '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF\\uFEFF]*$'

/** A plain UUID, any case. ajv-formats' uuid also accepts a "urn:uuid:" prefix, which PostgreSQL's uuid type does not. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** `type: [T, "null"]`, the OpenAPI 3.1 way to say "or null", which fast-json-stringify also serialises directly. */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<T['static'] | null> {
  const { type, ...rest } = schema as unknown as { type: string } & Record<string, unknown>
  return Type.Unsafe<T['static'] | null>({ ...rest, type: [type, 'null'] })
}

/** Timestamps: ISO 8601, UTC, millisecond precision, suffix Z (e.g. 2026-03-01T09:30:00.000Z). */
export const Timestamp = (options: Record<string, unknown> = {}) =>
  Type.String({ format: 'date-time', examples: ['2026-03-01T09:30:00.000Z'], ...options })
