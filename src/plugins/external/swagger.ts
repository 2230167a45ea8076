// The OpenAPI 3.1 document, built by @fastify/swagger from the TypeBox route schemas: there is no hand-written copy.
// A few things the route schemas cannot say are set on the built document: response headers' `required` and
// `example`, and query parameters with a default being optional.
import { createRequire } from 'node:module'
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import fp from 'fastify-plugin'
import { SCOPES } from '../../auth/api-key.js'
import type { Config } from '../../config/config.js'
import type { OpenApiSections } from '../../openapi/sections.js'

/** src/ and dist/ both sit at the same depth below the package. */
const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string }

interface OpenApiParameter {
  in?: string
  required?: boolean
  schema?: { default?: unknown }
}

interface OpenApiHeader {
  schema: Record<string, unknown>
  required?: boolean
  example?: unknown
}

interface OpenApiOperation {
  parameters?: OpenApiParameter[]
  responses?: Record<string, { headers?: Record<string, OpenApiHeader> }>
}

type Paths = Record<string, Record<string, OpenApiOperation>>

function operationsOf(document: object): OpenApiOperation[] {
  const paths = (document as { paths?: Paths }).paths ?? {}
  return Object.values(paths).flatMap((operations) => Object.values(operations))
}

/**
 * A query parameter with a default may be left out (@fastify/swagger marks it required all the same); a response
 * header's `required` and `example` belong to the header, not to its schema where the route schema put them.
 */
function finish<Document extends object>(document: Document): Document {
  for (const operation of operationsOf(document)) {
    for (const parameter of operation.parameters ?? []) {
      if (parameter.in === 'query' && parameter.schema?.default !== undefined) parameter.required = false
    }
    for (const response of Object.values(operation.responses ?? {})) {
      for (const header of Object.values(response.headers ?? {})) {
        const { required, example, ...schema } = header.schema
        header.schema = schema
        if (required === true) header.required = true
        if (example !== undefined) header.example = example
      }
    }
  }
  return document
}

function description(config: Config): string {
  const seconds = Math.round(config.RATE_LIMIT_WINDOW / 1000)
  return (
    'API REST dei contatti di un’organizzazione. Ogni chiave API appartiene a una sola organizzazione e ogni ' +
    'richiesta legge o scrive solo i suoi contatti.\n\n' +
    'Tutti gli errori hanno la forma `{"error":{"code","message"}}` (schema `ErrorResponse`) con un messaggio in ' +
    'italiano; ogni risposta elenca i codici che può portare. ' +
    `Limite: ${config.RATE_LIMIT_MAX} richieste ogni ${seconds} secondi per organizzazione (intestazioni ` +
    'X-RateLimit-*; oltre, 429 con Retry-After). Le richieste rifiutate con 401 contano per indirizzo.\n\n' +
    'Parametri di query sconosciuti sono rifiutati con 400 invalid_query su ogni operazione. Un metodo che un ' +
    'percorso non ha (HEAD compreso) riceve 405 method_not_allowed con l’intestazione Allow. Le risposte non vanno ' +
    'conservate in cache (Cache-Control: no-store).'
  )
}

export function swaggerOptions(config: Config, sections: OpenApiSections): FastifyDynamicSwaggerOptions {
  const webhooks = sections.webhooks()
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'rubrica',
        version,
        description: description(config),
        contact: { name: 'Team rubrica', email: 'api@rubrica.example' },
        license: { name: 'Proprietaria', identifier: 'LicenseRef-rubrica-proprietary' },
      },
      // No relative server (`/`): generators would turn it into `//api/…`. Where the service is published is set
      // with PUBLIC_URL; without it, clients give their base URL themselves.
      ...(config.PUBLIC_URL && { servers: [{ url: config.PUBLIC_URL, description: 'rubrica' }] }),
      tags: sections.tags(),
      ...(Object.keys(webhooks).length > 0 && { webhooks }),
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'svc_<48 hex>',
            description:
              'Chiave API nell’intestazione `Authorization: Bearer svc_…`. Ogni operazione indica lo scope ' +
              `richiesto (${SCOPES.join(', ')}); il ruolo viewer può solo leggere, e solo il ruolo admin ` +
              'gestisce i webhook e cancella o esporta un contatto su richiesta dell’interessato.',
          },
        },
      },
    },
    // Shared schemas keep their $id as the component name (Contact, ErrorResponse, …), not def-0, def-1.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (document) =>
      'openapiObject' in document ? finish(document.openapiObject) : document.swaggerObject,
  }
}

export default fp(
  async function openapi(fastify) {
    await fastify.register(swagger, swaggerOptions(fastify.config, fastify.openapiSections))
  },
  { name: 'swagger', dependencies: ['openapi-sections'] },
)
