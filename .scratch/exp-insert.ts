import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { batchSql } from '../src/contacts/batch/sql.ts'

const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/scratch_schema' })
await client.connect()
const tenant = randomUUID()
await client.query(`INSERT INTO tenants (id, name, updated_at) VALUES ($1, 'x', now())`, [tenant])
await client.query(`INSERT INTO event_feeds (tenant_id) VALUES ($1)`, [tenant])
let seq = 0
const items = () =>
  JSON.stringify(
    Array.from({ length: 1000 }, () => {
      const i = seq++
      return { id: randomUUID(), email: `p.${i}@example.it`, firstName: `N${i % 97}`, lastName: `C${i}`, consentType: 'consent', stage: 'lead', emailHash: null }
    }),
  )
const base = batchSql.INSERT.sql
const variants: Record<string, string> = {
  current: base,
  noNotExists: base.replace(/AND NOT EXISTS \(SELECT 1 FROM contacts e[^\n]*\n/, ''),
  noReturning: base.replace(/RETURNING[\s\S]*$/, ''),
  rawTimes: base.replace(/iso_utc\((c\.[a-z_]+)\)/g, '$1'),
  noOrder: base.replace(/ORDER BY lower\(i.item->>'email'\)\n/, ''),
}
const which = (process.argv[2] ?? 'current,rawTimes,noReturning').split(',')
const times: Record<string, number[]> = {}
for (let round = 0; round < 15; round++) {
  for (const v of which) {
    const sql = variants[v] as string
    await client.query('BEGIN')
    await client.query("SET LOCAL rubrica.batch_writes = 'on'")
    const json = items()
    const t0 = process.hrtime.bigint()
    await client.query({ name: `v_${v}`, text: sql, values: [tenant, json, new Date().toISOString()] })
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    await client.query('COMMIT')
    if (round >= 3) (times[v] ??= []).push(ms)
  }
}
for (const [v, list] of Object.entries(times)) {
  list.sort((a, b) => a - b)
  console.log(v.padEnd(14), 'median ms per 1000:', list[Math.floor(list.length / 2)]?.toFixed(1))
}
await client.end()
