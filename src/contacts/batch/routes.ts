// The batch import's endpoint, POST /api/v1/contacts/batch. Thin: the route validates the batch's shape and the
// repository each item (so that a bad item fails alone), authorization reads the route's config, admission bounds
// what batches hold at once (admission.ts), and an Idempotency-Key runs it once (src/idempotency/).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { tenantOf } from '../../auth/authorization.js'
import type { Query } from '../../db/database.js'
import { retryRolledBack } from '../../db/deadlock.js'
import { errors } from '../../errors/catalogue.js'
import { answerOnce } from '../../idempotency/plugin.js'
import { fieldsRefusalOf } from '../repository.js'
import type { Ticket } from './admission.js'
import { BATCH_ANSWER_BYTES, BATCH_BODY_LIMIT, BatchShapeSchema } from './model.js'
import { importContacts } from './route-schemas.js'

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
        fastify.compileValidator({ schema: httpPart === 'body' ? BatchShapeSchema : schema, httpPart }),
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
      // Batches of two instances that race on the same emails can deadlock (an item whose create lost the race
      // is locked in a second round, out of the emails' order): the victim rolled back whole and runs again, as
      // does a batch refused a contact that a later transaction changed first (src/db/deadlock.ts). On one
      // instance, a tenant's batches naming the same emails take turns (inTurn).
      const run = fastify.batchAdmission.inTurn(
        tenantOf(request),
        () =>
          retryRolledBack(() =>
            answerOnce(
              request,
              reply,
              async (query?: Query) => {
                const response = await fastify.batches.upsert(tenantOf(request), request.body.contacts, query)
                return {
                  status: 200,
                  headers: {},
                  body: String(reply.serializeInput(response, '200', 'application/json')),
                  contactIds: response.results.flatMap((result) => (result.contact ? [result.contact.id] : [])),
                }
              },
              BATCH_ANSWER_BYTES,
            ),
          ),
        emailKeysOf(request.body.contacts),
      )
      const checked = run.catch(asFieldsRefusal)
      return tickets.get(request)?.during(checked) ?? checked
    },
  )
}

/** A value the contacts trigger refused though the items passed their checks (a field deleted meanwhile). */
function asFieldsRefusal(error: unknown): never {
  throw fieldsRefusalOf(error) ?? error
}

/** The email keys (lower-cased) of the items that give an email, valid or not: the contacts a batch may write. */
function emailKeysOf(items: readonly unknown[]): Set<string> {
  const keys = new Set<string>()
  for (const item of items) {
    if (typeof item === 'object' && item !== null && 'email' in item && typeof item.email === 'string') {
      keys.add(item.email.toLowerCase())
    }
  }
  return keys
}

export default batch
