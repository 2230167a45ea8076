// A transaction PostgreSQL chose to break a deadlock (SQLSTATE 40P01; Citus reports a deadlock across its nodes
// with the same code) rolled back whole and can run again: what it waited for has moved on.
import { setTimeout as sleep } from 'node:timers/promises'
import { someInChain } from './unavailable.js'

/** Whether `error` (or an error it wraps) is a deadlock's victim. */
export const isDeadlock = (error: unknown): boolean => someInChain(error, (e) => e.code === '40P01')

/**
 * Runs `work`, a whole transaction, again when it was a deadlock's victim, up to `attempts` times in all, after a
 * short random pause (so that the two sides do not meet again in step). Any other error, or the last deadlock,
 * is thrown.
 */
export async function retryOnDeadlock<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= attempts || !isDeadlock(error)) throw error
      await sleep(10 + Math.random() * 40 * attempt)
    }
  }
}
