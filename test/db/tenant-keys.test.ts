// The schema rule for a database that a distributed PostgreSQL (Citus) shards by tenant: every table carries
// tenant_id, and its primary key, every unique key and every foreign key include it; no foreign key cascades an
// update (Citus refuses it where the key holds the distribution column). Read from the migrated database's
// catalogue. On Citus, every table of the schema is distributed by tenant_id or a reference table.
import t from 'tap'
import { citusNodes } from '../database.ts'
import { build } from '../helper.ts'

const EXCEPTIONS: Record<string, string> = {
  _prisma_migrations: "Prisma's own bookkeeping",
  tenants: 'the tenant itself: its id is the tenant id',
}

interface KeyRow {
  table: string
  index: string
  columns: string[]
  hasTenant: boolean
}

interface ForeignKeyRow {
  table: string
  name: string
  columns: string[]
  onUpdate: string
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
       ARRAY(SELECT a.attname::text FROM unnest(x.indkey) WITH ORDINALITY k(num, pos)
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.num ORDER BY k.pos) AS columns,
       'tenant_id' = ANY(ARRAY(SELECT a.attname::text FROM unnest(x.indkey) k
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k)) AS "hasTenant"
     FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND (x.indisprimary OR x.indisunique) ORDER BY 1, 2`,
    [],
  )
  const foreignKeys = await app.db.query<ForeignKeyRow>(
    'catalogue_foreign_keys',
    `SELECT c.relname AS "table", k.conname AS name,
       ARRAY(SELECT a.attname::text FROM unnest(k.conkey) n JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = n)
         AS columns,
       k.confupdtype::text AS "onUpdate"
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND k.contype = 'f' ORDER BY 1, 2`,
    [],
  )
  t.ok(tables.length >= 12, `${tables.length} tables read`)
  t.ok(foreignKeys.length >= 12, `${foreignKeys.length} foreign keys read`)
  for (const { table, hasTenant } of tables) {
    if (table in EXCEPTIONS) continue
    t.ok(hasTenant, `${table} has a tenant_id column`)
    for (const key of keys.filter((row) => row.table === table)) {
      t.equal(key.columns[0], 'tenant_id', `${table}.${key.index} (${key.columns.join(', ')}) begins with tenant_id`)
    }
    for (const key of foreignKeys.filter((row) => row.table === table)) {
      t.ok(key.columns.includes('tenant_id'), `${table}.${key.name} (${key.columns.join(', ')}) includes tenant_id`)
    }
  }
  for (const key of foreignKeys) {
    // 'a': NO ACTION; 'r': RESTRICT. Never cascade, set null or set default on update.
    t.ok(['a', 'r'].includes(key.onUpdate), `${key.table}.${key.name} does not act on update (${key.onUpdate})`)
  }
  for (const table of Object.keys(EXCEPTIONS)) {
    t.ok(
      tables.some((row) => row.table === table),
      `the exception ${table} still exists (remove it from the list when it goes)`,
    )
  }

  if (citusNodes().length > 0) {
    const placed = await app.db.query<{ table: string; method: string; column: string | null }>(
      'citus_tables',
      `SELECT logicalrelid::text AS "table", partmethod::text AS method,
         column_to_column_name(logicalrelid, partkey) AS column
       FROM pg_dist_partition`,
      [],
    )
    const byTable = new Map(placed.map((row) => [row.table, row]))
    for (const { table } of tables) {
      if (table === '_prisma_migrations') continue
      const row = byTable.get(table)
      const reference = ['tenants', 'api_keys', 'webhooks'].includes(table)
      t.same(
        row && { method: row.method, column: row.column },
        reference ? { method: 'n', column: null } : { method: 'h', column: 'tenant_id' },
        `${table} is ${reference ? 'a reference table' : 'distributed by tenant_id'} on Citus`,
      )
    }
    const [groups] = await app.db.query<{ groups: number }>(
      'citus_colocation',
      "SELECT count(DISTINCT colocationid)::int AS groups FROM pg_dist_partition WHERE partmethod = 'h'",
      [],
    )
    t.equal(groups?.groups, 1, 'the distributed tables are co-located')
  }
})
