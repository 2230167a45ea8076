// The SQL of the tenant's own fields: their definitions (custom_fields), the counts that tell whether a change of
// one would leave stored values outside its rules, and the reclaim of a deleted field's values. Every statement
// names one tenant ($1). Values are an object in contacts.fields; the contacts' triggers keep its rules
// (the migration custom_fields).
import { isoUtc, isoUtcReturned } from '../../db/iso-time.js'

const columns = (iso: (expression: string) => string) =>
  `name, type, label, options, max_length AS "maxLength", ${iso('created_at')} AS "createdAt",
    ${iso('updated_at')} AS "updatedAt"`

/** The tenant's definitions, deleted ones included (`removing`: their values are still being reclaimed). */
export const DEFINITIONS_SQL = `SELECT ${columns(isoUtc)}, removed_at IS NOT NULL AS removing
  FROM custom_fields WHERE tenant_id = $1 ORDER BY name`

/**
 * Holds the tenant's definitions until the transaction ends, so that two changes of them take turns: the limit
 * of fields a tenant has is counted after the lock, by the second as the first left it.
 */
export const LOCK_SQL = 'SELECT name FROM custom_fields WHERE tenant_id = $1 ORDER BY name FOR UPDATE'

/**
 * Takes the tenant's fields lock alone until the transaction ends, before a change of the definition $2 counts the
 * values it would break: writes of values share it (the contacts' trigger, contacts_after_write), so the count
 * sees every write that checked the definition as it was, and later writes read it as changed. Read from the
 * definition's row, so that a distributed PostgreSQL takes it on the node that holds the tenant's contacts.
 */
export const CHANGE_LOCK_SQL = `SELECT pg_advisory_xact_lock(custom_fields_lock(tenant_id)) AS locked
  FROM custom_fields WHERE tenant_id = $1 AND name = $2`

/** The tenant's definitions in force. */
export const COUNT_SQL = 'SELECT count(*)::int AS n FROM custom_fields WHERE tenant_id = $1 AND removed_at IS NULL'

/** A new definition ($2 name, $3 type, $4 label, $5 options, $6 max length); no row when the name is taken. */
export const CREATE_SQL = `INSERT INTO custom_fields (tenant_id, name, type, label, options, max_length)
  VALUES ($1, $2, $3, $4, $5::text[], $6) ON CONFLICT DO NOTHING
  RETURNING ${columns(isoUtcReturned)}`

/** A definition changed as a whole ($3 to $6 as in CREATE_SQL). */
export const UPDATE_SQL = `UPDATE custom_fields SET type = $3, label = $4, options = $5::text[], max_length = $6,
    updated_at = now()
  WHERE tenant_id = $1 AND name = $2 AND removed_at IS NULL
  RETURNING ${columns(isoUtcReturned)}`

/** Deletes a definition ($2): from now on no reader sees its values, and writes refuse it; the reclaim follows. */
export const REMOVE_SQL = `UPDATE custom_fields SET removed_at = now()
  WHERE tenant_id = $1 AND name = $2 AND removed_at IS NULL RETURNING name`

/** The contacts holding a value of the field $2 (the GIN index of contacts.fields answers `?`). */
export const HOLDING_SQL = 'SELECT count(*)::int AS n FROM contacts WHERE tenant_id = $1 AND fields ? $2'

/** The contacts holding any of the values $2 (each `{"<name>": value}`, through the GIN index). */
export const HOLDING_VALUES_SQL =
  'SELECT count(*)::int AS n FROM contacts WHERE tenant_id = $1 AND fields @> ANY($2::jsonb[])'

/** The contacts holding a text of the field $2 longer than $3 characters. */
export const HOLDING_LONGER_SQL = `SELECT count(*)::int AS n FROM contacts
  WHERE tenant_id = $1 AND fields ? $2 AND length(fields ->> $2) > $3`

/** How many contacts a reclaim statement rewrites at most: short transactions, other writes go on between them. */
export const RECLAIMED_PER_STATEMENT = 500

/**
 * Drops the deleted field $2's value from up to RECLAIMED_PER_STATEMENT contacts, skipping those another write
 * holds (the next statement takes them). The contacts' BEFORE trigger makes it no change of the contact: same
 * version, no event.
 */
export const RECLAIM_SQL = `UPDATE contacts c SET fields = c.fields - $2::text
  WHERE c.tenant_id = $1 AND c.id IN (SELECT x.id FROM contacts x WHERE x.tenant_id = $1 AND x.fields ? $2
    ORDER BY x.id LIMIT ${RECLAIMED_PER_STATEMENT} FOR UPDATE SKIP LOCKED)
  RETURNING c.id`

/** How many events a statement of the events' reclaim reads at most, in the order of their key. */
export const EVENTS_PER_STATEMENT = 1000

/** The key of the last of the tenant's next EVENTS_PER_STATEMENT events after ($2, $3) (txn, n); none at the end. */
export const EVENTS_PAGE_SQL = `SELECT max(p.txn)::text AS txn, (array_agg(p.n ORDER BY p.txn DESC, p.n DESC))[1]::text AS n
  FROM (SELECT e.txn, e.n FROM events e WHERE e.tenant_id = $1 AND (e.txn, e.n) > ($2::bigint, $3::bigint)
    ORDER BY e.txn, e.n LIMIT ${EVENTS_PER_STATEMENT}) p HAVING count(*) > 0`

/**
 * Drops the deleted field $2's value from the contacts the tenant's events hold, among the events after ($3, $4)
 * up to ($5, $6): a field defined again under the name must not find the old values in the feed.
 */
export const RECLAIM_EVENTS_SQL = `UPDATE events e SET contact = e.contact #- ARRAY['fields', $2::text]
  WHERE e.tenant_id = $1 AND (e.txn, e.n) > ($3::bigint, $4::bigint) AND (e.txn, e.n) <= ($5::bigint, $6::bigint)
    AND e.contact -> 'fields' ? $2
  RETURNING e.n`

/**
 * Forgets a deleted definition once no contact holds its value, a minute after the deletion at least (a write that
 * checked the definition just before it was deleted has committed by then), so that its name can be defined anew.
 */
export const FORGET_SQL = `DELETE FROM custom_fields f
  WHERE f.tenant_id = $1 AND f.name = $2 AND f.removed_at < now() - interval '1 minute'
    AND NOT EXISTS (SELECT 1 FROM contacts c WHERE c.tenant_id = $1 AND c.fields ? $2)
  RETURNING f.name`
