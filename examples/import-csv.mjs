// node examples/import-csv.mjs contatti.csv — imports a CSV file, 1,000 contacts a call. Its header names
// BatchItem's fields (email required), tags separated by "|"; RUBRICA_URL and RUBRICA_KEY say where to.
import { readFile } from 'node:fs/promises'
import { parse } from 'csv-parse/sync'

const rows = parse(await readFile(process.argv[2]), { columns: true, skip_empty_lines: true, trim: true })
const items = rows.map(({ tags, ...fields }) => ({
  ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== '')),
  ...(tags ? { tags: tags.split('|').map((tag) => tag.trim()) } : {}),
}))
const totals = { created: 0, updated: 0, unchanged: 0, failed: 0 }
for (let start = 0; start < items.length; start += 1000) {
  const body = JSON.stringify({ contacts: items.slice(start, start + 1000) })
  // A batch is safe to send again as it is (what it wrote comes back unchanged): retried when the service says so.
  let res
  do {
    res = await fetch(`${process.env.RUBRICA_URL}/api/v1/contacts/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${process.env.RUBRICA_KEY}`, 'content-type': 'application/json' },
      body,
    })
    const wait = Number(res.headers.get('retry-after') ?? 1) * 1000
    if (res.status === 429 || res.status === 503) await new Promise((resolve) => setTimeout(resolve, wait))
  } while (res.status === 429 || res.status === 503)
  const answer = await res.json()
  if (!res.ok) throw new Error(`${res.status} ${answer.error.code}: ${answer.error.message}`)
  answer.results.forEach((result, i) => {
    if (result.status === 400) console.error(`riga ${start + i + 2}: ${result.error.message}`)
  })
  for (const outcome of Object.keys(totals)) totals[outcome] += answer[outcome]
}
console.log(JSON.stringify(totals))
