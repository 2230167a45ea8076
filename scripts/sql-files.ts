// The SQL the service sends, and the current text of the database's functions and triggers, as committed .sql
// files (npm run sql:write writes them; test/db/sql-files.test.ts fails while they and the code differ). The
// statements are built in TypeScript from declarations (a Contact's fields, a search's filters, a page's size);
// these files are where a reader greps for a column and where a change to a statement shows as a diff of SQL.
// A statement built per shape (a PATCH's fields, a search's filters) is written for the shapes listed here.
import { PGlite } from '@electric-sql/pglite'
import * as announcements from '../src/announcements/channel.ts'
import * as keys from '../src/auth/key-repository.ts'
import * as batch from '../src/contacts/batch/sql.ts'
import type { FieldDefinition, FieldType } from '../src/contacts/custom-fields/model.ts'
import * as customFields from '../src/contacts/custom-fields/sql.ts'
import * as erasedEmails from '../src/contacts/erased-emails.ts'
import { type ContactUpdate, contact } from '../src/contacts/model.ts'
import * as search from '../src/contacts/search/sql.ts'
import * as contacts from '../src/contacts/sql.ts'
import { PGLITE_EXTENSIONS } from '../src/db/database.ts'
import * as housekeeping from '../src/db/housekeeping.ts'
import { deployMigrations } from '../src/db/migrate.ts'
import { pgliteSession } from '../src/db/sql-session.ts'
import * as anchor from '../src/db/tenant-anchor.ts'
import * as events from '../src/events/sql.ts'
import * as health from '../src/health/routes.ts'
import * as idempotency from '../src/idempotency/repository.ts'
import * as privacy from '../src/privacy/sql.ts'
import * as webhooks from '../src/webhooks/sql.ts'

/** A statement as a file shows it: where it comes from, its text. */
interface Listed {
  name: string
  sql: string
}

const isSql = (value: string) => /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|SET)\b/i.test(value)

/** Every statement a module exports: its SQL strings and `{ sql }` objects, named by their path in the module. */
function exported(module: object, path = ''): Listed[] {
  return Object.entries(module).flatMap(([key, value]): Listed[] => {
    const name = path ? `${path}.${key}` : key
    if (typeof value === 'string') return isSql(value) ? [{ name, sql: value }] : []
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return []
    if (typeof (value as { sql?: unknown }).sql === 'string') return [{ name, sql: (value as { sql: string }).sql }]
    return exported(value, name)
  })
}

const NOW = '2026-01-01T00:00:00.000000Z'
const TENANT = '00000000-0000-0000-0000-000000000000'
const CONTACT = '00000000-0000-0000-0000-000000000001'

/** The shapes of a PATCH written out: each field alone, and one with If-Match (the text does not depend on values). */
function patchShapes(): Listed[] {
  const update = (patch: Record<string, unknown>, versions?: number[]) =>
    contacts.statements.updateStatement(TENANT, CONTACT, patch as ContactUpdate, versions).sql
  return [
    ...Object.keys(contact.storage.update).map((field) => ({
      name: `updateStatement({ ${field} })`,
      sql: update({ [field]: null }),
    })),
    { name: 'updateStatement({ stage }, If-Match)', sql: update({ stage: null }, [1]) },
  ]
}

/** The shapes of a search written out, for pages of 50 (the default): the list's own, a tag, several filters, words, a walk's end, a count. */
/** A definition of the tenant's own fields, for the shapes of searches by them. */
const definition = (name: string, type: FieldType): FieldDefinition => ({
  name,
  type,
  label: null,
  createdAt: NOW,
  updatedAt: NOW,
})

function searchShapes(): Listed[] {
  const none: search.SearchSpec = { groups: [], includeArchived: false, sort: '-createdAt' }
  const vip = { field: 'tags', op: 'hasAll', value: ['vip'] }
  const customer = { field: 'stage', op: 'eq', value: 'customer' }
  const lastHour = { field: 'updatedAt', op: 'gte', value: NOW }
  const after = { created: NOW, updated: NOW }
  const words = { ...none, query: 'rossi' }
  const rows = search.rowsFor(50)
  return [
    { name: 'pageStatement(every contact, first page)', sql: search.pageStatement(none, rows).sql },
    { name: 'pageStatement(every contact, after a position)', sql: search.pageStatement(none, rows, after).sql },
    {
      name: 'pageStatement(tags hasAll, stage eq; OR updatedAt gte; by -updatedAt, the walk begins)',
      sql: search.pageStatement(
        { ...none, groups: [[vip, customer], [lastHour]], sort: '-updatedAt' },
        rows,
        undefined,
        true,
      ).sql,
    },
    {
      name: 'pageStatement(fields.livello eq, fields.punti between, fields.interessi hasAny)',
      sql: search.pageStatement(
        {
          ...none,
          groups: [
            [
              { field: 'fields.livello', op: 'eq', value: 'oro', definition: definition('livello', 'enum') },
              { field: 'fields.punti', op: 'between', value: [1, 9], definition: definition('punti', 'number') },
              {
                field: 'fields.interessi',
                op: 'hasAny',
                value: ['vino'],
                definition: definition('interessi', 'multiEnum'),
              },
            ],
          ],
        },
        rows,
      ).sql,
    },
    { name: 'pageStatement(query "rossi")', sql: search.pageStatement(words, rows).sql },
    { name: 'wordsPageStatement(query "rossi")', sql: search.wordsPageStatement(words, rows).sql },
    {
      name: 'wordsPageStatement(query "rossi", after a position)',
      sql: search.wordsPageStatement(words, rows, after).sql,
    },
    { name: 'wordsReadAgainStatement(query "rossi")', sql: search.wordsReadAgainStatement(words).sql },
    {
      name: 'tagsPageStatement(tags hasAll, stage eq)',
      sql: search.tagsPageStatement({ ...none, groups: [[vip, customer]] }, rows).sql,
    },
    {
      name: 'tagsPageStatement(tags hasAll, stage eq, after a position)',
      sql: search.tagsPageStatement({ ...none, groups: [[vip, customer]] }, rows, after).sql,
    },
    {
      name: 'wordsReadAgainStatement(query "rossi", after a position)',
      sql: search.wordsReadAgainStatement(words, after).sql,
    },
    {
      name: 'changedStatement(tags hasAll)',
      sql: search.changedStatement({ ...none, groups: [[vip]], sort: '-updatedAt' }, rows, {
        bound: NOW,
        snapshot: '1:1:',
        node: '0',
      }).sql,
    },
    { name: 'countStatement(tags hasAll)', sql: search.countStatement({ ...none, groups: [[vip]] }).sql },
  ]
}

