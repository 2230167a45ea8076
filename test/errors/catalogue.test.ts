// The error catalogue is the one source of every code's status, message and documentation: ApiError takes its
// status from it, the document lists its examples, and docs/api.md's table is made from it.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { API_PAGE, pageWithTable } from '../../scripts/error-table.ts'
import { ITEM_ERROR_CODES } from '../../src/contacts/batch/model.ts'
import { CATALOGUE, ERROR_CODES } from '../../src/errors/catalogue.ts'

t.test("docs/api.md's error table is the catalogue's", async (t) => {
  const page = readFileSync(API_PAGE, 'utf8')
  t.equal(page, pageWithTable(page), 'the table is up to date (npm run docs:errors writes it)')
})

t.test('the catalogue lists codes by status, as the docs table shows them', async (t) => {
  const statuses = ERROR_CODES.map((code) => CATALOGUE[code].status)
  t.same(
    statuses,
    [...statuses].sort((a, b) => a - b),
  )
})

t.test('every example has its own code, its status and an Italian message', async (t) => {
  for (const code of ERROR_CODES) {
    const example = CATALOGUE[code].example()
    t.equal(example.code, code, `${code}'s example`)
    t.equal(example.statusCode, CATALOGUE[code].status)
    t.match(example.message, /^[A-ZÈ"L'][^\n]*[.)]$/, `${code}: one sentence`)
  }
})

interface BatchResultDoc {
  properties: { error: { properties: { code: { enum: string[] } } } }
}

t.test('the document lists each code under its status, with that example', async (t) => {
  const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as {
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>
  }
  const listed = new Map<string, string>()
  for (const operations of Object.values(document.paths)) {
    for (const { responses } of Object.values(operations)) {
      for (const [status, response] of Object.entries(responses)) {
        const json = response.content?.['application/json'] as { examples?: Record<string, unknown> } | undefined
        for (const code of Object.keys(json?.examples ?? {})) listed.set(code, status)
      }
    }
  }
  for (const [code, status] of listed) {
    t.equal(Number(status), CATALOGUE[code as keyof typeof CATALOGUE]?.status, `${code} under ${status}`)
  }
  // A batch import's item codes are told in its results (BatchResult.error.code), not as answers.
  const resultSchema = (document as unknown as { components: { schemas: Record<string, BatchResultDoc> } }).components
    .schemas.BatchResult
  const itemCodes = resultSchema?.properties.error.properties.code.enum ?? []
  t.same(itemCodes, ITEM_ERROR_CODES, 'the document lists the codes a batch item can fail with')
  t.same(
    [...new Set([...listed.keys(), ...itemCodes])].sort(),
    [...ERROR_CODES].sort(),
    'every code is documented on some operation or batch result',
  )
})
