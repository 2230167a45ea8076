// The batch import's endpoint, POST /api/v1/contacts/batch. Thin: the route validates the batch's shape and the
// repository each item (so that a bad item fails alone), authorization reads the route's config, admission bounds
// what batches hold at once (admission.ts), and an Idempotency-Key runs it once (src/idempotency/).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { tenantOf } from '../../auth/authorization.js'
import type { Config } from '../../config/config.js'
import type { Database, Query } from '../../db/database.js'
import { errors } from '../../errors/catalogue.js'
import { answerOnce } from '../../idempotency/plugin.js'
import { compileValidator } from '../../plugins/app/validation.js'
import { BatchAdmission, type Ticket } from './admission.js'
import { BATCH_ANSWER_BYTES, BATCH_BODY_LIMIT, BatchShapeSchema } from './model.js'
import { importContacts } from './operations.js'
import { BatchRepository } from './repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    batches: BatchRepository
    batchAdmission: BatchAdmission
  }
}

/**
 * Batches that write at once: BATCH_CONCURRENCY, and on PostgreSQL one connection fewer than the pool (at least
 * one), so that other requests always find one. The embedded database runs one transaction at a time anyway.
 */
export function batchWriters(config: Pick<Config, 'BATCH_CONCURRENCY' | 'DATABASE_POOL_SIZE'>, db: Database): number {
  if (db.kind === 'pglite') return config.BATCH_CONCURRENCY
  return Math.max(1, Math.min(config.BATCH_CONCURRENCY, config.DATABASE_POOL_SIZE - 1))
}

/** The least a batch counts for in the admission budget, as a fraction of the body limit (see admission.ts). */
const MINIMUM_SHARE = 16

/** The repository and the admission on the app, for the route (and tests that look inside them). */
export const batchRepository = fp(
  async function batchRepository(fastify) {
    fastify.decorate('batches', new BatchRepository(fastify.db, fastify.erasedEmails))
    fastify.decorate(
      'batchAdmission',
      new BatchAdmission({
        budgetBytes: fastify.config.BATCH_CONCURRENCY * BATCH_BODY_LIMIT,
        // Rounded down, so that a tenant's share holds MINIMUM_SHARE small batches.
        minimumBytes: Math.floor(BATCH_BODY_LIMIT / MINIMUM_SHARE),
        bodyLimit: BATCH_BODY_LIMIT,
        writers: batchWriters(fastify.config, fastify.db),
      }),
    )
  },
  { name: 'batch-repository', dependencies: ['database', 'erased-emails'] },
)

/** The Content-Length of the request, when it declares one. */
function declaredLength(request: FastifyRequest): number | undefined {
  const header = request.headers['content-length']
  return header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined
}

const batch: FastifyPluginAsyncTypebox = async (fastify) => {
  const tickets = new WeakMap<FastifyRequest, Ticket>()
  fastify.post(
    '/',
    {
      config: { scopes: ['contacts:write'], access: 'write' },
      schema: importContacts,
      bodyLimit: BATCH_BODY_LIMIT,
      // The document shows each item as a BatchItem; the route checks the batch's shape only.
      validatorCompiler: ({ schema, httpPart }) =>
        compileValidator({ schema: httpPart === 'body' ? BatchShapeSchema : schema, httpPart }),
      // After authorization (the scope's own preParsing hook), before a byte of the body is read.
      preParsing: (request, reply, payload, done) => {
        const ticket = fastify.batchAdmission.admit(tenantOf(request), declaredLength(request))
        if (typeof ticket === 'string') {
          const retryAfter = fastify.batchAdmission.retryAfterSeconds()
          reply.header('retry-after', retryAfter)
          const busy = ticket === 'tenant full' ? errors.tenantBatchesBusy : errors.serverBusy
          done(busy(retryAfter), payload)
          return
        }
        tickets.set(request, ticket)
        // 'close' comes once the answer is written or the connection is gone, whatever the answer was.
        reply.raw.once('close', ticket.closed)
        done(null, payload)
      },
    },
    async (request, reply) => {
      const run = fastify.batchAdmission.inTurn(tenantOf(request), () =>
        answerOnce(
          request,
          reply,
          async (query?: Query) => {
            const response = await fastify.batches.upsert(tenantOf(request), request.body.contacts, query)
            return {
              status: 200,
              headers: {},
              body: String(reply.serializeInput(response, '200', 'application/json')),
            }
          },
          BATCH_ANSWER_BYTES,
        ),
      )
      return tickets.get(request)?.during(run) ?? run
    },
  )
}

export default batch
