// What an instance lets batch imports hold at once. A batch's body, its parsed items, its statements' parameters
// and its answer take memory in proportion to its bytes, and its write holds a pooled connection for seconds. So
// an instance admits batches up to a budget of body bytes, and a tenant up to one largest batch's worth (so that
// one tenant's queue cannot fill the budget), refusing the others with 503 server_busy before their body is read;
// and lets a bounded number write at once, below the pool's size, so that other requests always find a
// connection, the places shared out between the tenants waiting. Batches waiting their turn wait here, in memory,
// without a connection.

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

/** A batch waiting for a writer's place: `start` gives it one. */
interface Waiting {
  tenantId: string
  start: () => void
}

/** A batch in turn or writing, with the contacts it names, and its end (whatever its outcome). */
interface Named {
  names: ReadonlySet<string>
  ended: Promise<void>
}

function shareAName(some: ReadonlySet<string>, others: ReadonlySet<string>): boolean {
  const [smaller, larger] = some.size <= others.size ? [some, others] : [others, some]
  for (const name of smaller) if (larger.has(name)) return true
  return false
}

/** How much of an estimate of a batch's duration is the latest one (a moving average). */
const LATEST_WEIGHT = 0.3

export class BatchAdmission {
  private heldBytes = 0
  private readonly heldByTenant = new Map<string, number>()
  private writing = 0
  private readonly writingByTenant = new Map<string, number>()
  /** Per tenant, its batches given to inTurn and not ended, in the order they came. */
  private readonly namedByTenant = new Map<string, Named[]>()
  /** Batches waiting for a writer's place, in the order they came. */
  private readonly waiting: Waiting[] = []
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
   * Runs `work` once the tenant's earlier batches that name any of the same contacts (`names`: the items' email
   * keys) have ended, and a writer's place is free: no more than `writers` batches write at once. Batches of a
   * tenant naming different contacts write at once (they do not wait for each other in the database); those naming
   * the same ones take turns here, in the order they came, rather than in the database, where their second rounds
   * could wait on each other in a circle. A place that frees goes to the batch waiting whose tenant writes fewest at
   * that moment, the earliest among equals, so that another tenant's batch waits for one batch to end at most, not
   * for the queue of a tenant importing.
   */
  inTurn<T>(tenantId: string, work: () => Promise<T>, names: ReadonlySet<string> = new Set()): Promise<T> {
    const others = this.namedByTenant.get(tenantId) ?? []
    const before = others.filter((other) => shareAName(other.names, names)).map((other) => other.ended)
    let end = () => {}
    const mine: Named = { names, ended: new Promise<void>((resolve) => (end = resolve)) }
    this.namedByTenant.set(tenantId, [...others, mine])
    const started = Promise.all(before).then(
      () =>
        new Promise<void>((start) => {
          this.waiting.push({ tenantId, start })
          this.startWaiting()
        }),
    )
    const done = started.then(async () => {
      try {
        return await work()
      } finally {
        this.leave(tenantId)
      }
    })
    return done.finally(() => {
      const left = (this.namedByTenant.get(tenantId) ?? []).filter((other) => other !== mine)
      if (left.length > 0) this.namedByTenant.set(tenantId, left)
      else this.namedByTenant.delete(tenantId)
      end()
    })
  }

  /** Batches writing now, per tenant (for tests). */
  writingFor(tenantId: string): number {
    return this.writingByTenant.get(tenantId) ?? 0
  }

  /** Gives back the tenant's writer's place, to the batch waiting that startWaiting picks. */
  private leave(tenantId: string): void {
    this.writing--
    const writes = (this.writingByTenant.get(tenantId) ?? 1) - 1
    if (writes > 0) this.writingByTenant.set(tenantId, writes)
    else this.writingByTenant.delete(tenantId)
    this.startWaiting()
  }

  private startWaiting(): void {
    const writesOf = (tenantId: string) => this.writingByTenant.get(tenantId) ?? 0
    while (this.writing < this.limits.writers && this.waiting.length > 0) {
      let chosen = 0
      for (let i = 1; i < this.waiting.length; i++) {
        if (writesOf((this.waiting[i] as Waiting).tenantId) < writesOf((this.waiting[chosen] as Waiting).tenantId)) {
          chosen = i
        }
      }
      const [next] = this.waiting.splice(chosen, 1) as [Waiting]
      this.writing++
      this.writingByTenant.set(next.tenantId, writesOf(next.tenantId) + 1)
      next.start()
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
