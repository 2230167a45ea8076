// The ceiling of the benchmarks (bench/run.ts), not part of the service: the fastest honest implementation of
// rubrica's four contacts endpoints that we know how to write. Fastify + `pg` with named (prepared) statements,
// API keys resolved from a Map loaded at start, input checked by hand, no rate limit, no logger, no ETags or
// Idempotency-Key; every request is one statement and one round trip (a refused POST two), and the rows come
// from PostgreSQL already shaped as the API's JSON (bench/baseline-sql.ts), sent as they are. Its bodies are
// byte-identical to rubrica's for reads, and alike apart from ids and timestamps for writes (bench/answers.ts).
//
//   DATABASE_URL=postgres://… PORT=3100 [DATABASE_POOL_SIZE=4] tsx bench/baseline.ts
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import pg from 'pg'
import { BEARER, hashApiKey } from '../src/auth/api-key.ts'
import { ApiError, errors } from '../src/errors/catalogue.ts'
import { UUID } from '../src/schemas/common.ts'
import { type NewContact, parseCreate, parseList, parsePatch } from './baseline-input.ts'
import {
  CREATE,
  CREATE_REFUSED,
  createValues,
  GET,
  listStatement,
  type Prepared,
  updateStatement,
} from './baseline-sql.ts'

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) {
  console.error('baseline: DATABASE_URL is required')
  process.exit(1)
}
const port = Number(process.env.PORT ?? 3100)
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 4)
// Connections stay open once opened (min = max), as rubrica's do: none is closed while a target waits its turn.
const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, min: poolSize })
pool.on('error', () => {})

/** A row of the statements: a Contact, whose id the POST's Location needs. */
type ContactRow = { id: string } & Record<string, unknown>

async function run(statement: Prepared, values: unknown[]): Promise<ContactRow | undefined> {
  const { rows } = await pool.query<ContactRow>({ name: statement.name, text: statement.text, values })
  return rows[0]
}

/** sha256(lower-cased key) -> tenant id, as src/auth/api-key.ts hashApiKey stores it; loaded once. */
const tenantByKeyHash = new Map<string, string>()
const keyRows = await pool.query<{ key_hash: string; tenant_id: string }>(
  `SELECT k.key_hash, k.tenant_id FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
   WHERE k.revoked_at IS NULL AND t.status = 'active'`,
)
for (const row of keyRows.rows) tenantByKeyHash.set(row.key_hash.trim(), row.tenant_id)

function tenantOf(request: FastifyRequest): string | undefined {
  const key = BEARER.exec(request.headers.authorization ?? '')?.[1]
  if (key === undefined) return undefined
  return tenantByKeyHash.get(hashApiKey(key))
}

/** rubrica's error bodies, so that refusals compare too. */
function refuse(reply: FastifyReply, error: ApiError) {
  return reply.code(error.statusCode).send(error.toBody())
}

const invalid = (where: 'invalid_query' | 'invalid_body', name: string) =>
  new ApiError(where, `invalid ${where === 'invalid_query' ? 'query parameter' : 'field'} ${name}`)

/**
 * After CREATE inserted nothing: an unknown tag, or the contact that has the email; null when neither, that is,
 * another session took the same `createdAt` instant (the unique key skips the row), and the create is tried again,
 * as rubrica does (decision 0005).
 */
async function refusedCreate(tenantId: string, contact: NewContact): Promise<ApiError | null> {
  const { rows } = await pool.query<{ known: string[]; id: string | null; status: string | null }>({
    name: CREATE_REFUSED.name,
    text: CREATE_REFUSED.text,
    values: [tenantId, contact.email, contact.tags],
  })
  const found = rows[0]
  const known = new Set(found?.known)
  const unknown = contact.tags.filter((tag) => !known.has(tag))
  if (unknown.length > 0) return errors.unknownTags(unknown)
  if (found?.id && found.status) return errors.conflict({ id: found.id, status: found.status })
  return null
}

/** Tries CREATE up to rubrica's 5 times while only an instant taken by another session stops it. */
async function create(tenantId: string, contact: NewContact): Promise<ContactRow | ApiError> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const created = await run(CREATE, [tenantId, ...createValues(contact)]).catch((error: unknown) => {
      // The contacts trigger refuses a tag the tenant does not have (SQLSTATE RB001): refusedCreate names it.
      if ((error as { code?: unknown }).code === 'RB001') return undefined
      throw error
    })
    if (created !== undefined) return created
    const refused = await refusedCreate(tenantId, contact)
    if (refused !== null) return refused
  }
  throw new Error('the create inserted nothing 5 times, with every tag known and the email free')
}

const app = Fastify({ logger: false })

app.get('/health', async () => ({ status: 'ok' }))

app.get<{ Params: { id: string } }>('/api/v1/contacts/:id', async (request, reply) => {
  const tenantId = tenantOf(request)
  if (tenantId === undefined) return refuse(reply, errors.invalidKey())
  if (!UUID.test(request.params.id)) return refuse(reply, errors.notFound())
  return (await run(GET, [tenantId, request.params.id])) ?? refuse(reply, errors.notFound())
})

app.get('/api/v1/contacts', async (request, reply) => {
  const tenantId = tenantOf(request)
  if (tenantId === undefined) return refuse(reply, errors.invalidKey())
  const query = parseList(request.query as Record<string, unknown>)
  if (typeof query === 'string') return refuse(reply, invalid('invalid_query', query))
  const statement = listStatement(query)
  const { rows } = await pool.query<ContactRow & { cursor: string }>({
    name: statement.name,
    text: statement.text,
    values: [tenantId, ...statement.params],
  })
  const more = rows.length > query.limit
  if (more) rows.length = query.limit
  const next = more ? (rows.at(-1)?.cursor ?? null) : null
  return { data: rows.map(({ cursor: _cursor, ...contact }) => contact), next }
})

app.post('/api/v1/contacts', async (request, reply) => {
  const tenantId = tenantOf(request)
  if (tenantId === undefined) return refuse(reply, errors.invalidKey())
  const contact = parseCreate(request.body)
  if (typeof contact === 'string') return refuse(reply, invalid('invalid_body', contact))
  const created = await create(tenantId, contact)
  if (created instanceof ApiError) return refuse(reply, created)
  return reply.code(201).header('location', `/api/v1/contacts/${created.id}`).send(created)
})

app.patch<{ Params: { id: string } }>('/api/v1/contacts/:id', async (request, reply) => {
  const tenantId = tenantOf(request)
  if (tenantId === undefined) return refuse(reply, errors.invalidKey())
  if (!UUID.test(request.params.id)) return refuse(reply, errors.notFound())
  const patch = parsePatch(request.body)
  if (typeof patch === 'string') return refuse(reply, invalid('invalid_body', patch))
  // `{}` changes nothing: the contact as it is.
  const statement = patch.fields.length === 0 ? GET : updateStatement(patch.fields)
  const updated = await run(statement, [tenantId, request.params.id, ...patch.values])
  return updated ?? refuse(reply, errors.notFound())
})

const close = async () => {
  await app.close()
  await pool.end()
  process.exit(0)
}
process.once('SIGTERM', close)
process.once('SIGINT', close)

await app.listen({ host: '127.0.0.1', port })
