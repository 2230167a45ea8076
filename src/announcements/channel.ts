// Changes that running instances must see at once are announced on the database itself (PostgreSQL's NOTIFY), so
// that every instance on that database hears them whatever the announcer's environment (plugin.ts
// listens): key revocations and tenant status changes made by the CLI, on which each instance
// drops its cached key resolutions instead of waiting for the cache lifetime; and erasures, by the API or the CLI,
// on which each instance starts checking the tenant's creates against its erased addresses; and changes of a
// tenant's own fields, on which each instance drops the validators it compiled for them. Redis carries
// rate-limit counters only.
import type { Database } from '../db/database.js'

/** The one channel (its name from when it carried key changes only, so that instances of either version hear). */
export const CHANGES_CHANNEL = 'rubrica_auth_changes'

/** Announces `$2` on channel `$1`. */
export const NOTIFY_SQL = 'SELECT pg_notify($1, $2)'

const ERASURE = 'erasure '
const FIELDS = 'fields '

/** The announcement of an erasure in a tenant. */
export function erasureAnnouncement(tenantId: string): string {
  return `${ERASURE}${tenantId}`
}

/** The tenant an announcement says erased a contact, or null when it announces a change of keys or tenants. */
export function erasingTenantOf(announcement: string): string | null {
  return announcement.startsWith(ERASURE) ? announcement.slice(ERASURE.length) : null
}

/** The announcement of a change of a tenant's own fields' definitions. */
export function fieldsAnnouncement(tenantId: string): string {
  return `${FIELDS}${tenantId}`
}

/** The tenant whose fields' definitions an announcement says changed, or null. */
export function fieldsTenantOf(announcement: string): string | null {
  return announcement.startsWith(FIELDS) ? announcement.slice(FIELDS.length) : null
}

/** Best effort: instances that miss it still notice within AUTH_CACHE_TTL_MS. Returns whether it was sent. */
export async function announceAuthChange(database: Database, what: string): Promise<boolean> {
  try {
    await database.query('auth_changes_notify', NOTIFY_SQL, [CHANGES_CHANNEL, what])
    return true
  } catch {
    return false
  }
}
