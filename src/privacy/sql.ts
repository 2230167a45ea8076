// The SQL of erasures and exports. Every statement names its tenant and runs, on a distributed PostgreSQL (Citus),
// on the tenant's node as one task: the erasure is a transaction of plain statements (a DELETE … RETURNING, a
// DELETE, INSERT … VALUES), the export one SELECT.
import { selectContact } from '../contacts/sql.js'
import { isoUtc } from '../db/iso-time.js'
import { eventRows } from '../events/sql.js'

/**
 * The tables whose rows hold contacts' data (their fields, in the row or in a copy of it): where an erasure leaves
 * dead rows, until the space is reused or the tables are rewritten (`rubrica db vacuum`).
 */
export const CONTACT_DATA_TABLES = ['contacts', 'contact_words', 'events', 'idempotency_keys'] as const

/**
 * Deletes the contact ($1 tenant, $2 id) and answers its id and lower-cased email (none when it was not there). Its
 * tag links go by their foreign key; its events lose their snapshot of it and gain a contact.erased event, by the
 * contacts trigger (the migration `erasure`), in this same statement.
 */
export const ERASE_SQL = `DELETE FROM contacts WHERE tenant_id = $1 AND id = $2
    AND ($3::int[] IS NULL OR version = ANY($3::int[]))
  RETURNING id, email_key AS "emailKey"`

/** Whether the tenant has the contact: what tells 404 from 412 when an erasure under If-Match deleted nothing. */
export const EXISTS_SQL = 'SELECT EXISTS (SELECT 1 FROM contacts WHERE tenant_id = $1 AND id = $2) AS found'

/**
 * Deletes the tenant's stored Idempotency-Key answers that hold the contact ($2): the answer of the POST that
 * created it, of the batch imports that wrote it, found by the contacts each answer names (an index), whatever
 * the tenant stores. A retry with such a key runs again.
 */
export const FORGET_ANSWERS_SQL = 'DELETE FROM idempotency_keys WHERE tenant_id = $1 AND contact_ids @> ARRAY[$2::uuid]'

/** The record of the erasure: no personal data ($3 the key that asked for it, or null; $4 api or cli). */
export const RECORD_SQL = `INSERT INTO erasures (tenant_id, contact_id, key_id, source) VALUES ($1, $2, $3, $4)
  ON CONFLICT (tenant_id, contact_id) DO NOTHING`

/** The erased address ($2, its keyed hash), which creates then refuse; erased again, the latest time counts. */
export const REMEMBER_EMAIL_SQL = `INSERT INTO erased_emails (tenant_id, email_hash) VALUES ($1, $2)
  ON CONFLICT (tenant_id, email_hash) DO UPDATE SET erased_at = EXCLUDED.erased_at`

/**
 * What rubrica holds about a contact ($1 tenant, $2 id), in one statement (one snapshot): the contact as GET reads
 * it, its events as the feed shows them, oldest first, and the attempts to deliver them to the tenant's webhooks,
 * with each webhook's URL, oldest first. No row when the contact is not there.
 */
export const EXPORT_SQL = `SELECT ${isoUtc('statement_timestamp()')} AS "exportedAt",
    (SELECT row_to_json(x) FROM (SELECT ${selectContact('c')}) x) AS contact,
    COALESCE((SELECT json_agg(json_build_object('id', v.id, 'type', v.type, 'occurredAt', v."occurredAt",
        'data', v.data) ORDER BY v.seq::bigint NULLS LAST, v."occurredAt", v.n::bigint)
      FROM (SELECT ${eventRows('WHERE e.tenant_id = $1 AND e.contact_id = $2')}) v), '[]') AS events,
    COALESCE((SELECT json_agg(json_build_object('webhookId', a.webhook_id, 'receiver', w.url, 'eventId', a.event_id,
        'attempt', a.attempt, 'at', ${isoUtc('a.at')}, 'status', a.status, 'outcome', a.outcome)
        ORDER BY a.at, a.event_id, a.attempt)
      FROM delivery_attempts a
      JOIN webhooks w ON w.tenant_id = $1 AND w.id = a.webhook_id
      JOIN events d ON d.tenant_id = $1 AND d.id = a.event_id
      WHERE a.tenant_id = $1 AND d.contact_id = $2), '[]') AS deliveries
  FROM contacts c WHERE c.tenant_id = $1 AND c.id = $2`

/** The tenant's erasures, oldest first, for operators (the admin CLI). */
export const ERASURES_SQL = `SELECT contact_id AS "contactId", ${isoUtc('erased_at')} AS "erasedAt", key_id AS "keyId",
    source
  FROM erasures WHERE tenant_id = $1 ORDER BY erased_at, contact_id`

/** Lifts an erased address ($2, its keyed hash): creates may bring it back. Answers it when it was there. */
export const ALLOW_SQL = 'DELETE FROM erased_emails WHERE tenant_id = $1 AND email_hash = $2 RETURNING email_hash'
