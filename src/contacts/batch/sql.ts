// The batch import's SQL, built from how a Contact is stored (src/contacts/describe.ts), as the single writes' is.
// Items travel as one JSON array parameter ($2), each the item as validated, so that one prepared statement
// serves every batch whatever fields its items carry: `item ? 'field'` tells a field given from one left out.
// Every statement is one plain statement on one tenant's rows (no data-modifying CTE), so that a distributed
// PostgreSQL (Citus) runs each on the tenant's node alone, as one task.
import { REPLANNED, statementName } from '../../db/statement-name.js'
import { FEED_ANCHOR_SQL } from '../../db/tenant-anchor.js'
import { type ContactStorage, contact } from '../model.js'
import { selectListOf } from '../sql.js'

/** The items of `$2` (`i.item`), with their place (`i.n`, from 1). */
const ITEMS = 'jsonb_array_elements($2::jsonb) WITH ORDINALITY AS i(item, n)'
/** An item's key: its lower-cased email, as the per-tenant unique index has it. */
const KEY = "lower(i.item->>'email')"
/*
 * IDS: the joins of items with contacts (UPDATE, READ) are also given the ids of the contacts LOCK found (`$3`),
 * which the primary key answers alone, one entry each. Without them, a join planned from statistics older than an
 * import (or none: nothing had run ANALYZE, as on the embedded database) read every contact of the tenant to
 * match a thousand items: a tenant's own rows looked a small part of the table.
 */

const named = (prefix: string, sql: string) => ({ name: statementName(prefix, sql), sql })
/**
 * A statement that looks contacts up by an index other than the primary key (by email; the clock, by createdAt):
 * planned with its values at each execution, not from a plan cached on the connection, which, made while the
 * table was small, reads every contact of the tenant (for each item) once it is large (REPLANNED in
 * src/db/statement-name.ts). Planning costs a batch a few ms. (Not the whole transaction's plan_cache_mode: that
 * would plan the foreign keys' checks again for every row, half as much again on an import.)
 */
const replanned = (sql: string) => ({ name: REPLANNED, sql })

type BatchField = ContactStorage['batch'][number]

/** The value an item gives a field, typed (a list as given: the contacts' BEFORE trigger orders it, without repeats). */
const given = ({ field, stored }: BatchField) => {
  if (stored.list) return `ARRAY(SELECT jsonb_array_elements_text(i.item->'${field}'))`
  // An object as given, with its null members, which remove the contact's (a new contact stores none).
  if (stored.merges) return `(i.item->'${field}')`
  return `(i.item->>'${field}')${stored.cast}`
}

/**
 * Locks the contacts the items' emails name, in the order of their keys, so that two writers never wait on each
 * other in a circle; answers every item's place, the id of its contact (null: none, the item creates one), and the
 * bytes the contact's own fields' values would take with the item's merged in, as PostgreSQL writes them out
 * (`mergedBytes`, null when the item gives none): an item past the limit is refused alone, before the statement
 * whose trigger would refuse the whole batch. The UPDATE that follows then reads the contacts as they are, changed
 * by no one else meanwhile. Each item looks its contact up alone, in the order of the keys (the items sorted first;
 * OFFSET 0 keeps both the sort and the per-item lookup, which the planner would otherwise turn into a join that
 * reads all the tenant's contacts, their number misjudged while an import grows them).
 */
function lockStatement(storage: ContactStorage) {
  const merged = storage.batch.filter((spec) => spec.stored.merges)
  // As the contacts' BEFORE trigger counts them: the stored values as readers see them (none for a new contact),
  // the item's merged in.
  const bytes = merged.map(({ field, stored }) => {
    const current = stored.select ? stored.select(`c.${stored.column}`) : `c.${stored.column}`
    return `CASE WHEN k.item ? '${field}' THEN octet_length(jsonb_strip_nulls(COALESCE(${current}, '{}') || (k.item->'${field}'))::text) END`
  })
  const mergedBytes = bytes.length === 0 ? 'NULL::int' : bytes.length === 1 ? bytes[0] : `GREATEST(${bytes.join(', ')})`
  const columns = merged.map(({ stored }) => `, c.${stored.column}`).join('')
  return replanned(
    `SELECT k.n::int AS n, c.id, ${mergedBytes} AS "mergedBytes"
  FROM (SELECT i.n, ${KEY} AS key, i.item FROM ${ITEMS} ORDER BY 2 OFFSET 0) k
  LEFT JOIN LATERAL (SELECT c.id${columns} FROM contacts c WHERE c.tenant_id = $1 AND c.email_key = k.key
    OFFSET 0 FOR NO KEY UPDATE OF c) c ON true`,
  )
}

