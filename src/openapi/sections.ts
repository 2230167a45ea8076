// What features add to the OpenAPI document beside their routes and schemas: their tags, and the requests the
// service sends out (the 3.1 `webhooks` section). Registered before the features; swagger.ts reads it after them,
// so that the document's tags and webhooks follow the features registered, in their order.
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import fp from 'fastify-plugin'

type OpenApi = NonNullable<Extract<FastifyDynamicSwaggerOptions['openapi'], { webhooks?: unknown }>>

/** A tag of the document: operations name it, readers and generators group by it. */
export type OpenApiTag = NonNullable<OpenApi['tags']>[number]

/** Entries of the 3.1 document's `webhooks`, as @fastify/swagger types them. */
export type OpenApiWebhooks = NonNullable<OpenApi['webhooks']>

export interface OpenApiSections {
  addTag(tag: OpenApiTag): void
  addWebhooks(section: OpenApiWebhooks): void
  tags(): OpenApiTag[]
  webhooks(): OpenApiWebhooks
}

declare module 'fastify' {
  interface FastifyInstance {
    openapiSections: OpenApiSections
  }
}

export default fp(
  async function openapiSections(fastify) {
    const tags: OpenApiTag[] = []
    const webhooks: OpenApiWebhooks = {}
    fastify.decorate('openapiSections', {
      addTag: (tag) => {
        tags.push(tag)
      },
      addWebhooks: (section) => {
        Object.assign(webhooks, section)
      },
      tags: () => [...tags],
      webhooks: () => ({ ...webhooks }),
    } satisfies OpenApiSections)
  },
  { name: 'openapi-sections' },
)
