// Key revocations and tenant status changes made by the CLI are announced on the database itself (PostgreSQL's
// NOTIFY), so that every instance on that database drops its cached key resolutions at once instead of after
// the cache lifetime, whatever the CLI's environment. Redis carries rate-limit counters only.
import type { Database } from '../db/database.js'

export const AUTH_CHANGES_CHANNEL = 'rubrica_auth_changes'

/** Best effort: instances that miss it still notice within AUTH_CACHE_TTL_MS. Returns whether it was sent. */
export async function announceAuthChange(database: Database, what: string): Promise<boolean> {
  try {
    await database.query('auth_changes_notify', 'SELECT pg_notify($1, $2)', [AUTH_CHANGES_CHANNEL, what])
    return true
  } catch {
    return false
  }
}
