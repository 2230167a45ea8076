// The batch import's endpoint, POST /api/v1/contacts/batch. Thin: the route validates the batch's shape and the
// repository each item (so that a bad item fails alone), authorization reads the route's config, and an
// Idempotency-Key runs it once (src/idempotency/).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { tenantOf } from '../../auth/authorization.js'
import type { Query } from '../../db/database.js'
import { answerOnce } from '../../idempotency/plugin.js'
import { compileValidator } from '../../plugins/app/validation.js'
import { BATCH_ANSWER_BYTES, BATCH_BODY_LIMIT, BatchShapeSchema } from './model.js'
import { importContacts } from './operations.js'
import { BatchRepository } from './repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    batches: BatchRepository
  }
}

/** The repository on the app, for the route (and tests that hold a batch back inside it). */
export const batchRepository = fp(
  async function batchRepository(fastify) {
    fastify.decorate('batches', new BatchRepository(fastify.db))
  },
  { name: 'batch-repository', dependencies: ['database'] },
)

const batch: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/',
    {
      config: { scopes: ['contacts:write'], access: 'write' },
      schema: importContacts,
      bodyLimit: BATCH_BODY_LIMIT,
      // The document shows each item as a BatchItem; the route checks the batch's shape only.
      validatorCompiler: ({ schema, httpPart }) =>
        compileValidator({ schema: httpPart === 'body' ? BatchShapeSchema : schema, httpPart }),
    },
    async (request, reply) =>
      answerOnce(
        request,
        reply,
        async (query?: Query) => {
          const response = await fastify.batches.upsert(tenantOf(request), request.body.contacts, query)
          return { status: 200, headers: {}, body: String(reply.serializeInput(response, '200', 'application/json')) }
        },
        BATCH_ANSWER_BYTES,
      ),
  )
}

export default batch
