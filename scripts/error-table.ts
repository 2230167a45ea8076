// docs/api.md's error table, made from the catalogue (src/errors/catalogue.ts) between two markers:
// `npm run docs:errors` writes it, and test/errors/catalogue.test.ts fails while the page differs from it.
import { readFileSync, writeFileSync } from 'node:fs'
import { CATALOGUE, ERROR_CODES } from '../src/errors/catalogue.ts'

export const API_PAGE = 'docs/api.md'
const START = '<!-- error table: made by npm run docs:errors from src/errors/catalogue.ts -->'
const END = '<!-- end of error table -->'

/** The table: one row per code, by status, a + on codes the specification does not list. */
export function errorTable(): string {
  const rows = ERROR_CODES.map((code) => {
    const { status, when, specified } = CATALOGUE[code]
    return `| ${status} | \`${code}\`${specified ? '' : ' +'} | ${when.replaceAll('|', '\\|')} |`
  })
  return [START, '', '| status | code | when |', '| --- | --- | --- |', ...rows, '', END].join('\n')
}

/** The page with its table made anew; throws when the markers are missing. */
export function pageWithTable(page: string): string {
  const start = page.indexOf(START)
  const end = page.indexOf(END)
  if (start < 0 || end < start) throw new Error(`${API_PAGE} has no error table markers`)
  return page.slice(0, start) + errorTable() + page.slice(end + END.length)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(API_PAGE, pageWithTable(readFileSync(API_PAGE, 'utf8')))
  console.log(`${API_PAGE}: error table written from the catalogue`)
}
