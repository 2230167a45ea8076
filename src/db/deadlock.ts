// Transactions PostgreSQL rolled back whole so that they may run again: a deadlock's victim (SQLSTATE 40P01; Citus
// reports a deadlock across its nodes with the same code), or a change of a contact refused because a transaction
// that began writing after this one changed the contact first (40001, the contacts trigger of the migration
// contact_change_order: run again, the change takes a new transaction id, which follows, and its event with it).
import { setTimeout as sleep } from 'node:timers/promises'
import { someInChain } from './unavailable.js'

/** SQLSTATEs of a transaction rolled back that can run again as it was. */
const ROLLED_BACK_TO_RUN_AGAIN = new Set(['40P01', '40001'])

/** Whether `error` (or an error it wraps) rolled its transaction back for it to run again. */
export const mayRunAgain = (error: unknown): boolean =>
  someInChain(error, (e) => typeof e.code === 'string' && ROLLED_BACK_TO_RUN_AGAIN.has(e.code))

/**
 * Runs `work`, a whole transaction (or one statement on its own), again when PostgreSQL rolled it back to be run
 * again, up to `attempts` times in all, after a short random pause (so that the two sides do not meet again in
 * step). Any other error, or the last such one, is thrown.
 */
/** How many times in all a rolled-back transaction runs (docs/api-batch.md). */
export const ROLLED_BACK_ATTEMPTS = 5

export async function retryRolledBack<T>(work: () => Promise<T>, attempts = ROLLED_BACK_ATTEMPTS): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= attempts || !mayRunAgain(error)) throw error
      await sleep(10 + Math.random() * 40 * attempt)
    }
  }
}
