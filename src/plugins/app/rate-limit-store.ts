// A @fastify/rate-limit store that counts in Redis while it is reachable and in process memory otherwise.
import { createRequire } from 'node:module'
import type { RedisLink } from './redis.js'

type Counted = { current: number; ttl: number }
type Callback = (error: Error | null, result?: Counted) => void

/** The store contract of @fastify/rate-limit (its stores are CommonJS classes without type declarations). */
export interface CounterStore {
  incr(key: string, callback: Callback, timeWindow: number, max: number): void
  child(options: unknown): CounterStore
}

type StoreClass = new (...args: unknown[]) => CounterStore
const require = createRequire(import.meta.url)
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreClass
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreClass

export class FallbackStore implements CounterStore {
  private readonly local: CounterStore = new LocalStore(false, false, 10_000)
  private readonly shared: CounterStore | null

  constructor(private readonly redis: RedisLink | null) {
    this.shared = redis ? new RedisStore(false, false, redis.client, 'rubrica:rate:') : null
  }

  incr(key: string, callback: Callback, timeWindow: number, max: number): void {
    if (!this.shared || !this.redis?.available) {
      this.local.incr(key, callback, timeWindow, max)
      return
    }
    this.shared.incr(
      key,
      (error, result) => {
        // A command that fails mid-outage (before the link notices) is counted locally, never a 500.
        if (error) this.local.incr(key, callback, timeWindow, max)
        else callback(null, result)
      },
      timeWindow,
      max,
    )
  }

  child(): CounterStore {
    return this
  }
}
