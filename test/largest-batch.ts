// The largest batches the rules allow: MAX_BATCH_ITEMS items with every field at its longest and 100 tags of 64
// characters each, their text in ASCII (the largest batch the route accepts: BATCH_BODY_LIMIT is derived from
// it) or in four-byte characters (about 3.6 times larger, refused). A tenant that has the same tag names gets
// every item written and answered in full, the largest answer too; one without them gets every item refused for
// its tags.
import { MAX_BATCH_ITEMS } from '../src/contacts/batch/model.ts'

export type Script = 'ascii' | 'emoji'

/** `n` characters of text: ASCII letters, or emoji of four bytes each in UTF-8. */
const text = (script: Script, n: number, letter = 'a') => (script === 'ascii' ? letter : '😀').repeat(n)

/** 100 tag names of 64 characters. */
export function largestTagNames(script: Script = 'ascii'): string[] {
  return Array.from({ length: 100 }, (_, j) => `${text(script, 62, 't')}${String(j).padStart(2, '0')}`)
}

/** A 254-character address, unique per `prefix` (up to 10 characters) and index: 64 characters before @, labels of 63. */
export function largestEmail(prefix: string, i: number): string {
  return `${prefix}${String(i).padStart(64 - prefix.length, 'u')}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(58)}.it`
}

export function largestItems(prefix: string, script: Script = 'ascii', count = MAX_BATCH_ITEMS) {
  const tags = largestTagNames(script)
  return Array.from({ length: count }, (_, i) => ({
    email: largestEmail(prefix, i),
    firstName: text(script, 100, 'f'),
    lastName: text(script, 100, 'l'),
    phone: '0'.repeat(32),
    emailStatus: 'pending_review',
    stage: 'ex_customer',
    consentType: text(script, 64, 'c'),
    tags,
  }))
}

/** `{"contacts":[…]}` of the largest items, as compact JSON. */
export function largestBatchBody(prefix: string, script: Script = 'ascii', count = MAX_BATCH_ITEMS): string {
  return JSON.stringify({ contacts: largestItems(prefix, script, count) })
}
