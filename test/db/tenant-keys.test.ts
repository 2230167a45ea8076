// The schema rule for a database that a distributed PostgreSQL (Citus) can shard by tenant: every table carries
// tenant_id, and its primary key and every unique key include it. Read from the migrated database's catalogue.
// The tables below predate the rule; each is listed with what breaks it, to be removed when it is reshaped.
import t from 'tap'
import { build } from '../helper.ts'

const EXCEPTIONS: Record<string, string> = {
  _prisma_migrations: "Prisma's own bookkeeping",
  tenants: 'the tenant itself: its id is the tenant id',
  api_keys: 'keys are found by their hash before the tenant is known (unique key_hash); primary key id',
  tags: 'primary key id (unique (tenant_id, name) follows the rule)',
  contacts: 'primary key id (the unique keys on (tenant_id, email_key) and (tenant_id, created_at) follow the rule)',
  contact_tags: 'no tenant_id column: primary key (contact_id, tag_id)',
}

interface KeyRow {
  table: string
  index: string
  columns: string[]
  hasTenant: boolean
}

t.test('every table but the listed ones has tenant_id in its primary key and in every unique key', async (t) => {
  const { app } = await build(t)
  const tables = await app.db.query<{ table: string; hasTenant: boolean }>(
    'catalogue_tables',
    `SELECT c.relname AS "table", EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid
       AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS "hasTenant"
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`,
    [],
  )
  const keys = await app.db.query<KeyRow>(
    'catalogue_keys',
    `SELECT c.relname AS "table", i.relname AS "index",
       ARRAY(SELECT a.attname::text FROM unnest(x.indkey) k JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k)
         AS columns,
       'tenant_id' = ANY(ARRAY(SELECT a.attname::text FROM unnest(x.indkey) k
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k)) AS "hasTenant"
     FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND (x.indisprimary OR x.indisunique) ORDER BY 1, 2`,
    [],
  )
  t.ok(tables.length >= 9, `${tables.length} tables read`)
  for (const { table, hasTenant } of tables) {
    if (table in EXCEPTIONS) continue
    t.ok(hasTenant, `${table} has a tenant_id column`)
    for (const key of keys.filter((row) => row.table === table)) {
      t.ok(key.hasTenant, `${table}.${key.index} (${key.columns.join(', ')}) includes tenant_id`)
    }
  }
  for (const table of Object.keys(EXCEPTIONS)) {
    t.ok(
      tables.some((row) => row.table === table),
      `the exception ${table} still exists (remove it from the list when it goes)`,
    )
  }
})
