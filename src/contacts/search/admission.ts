// How many searches an instance runs at once: a search whose filters no index serves reads many contacts, and a
// tenant sending several at once would otherwise hold every connection of the pool while other tenants' requests
// wait for one. A tenant runs SEARCH_PER_TENANT searches at once and the instance one less than its connections;
// a search past those waits its turn, up to WAIT_MS, then is refused (503 server_busy, Retry-After).

/** Searches one tenant runs at once on an instance. */
export const SEARCH_PER_TENANT = 2
/** How long a search waits for its turn before it is refused. */
export const WAIT_MS = 2000

interface Waiting {
  tenantId: string
  admit: () => void
}

export class SearchAdmission {
  private running = 0
  private readonly byTenant = new Map<string, number>()
  private readonly queue: Waiting[] = []

  constructor(
    /** Searches the instance runs at once: its pool's connections but one (at least one). */
    private readonly atOnce: number,
  ) {}

  /** Runs `search` in its turn; throws `busy()` when the turn does not come within WAIT_MS. */
  async inTurn<T>(tenantId: string, search: () => Promise<T>, busy: () => Error): Promise<T> {
    if (this.mayStart(tenantId)) this.take(tenantId)
    else await this.waitTurn(tenantId, busy)
    try {
      return await search()
    } finally {
      this.running--
      const left = (this.byTenant.get(tenantId) ?? 1) - 1
      if (left === 0) this.byTenant.delete(tenantId)
      else this.byTenant.set(tenantId, left)
      this.admitNext()
    }
  }

  /** Counts the search as running: at once when it starts, or for a waiting one, as it is admitted. */
  private take(tenantId: string): void {
    this.running++
    this.byTenant.set(tenantId, (this.byTenant.get(tenantId) ?? 0) + 1)
  }

  private mayStart(tenantId: string): boolean {
    return this.running < this.atOnce && (this.byTenant.get(tenantId) ?? 0) < SEARCH_PER_TENANT
  }

  private waitTurn(tenantId: string, busy: () => Error): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        tenantId,
        admit: () => {
          clearTimeout(timer)
          resolve()
        },
      }
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(waiting), 1)
        reject(busy())
      }, WAIT_MS)
      this.queue.push(waiting)
    })
  }

  /** The first waiting search that may start now, of whichever tenant: another's turn is not held by one's own. */
  private admitNext(): void {
    const next = this.queue.findIndex((waiting) => this.mayStart(waiting.tenantId))
    if (next === -1) return
    const [waiting] = this.queue.splice(next, 1)
    if (!waiting) return
    this.take(waiting.tenantId)
    waiting.admit()
  }
}
