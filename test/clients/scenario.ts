// What each generated client must do against a real server, written once: the programs adapt their client to
// these steps. A failed step throws, and the program exits non-zero.
export interface Outcome<Body> {
  status: number
  body: Body
}

export function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`failed: ${what}`)
}

/** A unique email for this run and client, so that several clients can run against one server. */
export const email = (client: string, what: string) => `${client}.${what}.${Date.now()}@example.it`

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
