// The batch import's SQL, built from how a Contact is stored (src/contacts/model.ts), as the single writes' is.
// Items travel as one JSON array parameter ($2), each the item as validated, so that one prepared statement
// serves every batch whatever fields its items carry: `item ? 'field'` tells a field given from one left out.
// A row answered carries `n`, the item's place (from 1) in the array it came in.
import { statementName } from '../../db/statement-name.js'
import { type ContactStorage, contact } from '../model.js'
import { selectListOf } from '../sql.js'

/** The items of `$2` with their place and their key (the lower-cased email, as the per-tenant index has it). */
const ITEMS = `items AS (
    SELECT i.item, i.n::int AS n, lower(i.item->>'email') AS key
    FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS i(item, n))`

/** The tenant's tags an item names (the item `i`), as rows of `tags t`. */
const ITEM_TAGS = `tags t WHERE t.tenant_id = $1 AND t.name IN (SELECT jsonb_array_elements_text(i.item->'tags'))`

const named = (prefix: string, sql: string) => ({ name: statementName(prefix, sql), sql })

export function batchStatements(storage: ContactStorage) {
  const selectList = selectListOf(storage)
  const given = ({ field, stored }: ContactStorage['batch'][number]) => `(i.item->>'${field}')${stored.cast}`
  const updatable = storage.batch.filter(({ field }) => field !== 'email')
  const serverSet = storage.create.flatMap(({ stored, from }) =>
    'value' in from ? [{ column: stored.column, value: `'${from.value.replaceAll("'", "''")}'${stored.cast}` }] : [],
  )

  /**
   * Creates the items whose email names no contact, in the items' order, with their tags. created_at is each
   * row's clock_timestamp(), distinct from row to row, so the trigger that keeps it unique rarely moves one; a NULL
   * acquired_at follows it. An email taken meanwhile by another transaction is skipped (ON CONFLICT), for the
   * update that follows to find.
   */
  const INSERT = named(
    'contacts_batch_insert',
    `WITH ${ITEMS},
  inserted AS (
    INSERT INTO contacts (id, tenant_id, created_at, acquired_at, ${[
      ...storage.batch.map(({ stored }) => stored.column),
      ...serverSet.map(({ column }) => column),
    ].join(', ')})
    SELECT gen_random_uuid(), $1, clock_timestamp(), NULL, ${[
      ...storage.batch.map((spec) =>
        spec.absent === null ? given(spec) : `COALESCE(${given(spec)}, '${spec.absent}'${spec.stored.cast})`,
      ),
      ...serverSet.map(({ value }) => value),
    ].join(', ')}
    FROM items i
    WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.tenant_id = $1 AND c.email_key = i.key)
    ORDER BY i.n
    ON CONFLICT (tenant_id, email_key) DO NOTHING
    RETURNING *),
  linked AS (
    INSERT INTO contact_tags (contact_id, tag_id)
    SELECT c.id, t.id FROM inserted c JOIN items i ON i.key = c.email_key, ${ITEM_TAGS})
  SELECT i.n, ${selectList('c', `ARRAY(SELECT t.name FROM ${ITEM_TAGS} ORDER BY t.name COLLATE "C")`)}, c.version
  FROM inserted c JOIN items i ON i.key = c.email_key`,
  )

  const value = (spec: ContactStorage['batch'][number]) =>
    `CASE WHEN i.item ? '${spec.field}' THEN ${given(spec)} ELSE c.${spec.stored.column} END`

  /**
   * Sets the fields given and adds the tags named, on the contacts the items' emails name, and only where that
   * changes something: an item already true of its contact writes nothing (no version, no updatedAt, no event).
   * The rows are locked first in the order of their keys, so that two batches never wait on each other in a
   * circle. The answer's tags are the contact's and the added ones (the statement does not see its own links).
   * updated_at moves forward at least a microsecond: an item that only adds tags sets every column as it was,
   * and when a write committed since this transaction's now() the row would be left identical, so its version
   * (the ETag, moved by a trigger only when the row changes) would not move with the tags.
   */
  const UPDATE = named(
    'contacts_batch_update',
    `WITH ${ITEMS},
  targets AS MATERIALIZED (
    SELECT c.id, i.item FROM items i JOIN contacts c ON c.tenant_id = $1 AND c.email_key = i.key
    ORDER BY c.email_key FOR NO KEY UPDATE OF c),
  added AS (
    SELECT x.id AS contact_id, t.id AS tag_id FROM targets x CROSS JOIN LATERAL (
      SELECT t.id FROM tags t WHERE t.tenant_id = $1 AND t.name IN (SELECT jsonb_array_elements_text(x.item->'tags'))
        AND NOT EXISTS (SELECT 1 FROM contact_tags ct WHERE ct.contact_id = x.id AND ct.tag_id = t.id)) t),
  linked AS (INSERT INTO contact_tags (contact_id, tag_id) SELECT contact_id, tag_id FROM added ON CONFLICT DO NOTHING),
  updated AS (
    UPDATE contacts c SET ${updatable.map((spec) => `${spec.stored.column} = ${value(spec)}`).join(', ')},
      updated_at = GREATEST(now(), c.updated_at + interval '1 microsecond')
    FROM targets i
    WHERE c.id = i.id AND c.tenant_id = $1
      AND ((${updatable.map((spec) => `c.${spec.stored.column}`).join(', ')}, 0)
        IS DISTINCT FROM (${updatable.map(value).join(', ')}, 0)
        OR c.id IN (SELECT contact_id FROM added))
    RETURNING c.*)
  SELECT i.n, ${selectList(
    'c',
    `ARRAY(SELECT u.name FROM (SELECT t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id
      WHERE ct.contact_id = c.id UNION SELECT t.name FROM ${ITEM_TAGS}) u ORDER BY u.name COLLATE "C")`,
  )}, c.version
  FROM updated c JOIN items i ON i.key = c.email_key`,
  )

  /** The contacts the items' emails name, as they are: for the items that changed nothing. */
  const READ = named(
    'contacts_batch_read',
    `WITH ${ITEMS}
  SELECT i.n, ${selectList(
    'c',
    `ARRAY(SELECT t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = c.id
      ORDER BY t.name COLLATE "C")`,
  )}, c.version
  FROM items i JOIN contacts c ON c.tenant_id = $1 AND c.email_key = i.key`,
  )

  /**
   * The tenant's lock on creating contacts, the one the insert trigger takes (contacts_before_write), taken first:
   * every writer then takes its locks in one order (this lock, contact rows, the tenant's event counter), so a
   * batch and a PATCH or another batch never wait on each other in a circle.
   */
  const TENANT_LOCK = named(
    'contacts_batch_lock',
    "SELECT pg_advisory_xact_lock(hashtextextended('rubrica.contacts.created_at:' || $1::text, 0))::text AS locked",
  )

  /** Which of the emails `$2` name a contact of the tenant (without regard to case), as they were given. */
  const EXISTING = named(
    'contacts_batch_existing',
    `SELECT e.email FROM unnest($2::text[]) AS e(email)
  WHERE EXISTS (SELECT 1 FROM contacts c WHERE c.tenant_id = $1 AND c.email_key = lower(e.email))`,
  )

  /** Which of the names `$2` are tags of the tenant. */
  const KNOWN_TAGS = named(
    'contacts_batch_tags',
    'SELECT name FROM tags WHERE tenant_id = $1 AND name = ANY($2::text[])',
  )

  return { TENANT_LOCK, EXISTING, INSERT, UPDATE, READ, KNOWN_TAGS }
}

export const batchSql = batchStatements(contact.storage)
