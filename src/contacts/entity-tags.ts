// ETags of contacts and the conditional headers that use them (RFC 9110, 8.8.3 and 13.1). A contact's ETag is
// strong and made from its row's version, which moves on every change: `"v<version>"`.
import type { Expected } from './repository.js'

export const etagOf = (version: number) => `"v${version}"`

const MAX_VERSION = 2_147_483_647

interface EntityTag {
  weak: boolean
  version: number | null
}

/** `*`, or the listed entity tags (those that are not a contact's read as matching no version). */
function parse(header: string): '*' | EntityTag[] {
  if (header.trim() === '*') return '*'
  return header.split(',').map((item) => {
    // Tags compare as opaque strings (RFC 9110, 8.8.3.2): "v021" is not "v21", so a version is read only in the
    // one spelling etagOf writes, without leading zeros.
    const match = /^\s*(W\/)?"v(0|[1-9]\d{0,9})"\s*$/.exec(item)
    const version = match ? Number(match[2]) : null
    // A version is an int4 column: a larger one can name no contact.
    return { weak: match?.[1] !== undefined, version: version !== null && version <= MAX_VERSION ? version : null }
  })
}

/**
 * The versions an If-Match accepts: `*` any existing contact, otherwise the strong tags listed (a weak tag never
 * matches in If-Match). No header: any.
 */
export function versionsOf(ifMatch: string | undefined): Expected {
  if (ifMatch === undefined) return '*'
  const tags = parse(ifMatch)
  if (tags === '*') return '*'
  return tags.flatMap((tag) => (!tag.weak && tag.version !== null ? [tag.version] : []))
}

/** Whether If-None-Match names the current version (weak comparison) or `*`: the client's copy is current. */
export function isCurrent(ifNoneMatch: string | undefined, version: number): boolean {
  if (ifNoneMatch === undefined) return false
  const tags = parse(ifNoneMatch)
  return tags === '*' || tags.some((tag) => tag.version === version)
}
