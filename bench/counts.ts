// How long a search's count takes for a tag on about 30% of a tenant's contacts (every tag the seed gives is):
// sequential requests alone on the server after the scenarios, each with `count: true`. A count slower than
// SEARCH_COUNT_TIMEOUT_MS comes back without `total`, so "every total present" is the target.
import { performance } from 'node:perf_hooks'
import { median } from './median.ts'
import { fixed } from './output.ts'
import type { Verdict } from './verdicts.ts'
import type { TenantSample } from './wrk.ts'

const ROUNDS = 3

/** A search's page of one contact, counted: its total (none when the count ran out of time) and how long it took. */
async function counted(url: string, key: string, filters: object[]) {
  const started = performance.now()
  const res = await fetch(`${url}/api/v1/contacts/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ filterGroups: filters.length > 0 ? [{ filters }] : [], limit: 1, count: true }),
  })
  const answer = (await res.json()) as { total?: number }
  return { ms: performance.now() - started, total: res.status === 200 ? answer.total : undefined }
}

export async function measureCounts(url: string, tenant: TenantSample): Promise<Verdict> {
  const all = (await counted(url, tenant.key, [])).total ?? 0
  const times: number[] = []
  const totals: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    for (const tag of tenant.tags) {
      const { ms, total } = await counted(url, tenant.key, [{ field: 'tags', op: 'hasAll', value: [tag] }])
      times.push(ms)
      if (total !== undefined) totals.push(total)
    }
  }
  const share = all > 0 ? (median(totals) ?? 0) / all : 0
  return {
    label: `search count of a tag on ~${fixed(share * 100, 0)}% of ${all.toLocaleString('en-US')} contacts < 1 s`,
    value: `median ${fixed(median(times) ?? 0, 0)} ms, max ${fixed(Math.max(...times), 0)} ms, ${totals.length}/${times.length} with total`,
    pass: totals.length === times.length && Math.max(...times) < 1000,
  }
}
