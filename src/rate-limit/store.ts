// The counters behind the rate limits, as a store of @fastify/rate-limit's documented store interface (`incr`,
// `child`), plus `refund`, which rubrica calls itself. Fixed windows that start with their first request. With
// Redis reachable the counts are shared by every instance; otherwise, or when a command fails, each instance
// counts on its own.
import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import { LRUCache } from 'lru-cache'
import type { RedisLink } from '../plugins/app/redis.js'

export interface Count {
  /** Requests counted in the current window, this one included when it was counted. */
  current: number
  /** Milliseconds until the window ends. */
  ttl: number
}

type Callback = (error: Error | null, result?: Count) => void

interface Window {
  count: number
  startedAt: number
}

/** Keys of tenants start with this; every other key is a client address's. */
export const TENANT_KEY_PREFIX = 'tenant:'
const REDIS_PREFIX = 'rubrica:rate:'

/** Counts in process memory. */
export class LocalCounters {
  // Tenants and client addresses are counted apart, so that requests from many addresses can only push other
  // addresses' counters out, never a tenant's (which would hand that tenant a fresh window).
  private readonly tenants = new LRUCache<string, Window>({ max: 100_000 })
  private readonly addresses = new LRUCache<string, Window>({ max: 10_000 })

  incr(key: string, windowMs: number): Count {
    const now = Date.now()
    const counters = this.countersOf(key)
    let window = counters.get(key)
    if (!window || now - window.startedAt >= windowMs) {
      window = { count: 0, startedAt: now }
      counters.set(key, window)
    }
    window.count++
    return { current: window.count, ttl: window.startedAt + windowMs - now }
  }

  /** Takes back one request counted in the current window (none if the window is over). */
  refund(key: string, windowMs: number): void {
    const window = this.countersOf(key).peek(key)
    if (window && Date.now() - window.startedAt < windowMs && window.count > 0) window.count--
  }

  private countersOf(key: string): LRUCache<string, Window> {
    return key.startsWith(TENANT_KEY_PREFIX) ? this.tenants : this.addresses
  }
}

// One round trip each. The window starts with the key's first increment and ends when the key expires.
const INCR_SCRIPT = `local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) ttl = tonumber(ARGV[1]) end
return {n, ttl}`
const REFUND_SCRIPT = `local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return {0, 0}`

/** Counts in Redis, shared by every instance on it. */
export class RedisCounters {
  constructor(private readonly link: RedisLink) {}

  get available(): boolean {
    return this.link.available
  }

  incr(key: string, windowMs: number): Promise<Count> {
    return this.run(INCR_SCRIPT, key, windowMs)
  }

  async refund(key: string, windowMs: number): Promise<void> {
    await this.run(REFUND_SCRIPT, key, windowMs)
  }

  private async run(script: string, key: string, windowMs: number): Promise<Count> {
    const [current, ttl] = (await this.link.client.eval(script, 1, REDIS_PREFIX + key, windowMs)) as [number, number]
    return { current, ttl: Math.max(0, ttl) }
  }
}

/** Redis while it answers, process memory otherwise: a rate limit never fails a request. */
export class CounterStore implements FastifyRateLimitStore {
  private readonly local = new LocalCounters()

  constructor(private readonly shared: RedisCounters | null) {}

  incr(key: string, callback: Callback, timeWindow: number): void {
    const counted = this.count(key, timeWindow)
    if (counted instanceof Promise) counted.then((count) => callback(null, count), callback)
    else callback(null, counted)
  }

  /** Every route and limiter shares the same counters. */
  child(): CounterStore {
    return this
  }

  /** Counts one request: in process memory without a promise, in Redis while it answers. */
  count(key: string, windowMs: number): Count | Promise<Count> {
    if (this.shared?.available) return this.countShared(this.shared, key, windowMs)
    return this.local.incr(key, windowMs)
  }

  /** Takes back one counted request, where it was counted (best effort: a lost refund only errs strict). */
  async refund(key: string, windowMs: number): Promise<void> {
    if (this.shared?.available) {
      try {
        return await this.shared.refund(key, windowMs)
      } catch {
        // Counted in Redis, where it stays: the window ends anyway.
      }
    }
    this.local.refund(key, windowMs)
  }

  private async countShared(shared: RedisCounters, key: string, windowMs: number): Promise<Count> {
    try {
      return await shared.incr(key, windowMs)
    } catch {
      // A command that fails mid-outage, before the link notices, is counted locally instead.
      return this.local.incr(key, windowMs)
    }
  }
}
