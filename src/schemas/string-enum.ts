import { type TUnsafe, Type } from '@sinclair/typebox'

/**
 * A string enumeration as a plain JSON Schema `enum`: validation then says "must be one of the allowed values"
 * (a union of literals reports every branch), and OpenAPI shows a proper enum.
 */
export function StringEnum<const Values extends readonly string[]>(
  values: Values,
  options: Record<string, unknown> = {},
): TUnsafe<Values[number]> {
  return Type.Unsafe<Values[number]>({ type: 'string', enum: [...values], ...options })
}