/**
 * The tenant's row in event_feeds, which the INSERT reads its tenant from: Citus runs an INSERT … SELECT on one
 * node, as one statement, when it selects from a table distributed as the target is.
 */
const ANCHOR = named('contacts_batch_anchor', FEED_ANCHOR_SQL)

/**
 * Where the new contacts' createdAt may start, in microseconds since 1970 (as text): the clock, or just past the
 * tenant's latest createdAt of the last second, whichever is later (a clock that counts milliseconds, as the
 * embedded database's does, would give two batches of one millisecond the same instants). The caller moves it past
 * the instants its instance's other batches of the tenant have taken and not yet committed (BatchRepository).
 * The last second is bounded by the statement's start, not the clock: a bound the index can take (the clock
 * changes while the statement runs, so PostgreSQL would filter every contact of the tenant by it instead); planned
 * each time, as a plan made while the table was small reads the tenant's contacts through the primary key.
 */
const CLOCK = replanned(
  `SELECT (extract(epoch FROM GREATEST(clock_timestamp(), (SELECT max(c.created_at) FROM contacts c
      WHERE c.tenant_id = $1 AND c.created_at > statement_timestamp() - interval '1 second') + interval '1 microsecond'))
      * 1000000)::bigint::text AS at`,
)

/**
 * The tags of the items that exist, held until the batch commits (FOR KEY SHARE), so that an item naming a tag
 * the tenant lacks is refused alone, and no tag found here is deleted before the rows that carry it are written.
 */
const KNOWN_TAGS = named(
  'contacts_batch_tags',
  'SELECT name FROM tags WHERE tenant_id = $1 AND name = ANY($2::text[]) FOR KEY SHARE',
)

/**
 * Sets the fields given and adds the tags named, on the contacts the items' emails name, and only where that
 * changes something: an item already true of its contact writes nothing (no version, no updatedAt, no event).
 * The items' values are read and cast in `x` (kept apart by OFFSET 0), so that the UPDATE itself calls no
 * function on a column (Citus runs an UPDATE on its nodes only then). `$3` holds the contacts' ids (see IDS). Answers the
 * contacts it changed, as written.
 */
function updateStatement(storage: ContactStorage) {
  const updatable = storage.batch.filter(({ field }) => field !== 'email')
  /** In `x`: whether the item gives the field, and its value. */
  const givenFlag = (spec: BatchField) => `has_${spec.stored.column}`
  const givenValue = (spec: BatchField) => `given_${spec.stored.column}`
  /** The value the UPDATE writes: the item's, added to the contact's list, or the contact's own. */
  const value = (spec: BatchField) => {
    if (spec.adds) return `c.${spec.stored.column} || x.${givenValue(spec)}`
    const column = `c.${spec.stored.column}`
    // An object's members merge into the contact's, a member given null removing it.
    const item = spec.stored.merges ? `jsonb_strip_nulls(${column} || x.${givenValue(spec)})` : `x.${givenValue(spec)}`
    return `CASE WHEN x.${givenFlag(spec)} THEN ${item} ELSE ${column} END`
  }
  /** Whether the UPDATE changes the field: a list only when the item adds a name the contact does not have. */
  const kept = updatable.filter((spec) => !spec.adds)
  const added = updatable.filter((spec) => spec.adds)
  return replanned(
    `UPDATE contacts c SET ${updatable.map((spec) => `${spec.stored.column} = ${value(spec)}`).join(', ')},
    updated_at = GREATEST(now(), c.updated_at)
  FROM (
    SELECT i.n::int AS n, ${KEY} AS key, ${updatable
      .map((spec) => `i.item ? '${spec.field}' AS ${givenFlag(spec)}, ${given(spec)} AS ${givenValue(spec)}`)
      .join(', ')}
    FROM ${ITEMS} OFFSET 0) x
  WHERE c.tenant_id = $1 AND c.email_key = x.key AND c.id = ANY($3::uuid[])
    AND ((${kept.map((spec) => `c.${spec.stored.column}`).join(', ')}, 0)
      IS DISTINCT FROM (${kept.map(value).join(', ')}, 0)${added
        .map((spec) => `\n      OR NOT (x.${givenValue(spec)} <@ c.${spec.stored.column})`)
        .join('')})
  RETURNING x.n, ${selectListOf(storage)('c', true)}, c.version`,
  )
}

