// How deep a JSON text nests and how many objects and arrays it holds, read from its bytes before it is parsed.
// JSON.parse spends its time and memory on containers: 20 MB of `[` took it 10 s and a gigabyte, and a few MB
// of `{},` hundreds of milliseconds, the whole process waiting meanwhile. No body of this API needs more than a
// few levels (a batch: object, list, item, tags) nor more than two containers per batch item, so what goes
// beyond the limits below is refused whole, before any parsing, in one pass over the bytes.

/** Levels of objects and arrays a JSON body may nest (a batch import's body has 4). */
export const MAX_JSON_DEPTH = 32

/** Objects and arrays a JSON body may hold, all levels together (the largest valid batch has 2,002). */
export const MAX_JSON_CONTAINERS = 10_000

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d

/** Where the string opened at `open` ends: its closing quote (or the end of the text). */
function stringEnd(bytes: Buffer, open: number): number {
  const quote = bytes.indexOf(QUOTE, open + 1)
  if (quote === -1) return bytes.length
  if (bytes[quote - 1] !== BACKSLASH) return quote
  // That quote may be escaped: walk the string byte by byte instead, stepping over each escaped byte.
  for (let i = open + 1; i < bytes.length; i++) {
    if (bytes[i] === BACKSLASH) i++
    else if (bytes[i] === QUOTE) return i
  }
  return bytes.length
}

/**
 * Which limit the JSON text in `bytes` (UTF-8) breaks, if any: brackets and braces are counted outside strings.
 * The text need not be valid JSON; the parser judges that afterwards. UTF-8 never uses these bytes inside a
 * multi-byte character, so the scan needs no decoding.
 */
export function jsonShapeExcess(bytes: Buffer): 'depth' | 'containers' | undefined {
  let depth = 0
  let containers = 0
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if (byte === QUOTE) {
      i = stringEnd(bytes, i)
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH) return 'depth'
      if (++containers > MAX_JSON_CONTAINERS) return 'containers'
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth--
    }
  }
  return undefined
}
