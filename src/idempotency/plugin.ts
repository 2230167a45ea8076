// Safe retries of POST: a request carrying an Idempotency-Key is executed once per key and tenant; a retry with
// the same key and the same body gets the first answer again (status, body, Location, ETag) with
// `Idempotent-Replayed: true`; the same key with another body is 422 idempotency_key_reused; while the first is
// still running, 409 idempotency_key_in_use. Only the answer of an execution that wrote is kept: a refusal,
// before the execution (authentication, rate limit, validation) or by it (unknown_tag, conflict, thrown by the
// execution), changed nothing, so it stores nothing and its retry executes again, as Stripe does; a server
// failure rolls the whole attempt back too. Keys are kept 24 hours, purged every ten minutes. See src/idempotency/repository.ts for
// how one transaction makes this hold under races and crashes, and what a key costs.
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { tenantOf } from '../auth/authorization.js'
import type { Query } from '../db/database.js'
import { purgeEachTenant, schedulePurge } from '../db/housekeeping.js'
import { errors } from '../errors/catalogue.js'
import { isRepeated } from '../http-headers.js'
import { idempotencyKeys, PURGE_SQL, type StoredAnswer } from './repository.js'

export interface Answer extends StoredAnswer {
  /** True when the answer is a stored one, given again. */
  replayed: boolean
}

export interface Idempotency {
  /**
   * Runs `execute` once for this tenant's key and request, inside the key's transaction (its statements go
   * through the `query` it is given); a retry gets the stored answer. `execute` answers what it wrote, and throws
   * what it refuses: a refusal is not stored. `maxAnswerBytes`: the largest answer the route can give.
   */
  once(
    tenantId: string,
    key: string,
    request: unknown,
    execute: (query: Query) => Promise<StoredAnswer>,
    maxAnswerBytes?: number,
  ): Promise<Answer>
}

declare module 'fastify' {
  interface FastifyInstance {
    idempotency: Idempotency
  }
}

/** A piece of canonical JSON already written, between the values still to write. */
class Written {
  constructor(readonly text: string) {}
}

/**
 * JSON with object keys sorted: the same request, whatever order its fields came in, hashes the same. Written
 * with a stack of its own, not by recursion: a batch hashes its items before checking them, and an item nested
 * ten thousand levels deep must not overflow the call stack.
 */
function canonical(root: unknown): string {
  const out: string[] = []
  const pending: unknown[] = [root]
  while (pending.length > 0) {
    const value = pending.pop()
    if (value instanceof Written) {
      out.push(value.text)
    } else if (Array.isArray(value)) {
      out.push('[')
      pending.push(new Written(']'))
      for (let i = value.length - 1; i >= 0; i--) pending.push(value[i], ...(i > 0 ? [new Written(',')] : []))
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      out.push('{')
      pending.push(new Written('}'))
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i] as [string, unknown]
        pending.push(member, new Written(`${i > 0 ? ',' : ''}${JSON.stringify(key)}:`))
      }
    } else {
      out.push(JSON.stringify(value))
    }
  }
  return out.join('')
}

/**
 * Answers a POST whose route takes an `Idempotency-Key`: without the header, `execute` runs as is (its statements
 * through the pool); with it, once per tenant and key (Idempotency.once), a replay marked
 * `Idempotent-Replayed: true`. A repeated header is refused, since which one counts would be a guess.
 */
export async function answerOnce(
  request: FastifyRequest,
  reply: FastifyReply,
  execute: (query?: Query) => Promise<StoredAnswer>,
  maxAnswerBytes?: number,
) {
  if (isRepeated(request.raw.rawHeaders, 'idempotency-key')) throw errors.repeatedIdempotencyKey()
  // Spaces and tabs around the value are not part of the key (HTTP takes them off; an injected request keeps them).
  const given = request.headers['idempotency-key']
  const answer: StoredAnswer & { replayed?: boolean } =
    typeof given === 'string'
      ? await request.server.idempotency.once(
          tenantOf(request),
          given.replace(/^[ \t]+|[ \t]+$/g, ''),
          request.body,
          execute,
          maxAnswerBytes,
        )
      : await execute()
  if (answer.replayed) reply.header('idempotent-replayed', 'true')
  return reply.code(answer.status).headers(answer.headers).type('application/json; charset=utf-8').send(answer.body)
}

export default fp(
  async function idempotency(fastify) {
    const db = fastify.db
    schedulePurge(fastify, 'idempotency keys', () => purgeEachTenant(db, 'idempotency_purge', PURGE_SQL, []))

    fastify.decorate('idempotency', {
      once: (tenantId, key, request, execute, maxAnswerBytes) =>
        db.transaction(async (query) => {
          const hash = createHash('sha256').update(canonical(request)).digest('hex')
          if (!(await idempotencyKeys.lock(query, tenantId, key))) throw errors.idempotencyKeyInUse()
          const stored = await idempotencyKeys.find(query, tenantId, key)
          if (stored && stored.requestHash !== hash) throw errors.idempotencyKeyReused()
          if (stored) return { ...stored.answer, replayed: true }
          const answer = await execute(query)
          await idempotencyKeys.store(query, tenantId, key, hash, answer, maxAnswerBytes)
          return { ...answer, replayed: false }
        }),
    } satisfies Idempotency)
  },
  { name: 'idempotency', dependencies: ['database'] },
)
