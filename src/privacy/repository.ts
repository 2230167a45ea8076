// Erasure and export of a contact (GDPR articles 17, 15 and 20), for the API and the admin CLI alike. An erasure
// is one transaction: the contact's row goes (its tag links with it, and the contacts trigger empties its events
// and records contact.erased), with the stored answers that hold it, and what is kept is the record of the
// erasure and the keyed hash of its address, which no create may bring back. Every method takes the tenant id.
import fp from 'fastify-plugin'
import { CHANGES_CHANNEL, erasureAnnouncement, NOTIFY_SQL } from '../announcements/channel.js'
import type { ErasedEmails } from '../contacts/erased-emails.js'
import type { Database } from '../db/database.js'
import { retryRolledBack } from '../db/deadlock.js'
import { FEED_ANCHOR_SQL } from '../db/tenant-anchor.js'
import type { ContactExport, ErasureRecord } from './model.js'
import {
  ALLOW_SQL,
  ERASE_SQL,
  ERASURES_SQL,
  EXISTS_SQL,
  EXPORT_SQL,
  FORGET_ANSWERS_SQL,
  RECORD_SQL,
  REMEMBER_EMAIL_SQL,
} from './sql.js'

/** The versions (ETags) an erasure under If-Match may erase, or `*`: any. */
export type ExpectedVersions = readonly number[] | '*'

/** What an erasure did: erased, found no such contact, or found it at another version than If-Match named. */
export type Erased = 'erased' | 'not_found' | 'precondition_failed'

/** Who asks for an erasure: an API key (its id), or an operator through the CLI. */
export type ErasedBy = { source: 'api'; keyId: string } | { source: 'cli' }

export class PrivacyRepository {
  constructor(
    private readonly db: Database,
    private readonly erased: ErasedEmails,
  ) {}

  /** Whether this instance can erase: it needs its secrets key to record the erased address. */
  get available(): boolean {
    return this.erased.available
  }

  /**
   * Erases the contact, when it has one of the `expected` versions (If-Match); not_found when the tenant has no such
   * contact (never had, or erased already). Creates check erased addresses in the statement that inserts, whatever
   * the instance; batches also refuse erased items beforehand, here from now on, on other instances once they hear
   * of it (a notification the transaction sends as it commits).
   */
  async erase(tenantId: string, contactId: string, by: ErasedBy, expected: ExpectedVersions = '*'): Promise<Erased> {
    if (!this.erased.available) throw new Error('no secrets key: callers refuse before this')
    this.erased.erasing(tenantId)
    // Run again if refused because a later transaction changed the contact first (src/db/deadlock.ts).
    return retryRolledBack(() =>
      this.db.transaction(async (query): Promise<Erased> => {
        const [row] = await query<{ id: string; emailKey: string | null }>('erasure_delete', ERASE_SQL, [
          tenantId,
          contactId,
          expected === '*' ? null : expected,
        ])
        if (!row) {
          if (expected === '*') return 'not_found'
          const [exists] = await query<{ found: boolean }>('erasure_exists', EXISTS_SQL, [tenantId, contactId])
          return exists?.found ? 'precondition_failed' : 'not_found'
        }
        await query('erasure_forget_answers', FORGET_ANSWERS_SQL, [tenantId, row.id])
        // The tenant's creates of erased addresses insert through its event_feeds row (CREATE_GUARDED_SQL).
        await query('erasure_feed_anchor', FEED_ANCHOR_SQL, [tenantId])
        await query('erasure_record', RECORD_SQL, [tenantId, row.id, by.source === 'api' ? by.keyId : null, by.source])
        const hash = row.emailKey === null ? null : this.erased.hash(row.emailKey)
        if (hash !== null) await query('erasure_remember_email', REMEMBER_EMAIL_SQL, [tenantId, hash])
        await query('erasure_announce', NOTIFY_SQL, [CHANGES_CHANNEL, erasureAnnouncement(tenantId)])
        return 'erased'
      }),
    )
  }

  /** Everything rubrica holds about the contact, or null when the tenant has no such contact. */
  async export(tenantId: string, contactId: string): Promise<ContactExport | null> {
    const [row] = await this.db.query<ContactExport>('contacts_export', EXPORT_SQL, [tenantId, contactId])
    if (!row) return null
    // The receiver's origin only: a webhook's path and query may hold a token, which webhooks:manage guards.
    for (const delivery of row.deliveries) delivery.receiver = new URL(delivery.receiver).origin
    return row
  }

  /** The tenant's erasures, oldest first. */
  erasures(tenantId: string): Promise<ErasureRecord[]> {
    return this.db.query<ErasureRecord>('erasures_list', ERASURES_SQL, [tenantId])
  }

  /** Lets creates bring an erased address back (the person consented again); false when it was not erased. */
  async allow(tenantId: string, email: string): Promise<boolean> {
    const hash = this.erased.hash(email)
    if (hash === null) throw new Error('no secrets key: callers refuse before this')
    return (await this.db.query('erased_emails_allow', ALLOW_SQL, [tenantId, hash])).length > 0
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    privacy: PrivacyRepository
  }
}

/** The repository on the app, for the routes. */
export const privacyRepository = fp(
  async function privacyRepository(fastify) {
    fastify.decorate('privacy', new PrivacyRepository(fastify.db, fastify.erasedEmails))
  },
  { name: 'privacy-repository', dependencies: ['database', 'erased-emails'] },
)
