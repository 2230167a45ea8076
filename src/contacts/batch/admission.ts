// What an instance lets batch imports hold at once. A batch's body, its parsed items, its statements' parameters
// and its answer take memory in proportion to its bytes, and its write holds a pooled connection for seconds. So
// an instance admits batches up to a budget of body bytes, and a tenant up to one largest batch's worth (its
// batches run one at a time anyway: holding more would only keep others out), refusing the others with 503
// server_busy before their body is read; runs one batch of a tenant at a time; and lets a bounded number write at
// once, below the pool's size, so that other requests always find a connection. Batches waiting their turn wait
// here, in memory, without a connection.

/** A batch admitted: its share of the budget, given back once its answer is gone and its work has ended. */
export interface Ticket {
  /** Keeps the share until `work` settles as well, whatever happens to the connection meanwhile. */
  during<T>(work: Promise<T>): Promise<T>
  /** The answer is sent, or the client has gone. */
  closed(): void
}

export interface AdmissionLimits {
  /** Body bytes the batches held at once may declare together. */
  budgetBytes: number
  /** The least a batch counts for, however small its body: its answer and items cost memory of their own. */
  minimumBytes: number
  /** The batch route's body limit: what a body of undeclared length counts for. */
  bodyLimit: number
  /** Batches that may write at once. */
  writers: number
}

/** How much of an estimate of a batch's duration is the latest one (a moving average). */
const LATEST_WEIGHT = 0.3

export class BatchAdmission {
  private heldBytes = 0
  private readonly heldByTenant = new Map<string, number>()
  private writing = 0
  private readonly writerQueue: (() => void)[] = []
  /** Per tenant, the end of the last batch that took its turn. */
  private readonly tenantTurns = new Map<string, Promise<unknown>>()
  /** How long a batch has recently been held, in seconds. */
  private typicalSeconds = 1

  constructor(private readonly limits: AdmissionLimits) {}

  /**
   * A ticket for the tenant's batch whose body declares `declaredBytes` (undefined: not declared, as with a chunked
   * body); or why there is none: the instance holds all it may, or the tenant holds its share. One declaring more
   * than the body limit is given a ticket for nothing, so that it gets its 413 rather than a 503; one alone (of the
   * instance, of the tenant) is always admitted.
   */
  admit(tenantId: string, declaredBytes: number | undefined): Ticket | 'instance full' | 'tenant full' {
    const { budgetBytes, minimumBytes, bodyLimit } = this.limits
    if (declaredBytes !== undefined && declaredBytes > bodyLimit) return this.ticket(tenantId, 0)
    const bytes = Math.max(minimumBytes, declaredBytes ?? bodyLimit)
    const tenantBytes = this.heldByTenant.get(tenantId) ?? 0
    if (tenantBytes > 0 && tenantBytes + bytes > bodyLimit) return 'tenant full'
    if (this.heldBytes > 0 && this.heldBytes + bytes > budgetBytes) return 'instance full'
    this.heldBytes += bytes
    this.heldByTenant.set(tenantId, tenantBytes + bytes)
    return this.ticket(tenantId, bytes)
  }

  /** Whole seconds after which a refused batch may well be admitted: how long batches have recently been held. */
  retryAfterSeconds(): number {
    return Math.min(60, Math.max(1, Math.ceil(this.typicalSeconds)))
  }

  /** Body bytes the admitted batches hold now. */
  get held(): number {
    return this.heldBytes
  }

  /**
   * Runs `work` once the tenant's earlier batches on this instance have ended and a writer's place is free: one
   * batch of a tenant at a time (its batches would wait for each other's locks in the database anyway, each
   * holding a connection), and no more than `writers` at once.
   */
  inTurn<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tenantTurns.get(tenantId) ?? Promise.resolve()
    const mine = previous.then(() => this.asWriter(work))
    const settled = mine.catch(() => undefined)
    this.tenantTurns.set(tenantId, settled)
    void settled.then(() => {
      if (this.tenantTurns.get(tenantId) === settled) this.tenantTurns.delete(tenantId)
    })
    return mine
  }

  private async asWriter<T>(work: () => Promise<T>): Promise<T> {
    if (this.writing >= this.limits.writers) await new Promise<void>((resolve) => this.writerQueue.push(resolve))
    else this.writing++
    try {
      return await work()
    } finally {
      // The place passes straight to the next in line, if any.
      const next = this.writerQueue.shift()
      if (next) next()
      else this.writing--
    }
  }

  private ticket(tenantId: string, bytes: number): Ticket {
    const admittedAt = performance.now()
    let working = 0
    let closed = false
    let released = false
    const releaseIfDone = () => {
      if (released || !closed || working > 0) return
      released = true
      this.heldBytes -= bytes
      const tenantBytes = (this.heldByTenant.get(tenantId) ?? 0) - bytes
      if (tenantBytes > 0) this.heldByTenant.set(tenantId, tenantBytes)
      else this.heldByTenant.delete(tenantId)
      if (bytes > 0) {
        const seconds = (performance.now() - admittedAt) / 1000
        this.typicalSeconds = LATEST_WEIGHT * seconds + (1 - LATEST_WEIGHT) * this.typicalSeconds
      }
    }
    return {
      during: async (work) => {
        working++
        try {
          return await work
        } finally {
          working--
          releaseIfDone()
        }
      },
      closed: () => {
        closed = true
        releaseIfDone()
      },
    }
  }
}
