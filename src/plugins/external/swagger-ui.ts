// The human reference page at /docs, served from the installed package's assets (no network access needed).
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'

export default fp(
  async function referencePage(fastify) {
    await fastify.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 1 },
      staticCSP: true,
      // The package redirects its index.html to the page, but with a query string it redirects to itself.
      uiHooks: {
        onRequest: async (request, reply) => {
          if (request.url.split('?', 1)[0] === '/docs/static/index.html') return reply.redirect('/docs/')
        },
      },
    })
  },
  { name: 'swagger-ui', dependencies: ['swagger'] },
)
