// How long a search's count takes for a tag on about 30% of a tenant's contacts (every tag the seed gives is):
// sequential requests alone on the server after the scenarios, each with `count: true`. A count slower than
// SEARCH_COUNT_TIMEOUT_MS comes back without `total`, so "every total present" is the target.
import { performance } from 'node:perf_hooks'
import { median } from './median.ts'
import { fixed } from './output.ts'
import type { Verdict } from './verdicts.ts'
import type { TenantSample } from './wrk.ts'

const ROUNDS = 3

export async function measureCounts(url: string, tenant: TenantSample, contacts: number): Promise<Verdict> {
  const times: number[] = []
  const totals: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    for (const tag of tenant.tags) {
      const body = {
        filterGroups: [{ filters: [{ field: 'tags', op: 'hasAll', value: [tag] }] }],
        limit: 1,
        count: true,
      }
      const started = performance.now()
      const res = await fetch(`${url}/api/v1/contacts/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      const answer = (await res.json()) as { total?: number }
      times.push(performance.now() - started)
      if (res.status === 200 && answer.total !== undefined) totals.push(answer.total)
    }
  }
  const share = totals.length > 0 ? (median(totals) ?? 0) / contacts : 0
  return {
    label: `search count of a tag on ~${fixed(share * 100, 0)}% of ${contacts.toLocaleString('en-US')} contacts < 1 s`,
    value: `median ${fixed(median(times) ?? 0, 0)} ms, max ${fixed(Math.max(...times), 0)} ms, ${totals.length}/${times.length} with total`,
    pass: totals.length === times.length && Math.max(...times) < 1000,
  }
}
