// The raw-SQL ceiling for the benchmarks (bench/run.ts), not part of the service: Fastify + `pg` with named
// (prepared) statements, API keys resolved from a Map loaded at start, no validation framework, no rate limit,
// no logger. It serves GET /api/v1/contacts/:id and GET /api/v1/contacts from the same database with the same
// SQL shapes as src/repositories/contacts.ts and answers with byte-identical JSON (bench/run.ts checks that).
//
//   DATABASE_URL=postgres://… PORT=3100 [DATABASE_POOL_SIZE=4] tsx bench/baseline.ts
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import pg from 'pg'
import { BEARER, hashApiKey } from '../src/api-key.ts'
import { UUID } from '../src/schemas/common.ts'

const EMAIL_STATUSES = ['active', 'unsubscribed', 'bounced', 'complained', 'suppressed', 'pending_review']
const STAGES = ['lead', 'prospect', 'customer', 'ex_customer']
/** ISO 8601 as the API's cursors carry it (rubrica accepts any RFC 3339 date-time; this ceiling needs less). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/

// The same SQL as src/repositories/contacts.ts (READ_COLUMNS, GET_SQL, listStatement), without its column aliases.
// Deliberately not shared with src/repositories: the ceiling is an independent implementation of the same reads.
const READ_COLUMNS = `c.id, c.email, c.first_name, c.last_name, c.phone, c.email_status, c.stage, c.source,
  c.consent_type, c.archived_at, c.acquired_at, c.created_at, c.updated_at,
  ARRAY(SELECT t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = c.id) AS tags`
const GET_SQL = `SELECT ${READ_COLUMNS} FROM contacts c WHERE c.tenant_id = $1 AND c.id = $2`

interface ListQuery {
  limit: number
  cursor?: string
  emailStatus?: string
  stage?: string
  includeArchived: boolean
}

function listStatement(query: ListQuery): { name: string; sql: string; params: unknown[] } {
  const conditions = ['c.tenant_id = $1']
  const params: unknown[] = []
  const flags: string[] = []
  const add = (flag: string, condition: string, value: unknown) => {
    params.push(value)
    conditions.push(condition.replace('?', `$${params.length + 1}`))
    flags.push(flag)
  }
  if (query.cursor !== undefined) add('cursor', 'c.created_at < ?', new Date(query.cursor))
  if (query.emailStatus !== undefined) add('status', 'c.email_status = ?::email_status', query.emailStatus)
  if (query.stage !== undefined) add('stage', 'c.stage = ?::stage', query.stage)
  if (!query.includeArchived) {
    conditions.push('c.archived_at IS NULL')
    flags.push('live')
  }
  params.push(query.limit + 1)
  const sql = `SELECT ${READ_COLUMNS} FROM contacts c WHERE ${conditions.join(' AND ')}
    ORDER BY c.created_at DESC LIMIT $${params.length + 1}`
  return { name: `baseline_list_${flags.join('_') || 'all'}`, sql, params }
}

interface Row {
  id: string
  email: string | null
  first_name: string | null
  last_name: string | null
  phone: string | null
  email_status: string
  stage: string
  source: string
  consent_type: string
  tags: string[]
  archived_at: Date | null
  acquired_at: Date
  created_at: Date
  updated_at: Date
}

/** Same fields in the same order as rubrica's Contact schema. */
function contact(row: Row) {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    phone: row.phone,
    emailStatus: row.email_status,
    stage: row.stage,
    source: row.source,
    consentType: row.consent_type,
    tags: [...row.tags].sort(),
    archivedAt: row.archived_at?.toISOString() ?? null,
    acquiredAt: row.acquired_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

// Response schemas serve fast-json-stringify (Fastify's serializer), as in rubrica; nothing validates them.
const nullableString = { type: ['string', 'null'] }
const contactSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    email: nullableString,
    firstName: nullableString,
    lastName: nullableString,
    phone: nullableString,
    emailStatus: { type: 'string' },
    stage: { type: 'string' },
    source: { type: 'string' },
    consentType: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    archivedAt: nullableString,
    acquiredAt: { type: 'string' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
}
const listSchema = {
  type: 'object',
  properties: { data: { type: 'array', items: contactSchema }, next: nullableString },
}

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) {
  console.error('baseline: DATABASE_URL is required')
  process.exit(1)
}
const port = Number(process.env.PORT ?? 3100)
const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.DATABASE_POOL_SIZE ?? 4) })
pool.on('error', () => {})

