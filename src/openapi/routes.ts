// The OpenAPI document as JSON and YAML. Like /docs, these routes need no key and are not rate limited.
import type { FastifyInstance } from 'fastify'

export default async function openapiDocument(fastify: FastifyInstance) {
  fastify.get('/openapi.json', { schema: { hide: true } }, async () => fastify.swagger())
  fastify.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(fastify.swagger({ yaml: true })),
  )
}
