// The human reference page at /docs, served from the installed package's assets (no network access needed), with
// rubrica's name instead of the package's logo.
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40">
<rect width="40" height="40" rx="8" fill="#1b6e5a"/><text x="20" y="28" font-family="sans-serif" font-size="22"
font-weight="700" fill="#fff" text-anchor="middle">r</text><text x="50" y="28" font-family="sans-serif"
font-size="22" font-weight="700" fill="#fff">rubrica</text></svg>`

export default fp(
  async function referencePage(fastify) {
    await fastify.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 1, persistAuthorization: false },
      staticCSP: true,
      logo: { type: 'image/svg+xml', content: LOGO, href: '/docs', target: '_self' },
      theme: { title: 'rubrica · riferimento API' },
      // The page would otherwise send the document to an online validator, which a closed network cannot reach.
      validatorUrl: false,
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
