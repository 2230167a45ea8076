// The OpenAPI 3.1 document, built by @fastify/swagger from the TypeBox route schemas: there is no hand-written copy.
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import fp from 'fastify-plugin'
import { ERROR_CODES } from '../../errors.js'

interface OpenApiParameter {
  in?: string
  required?: boolean
  schema?: { default?: unknown }
}

/** A query parameter that has a default may be left out: @fastify/swagger marks it required all the same. */
function optionalWhenDefaulted<Document extends object>(document: Document): Document {
  const paths = (document as { paths?: Record<string, Record<string, { parameters?: OpenApiParameter[] }>> }).paths
  for (const operations of Object.values(paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'query' && parameter.schema?.default !== undefined) parameter.required = false
      }
    }
  }
  return document
}

export const swaggerOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'rubrica',
      version: '1.0.0',
      description:
        'API REST dei contatti di un’organizzazione. Ogni chiave API appartiene a una sola organizzazione e ogni ' +
        'richiesta legge o scrive solo i suoi contatti. Tutti gli errori hanno la forma ' +
        '`{"error":{"code","message"}}` con un messaggio in italiano; codici possibili: ' +
        `${ERROR_CODES.join(', ')}. Limite: 60 richieste al minuto per organizzazione (intestazioni X-RateLimit-*).`,
    },
    servers: [{ url: '/', description: 'Questo server' }],
    tags: [{ name: 'contacts', description: 'Contatti dell’organizzazione della chiave' }],
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'svc_<48 hex>',
          description:
            'Chiave API nell’intestazione `Authorization: Bearer svc_…`. Ogni operazione indica lo scope ' +
            'richiesto (contacts:read o contacts:write); il ruolo viewer può solo leggere.',
        },
      },
    },
  },
  // Shared schemas keep their $id as the component name (Contact, ContactCreate, …), not def-0, def-1.
  refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  transformObject: (document) =>
    'openapiObject' in document ? optionalWhenDefaulted(document.openapiObject) : document.swaggerObject,
}

export default fp(
  async function openapi(fastify) {
    await fastify.register(swagger, swaggerOptions)
  },
  { name: 'swagger' },
)
