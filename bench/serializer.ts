// A page of 50 contacts written by the list route's serializer (fast-json-stringify, compiled from the response
// schema with the shared schemas, as Fastify compiles it) and by JSON.stringify: microseconds per page, medians
// of rounds. docs/decisions/0003-answers-through-the-schema-serializer.md quotes it.
//   npx tsx bench/serializer.ts [rounds] [pages per round]
import { performance } from 'node:perf_hooks'
import build, { type Schema } from 'fast-json-stringify'
import { type Contact, ContactListSchema, ContactSchema, contactSchemas } from '../src/contacts/model.ts'
import { median } from './median.ts'

const rounds = Number(process.argv[2] ?? 15)
const pages = Number(process.argv[3] ?? 20_000)

// TypeBox schemas are JSON Schema; fast-json-stringify's types want its own narrower shape.
const external = Object.fromEntries(contactSchemas.map((schema) => [schema.$id as string, schema as Schema]))
const serialize = build(ContactListSchema as Schema, { schema: external })

/** Rows as the list statement returns them: the document's example contact, 50 times with ids and times of its own. */
const example = ContactSchema.examples[0] as Contact
const page = {
  data: Array.from(
    { length: 50 },
    (_, i): Contact => ({
      ...example,
      id: `8b4f3f2e-3f7c-4d0e-9a55-${String(i).padStart(12, '0')}`,
      email: `contatto.${i}@example.it`,
      lastName: i % 3 === 0 ? null : example.lastName,
      createdAt: `2026-03-01T09:30:${String(i % 60).padStart(2, '0')}.000Z`,
    }),
  ),
  next: '2026-03-01T09:29:00.000Z',
}
if (serialize(page) !== JSON.stringify(page)) throw new Error('the two serializations differ')

function timePerPage(write: (value: typeof page) => string): number {
  let length = 0
  const start = performance.now()
  // Flattening the string (as a socket write does) is part of the cost: a rope of small pieces is copied then.
  for (let i = 0; i < pages; i++) length += Buffer.byteLength(write(page))
  const elapsed = performance.now() - start
  if (length === 0) throw new Error('nothing written')
  return (elapsed * 1000) / pages
}

const results = { 'fast-json-stringify': [] as number[], 'JSON.stringify': [] as number[] }
for (let round = 0; round < rounds; round++) {
  results['fast-json-stringify'].push(timePerPage(serialize))
  results['JSON.stringify'].push(timePerPage(JSON.stringify))
}
for (const [name, times] of Object.entries(results)) {
  console.log(
    `${name.padEnd(20)} ${(median(times) ?? Number.NaN).toFixed(2)} µs per page of 50 (median of ${rounds} rounds of ${pages})`,
  )
}