/** A new contact's createdAt: `$3`, a microsecond more for each item before it. */
const CREATED_AT = '($3::timestamptz + make_interval(secs => (i.n - 1) / 1e6))'

/**
 * Creates the items whose email names no contact, with the ids given in the items. Rows go in in the order of
 * their keys, so that two transactions creating the same emails wait on each other in one order, never in a
 * circle; createdAt follows the items' order, a microsecond apart from `$3` (the contacts' triggers give the email
 * key, acquiredAt and updatedAt, record the events and link the tags, as for every write). An
 * item whose email's keyed hash (the item's `emailHash`; null without the instance's key, then any address) is an
 * erased address of the tenant is not created: read in this statement's snapshot, as the contacts it looks for are, so that an
 * erasure committing meanwhile is seen either way (its erased address, or its contact still there). An item
 * skipped by a unique key (its email created meanwhile by another transaction, or, rarely, its instant taken by
 * one) or by an erasure answers no row, for the caller to tell which. Answers each contact created with its key.
 * Each NOT EXISTS looks its item up alone (OFFSET 0, as in LOCK).
 */
function insertStatement(storage: ContactStorage) {
  const serverSet = storage.create.flatMap(({ stored, from }) =>
    'value' in from ? [{ column: stored.column, value: `'${from.value.replaceAll("'", "''")}'${stored.cast}` }] : [],
  )
  return replanned(
    `INSERT INTO contacts AS c (id, tenant_id, created_at, ${[
      ...storage.batch.map(({ stored }) => stored.column),
      ...serverSet.map(({ column }) => column),
    ].join(', ')})
  SELECT (i.item->>'id')::uuid, a.tenant_id, ${CREATED_AT},
    ${[
      ...storage.batch.map((spec) => {
        const value = spec.stored.merges ? `jsonb_strip_nulls(${given(spec)})` : given(spec)
        return spec.absent === null ? value : `COALESCE(${value}, '${spec.absent}'${spec.stored.cast})`
      }),
      ...serverSet.map(({ value }) => value),
    ].join(', ')}
  FROM event_feeds a CROSS JOIN ${ITEMS}
  WHERE a.tenant_id = $1
    AND NOT EXISTS (SELECT 1 FROM contacts e WHERE e.tenant_id = $1 AND e.email_key = ${KEY} OFFSET 0)
    AND NOT EXISTS (SELECT 1 FROM erased_emails x WHERE x.tenant_id = $1
      AND (i.item->>'emailHash' IS NULL OR x.email_hash = (i.item->>'emailHash')::bpchar) OFFSET 0)
  ORDER BY ${KEY}
  ON CONFLICT DO NOTHING
  RETURNING c.email_key AS key, ${selectListOf(storage)('c', true)}, c.version`,
  )
}

/** The batch import's statements for a way of storing a Contact (tests build them for a declaration of their own). */
export function batchStatements(storage: ContactStorage) {
  /** The contacts the items' emails name (their ids in `$3`, see IDS), as they are now: those found already as asked. */
  const READ = replanned(
    `SELECT i.n::int AS n, ${selectListOf(storage)('c')}, c.version
  FROM ${ITEMS} JOIN contacts c ON c.tenant_id = $1 AND c.email_key = ${KEY} AND c.id = ANY($3::uuid[])`,
  )
  return {
    KNOWN_TAGS,
    LOCK: lockStatement(storage),
    UPDATE: updateStatement(storage),
    READ,
    ANCHOR,
    CLOCK,
    INSERT: insertStatement(storage),
  }
}

export const batchSql = batchStatements(contact.storage)
