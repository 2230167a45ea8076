/**
 * Whether a request carries header `name` (lower case) more than once: Node keeps the first Authorization and
 * joins other repeats with ", ", so ambiguous credentials or keys are seen only in rawHeaders (names and values
 * alternating).
 */
export function isRepeated(rawHeaders: readonly string[], name: string): boolean {
  let seen = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === name && ++seen > 1) return true
  }
  return false
}