/** sha256(lower-cased key) -> tenant id, as src/api-key.ts hashApiKey stores it; loaded once. */
const tenantByKeyHash = new Map<string, string>()
const keyRows = await pool.query<{ key_hash: string; tenant_id: string }>(
  `SELECT k.key_hash, k.tenant_id FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
   WHERE k.revoked_at IS NULL AND t.status = 'active'`,
)
for (const row of keyRows.rows) tenantByKeyHash.set(row.key_hash.trim(), row.tenant_id)

function fail(reply: FastifyReply, status: number, code: string, message: string) {
  return reply.code(status).send({ error: { code, message } })
}

function tenantOf(request: FastifyRequest): string | undefined {
  const key = BEARER.exec(request.headers.authorization ?? '')?.[1]
  if (key === undefined) return undefined
  return tenantByKeyHash.get(hashApiKey(key))
}

function parseList(raw: Record<string, unknown>): ListQuery | string {
  const query: ListQuery = { limit: 50, includeArchived: false }
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'string') return name
    switch (name) {
      case 'limit':
        if (!/^[0-9]{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 200) return name
        query.limit = Number(value)
        break
      case 'cursor':
        if (!TIMESTAMP.test(value) || Number.isNaN(Date.parse(value))) return name
        query.cursor = value
        break
      case 'emailStatus':
        if (!EMAIL_STATUSES.includes(value)) return name
        query.emailStatus = value
        break
      case 'stage':
        if (!STAGES.includes(value)) return name
        query.stage = value
        break
      case 'includeArchived':
        if (value !== 'true' && value !== 'false') return name
        query.includeArchived = value === 'true'
        break
      default:
        return name
    }
  }
  return query
}

const app = Fastify({ logger: false })

app.get('/health', async () => ({ status: 'ok' }))

app.get<{ Params: { id: string } }>(
  '/api/v1/contacts/:id',
  { schema: { response: { 200: contactSchema } } },
  async (request, reply) => {
    const tenantId = tenantOf(request)
    if (tenantId === undefined) return fail(reply, 401, 'invalid_key', 'unknown or missing API key')
    if (!UUID.test(request.params.id)) return fail(reply, 404, 'not_found', 'contact not found')
    const { rows } = await pool.query<Row>({
      name: 'baseline_get',
      text: GET_SQL,
      values: [tenantId, request.params.id],
    })
    const row = rows[0]
    return row ? contact(row) : fail(reply, 404, 'not_found', 'contact not found')
  },
)

app.get('/api/v1/contacts', { schema: { response: { 200: listSchema } } }, async (request, reply) => {
  const tenantId = tenantOf(request)
  if (tenantId === undefined) return fail(reply, 401, 'invalid_key', 'unknown or missing API key')
  const query = parseList(request.query as Record<string, unknown>)
  if (typeof query === 'string') return fail(reply, 400, 'invalid_query', `invalid query parameter ${query}`)
  const statement = listStatement(query)
  const { rows } = await pool.query<Row>({
    name: statement.name,
    text: statement.sql,
    values: [tenantId, ...statement.params],
  })
  const page = rows.slice(0, query.limit)
  const last = page.at(-1)
  return {
    data: page.map(contact),
    next: rows.length > query.limit && last ? last.created_at.toISOString() : null,
  }
})

const close = async () => {
  await app.close()
  await pool.end()
  process.exit(0)
}
process.once('SIGTERM', close)
process.once('SIGINT', close)

await app.listen({ host: '127.0.0.1', port })