/** The shapes of a page of the feed written out: a page of the default 100 events (and one more, to tell whether more follow), with and without types. */
function feedShapes(): Listed[] {
  return [false, true].map((filtered) => ({
    name: `pageStatement(101 events${filtered ? ', of some types' : ''})`,
    sql: events.pageStatement(101, filtered).sql,
  }))
}

/** Each file: where it goes, what it is made from, its statements. */
function statementFiles(): { path: string; from: string; listed: Listed[] }[] {
  const { updateStatement: _, ...fixed } = contacts.statements
  return [
    {
      path: 'src/contacts/statements.sql',
      from: 'src/contacts/sql.ts, src/contacts/erased-emails.ts, src/db/tenant-anchor.ts',
      listed: [...exported(fixed), ...patchShapes(), ...exported(erasedEmails), ...exported(anchor)],
    },
    { path: 'src/contacts/batch/statements.sql', from: 'src/contacts/batch/sql.ts', listed: exported(batch.batchSql) },
    {
      path: 'src/contacts/custom-fields/statements.sql',
      from: 'src/contacts/custom-fields/sql.ts',
      listed: exported(customFields),
    },
    { path: 'src/contacts/search/statements.sql', from: 'src/contacts/search/sql.ts', listed: searchShapes() },
    { path: 'src/events/statements.sql', from: 'src/events/sql.ts', listed: [...exported(events), ...feedShapes()] },
    { path: 'src/webhooks/statements.sql', from: 'src/webhooks/sql.ts', listed: exported(webhooks) },
    { path: 'src/privacy/statements.sql', from: 'src/privacy/sql.ts', listed: exported(privacy) },
    { path: 'src/auth/statements.sql', from: 'src/auth/key-repository.ts', listed: exported(keys) },
    { path: 'src/idempotency/statements.sql', from: 'src/idempotency/repository.ts', listed: exported(idempotency) },
    { path: 'src/db/statements.sql', from: 'src/db/housekeeping.ts', listed: exported(housekeeping) },
    { path: 'src/announcements/statements.sql', from: 'src/announcements/channel.ts', listed: exported(announcements) },
    { path: 'src/health/statements.sql', from: 'src/health/routes.ts', listed: exported(health) },
  ]
}

const header = (what: string, from: string, change: string) =>
  `-- ${what}: written by \`npm run sql:write\` from ${from}.\n` +
  `-- Do not edit: ${change}, then write it again (test/db/sql-files.test.ts fails while the two differ).\n`

/** A statement as the files hold it: without blank lines around it or blanks at its lines' ends, then `;`. */
export const asListed = (sql: string) =>
  `${sql
    .trim()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')};`

/** The statements' files, by path. */
export function statementTexts(): Map<string, string> {
  return new Map(
    statementFiles().map(({ path, from, listed }) => [
      path,
      `${header('The statements the service sends', from, 'change the code')}${listed
        .map(({ name, sql }) => `\n-- ${name}\n${asListed(sql)}\n`)
        .join('')}`,
    ]),
  )
}

export const FUNCTIONS_FILE = 'prisma/functions.sql'

/** The functions and triggers of a database migrated from prisma/migrations, as PostgreSQL prints them. */
export async function functionsText(): Promise<string> {
  const client = await PGlite.create({ extensions: PGLITE_EXTENSIONS })
  try {
    await deployMigrations(pgliteSession(client))
    const functions = await client.query<{ name: string; text: string }>(
      `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS text FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
      ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)`,
    )
    const triggers = await client.query<{ name: string; text: string }>(
      `SELECT t.tgname AS name, pg_get_triggerdef(t.oid, true) AS text FROM pg_trigger t
      JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND NOT t.tgisinternal ORDER BY c.relname, t.tgname`,
    )
    return `${header("The database's functions and triggers as they are now", 'prisma/migrations, applied to an empty database', 'change them in a new migration')}${[
      ...functions.rows.map(({ text }) => `\n${asListed(text)}\n`),
      ...triggers.rows.map(({ text }) => `\n${asListed(text)}\n`),
    ].join('')}`
  } finally {
    await client.close()
  }
}
