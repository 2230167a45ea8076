// Query strings: a "+" left unencoded reads as a space (HTML forms' convention, which URLSearchParams, axios and most
// clients follow for spaces), as Fastify's own parser has it; what the query said with its pluses as sent is kept
// beside, for the parameters whose format allows no space where a plus was (src/plugins/app/validation.ts).
import querystring from 'fast-querystring'

/** The parsed query with "+" read as a plus, on a query that held one. */
export const PLUSES_AS_SENT: unique symbol = Symbol('query with its pluses as sent')

/** On a query some part of which is no percent-encoded UTF-8 (`%E0%A4%A`, `a%ZZ`, Latin-1's `%F2`). */
export const UNDECODABLE: unique symbol = Symbol('a query that does not decode')

export type ParsedQuery = Record<string, unknown> & {
  [PLUSES_AS_SENT]?: Record<string, unknown>
  [UNDECODABLE]?: true
}

/** Whether every part of the query decodes: the parser keeps an undecodable part as sent, which no one meant. */
function decodes(query: string): boolean {
  try {
    for (const part of query.split(/[&=]/)) if (part.includes('%')) decodeURIComponent(part)
    return true
  } catch {
    return false
  }
}

export function parseQuery(query: string): ParsedQuery {
  if (query.length === 0) return {}
  const parsed: ParsedQuery = querystring.parse(query)
  if (query.includes('%') && !decodes(query)) Object.defineProperty(parsed, UNDECODABLE, { value: true })
  if (query.includes('+')) {
    Object.defineProperty(parsed, PLUSES_AS_SENT, { value: querystring.parse(query.replaceAll('+', '%2B')) })
  }
  return parsed
}
