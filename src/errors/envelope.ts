// Every error leaves the service as {"error":{"code","message"}} with an Italian message. Errors the service
// did not foresee become a generic 500 `internal`: the client sees no detail, the log has it with the request id.
import type { ErrorObject } from 'ajv'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { mayRunAgain } from '../db/deadlock.js'
import { isDatabaseUnavailable } from '../db/unavailable.js'
import { ApiError, errors } from './catalogue.js'
import { describeValidationError } from './validation-messages.js'

function fromFastifyError(error: FastifyError): ApiError | null {
  if (error.validation) {
    const context = error.validationContext
    // A path id that is not even a UUID names no contact: the same 404 as an absent one.
    if (context === 'params') return errors.notFound()
    const part = context === 'querystring' || context === 'headers' ? context : 'body'
    const code = ({ body: 'invalid_body', querystring: 'invalid_query', headers: 'invalid_header' } as const)[part]
    return errors.invalidInput(code, describeValidationError(error.validation as ErrorObject[], part))
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge()
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.notJsonBody()
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.emptyBody()
    case 'FST_ERR_CTP_INVALID_JSON':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalidJson()
  }
  // JSON bodies carrying __proto__ or constructor.prototype are refused by Fastify's parser as a SyntaxError.
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return errors.invalidJsonOrForbiddenKeys()
  }
  return null
}

/** The methods a route of this service can have, in the order an Allow header lists them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
type Method = (typeof METHODS)[number]

/** A route's URL with no parameter nor wildcard: it names one path. */
const isStatic = (url: string) => !/[:*]/.test(url)

/** A request's path as the router compares it with a route's: decoded, one trailing slash dropped. */
function pathOf(url: string): string {
  const raw = url.split('?', 1)[0] ?? '/'
  let path = raw
  try {
    path = decodeURI(raw)
  } catch {
    // Not decodable: the router refused it already (frameworkErrors); compared as it came.
  }
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
}

/**
 * The paths that routes name without parameters, with the methods each is routed for. Such a path belongs to its
 * routes: the router hands its other methods to a parametric sibling where one exists (GET /contacts/batch to
 * GET /contacts/:id, with the id "batch"), and those are answered as what they are, a method the path lacks.
 */
class StaticPaths {
  private readonly methods = new Map<string, Set<Method>>()

  add(url: string, method: string | string[]): void {
    if (!isStatic(url)) return
    const path = pathOf(url)
    const methods = this.methods.get(path) ?? new Set<Method>()
    for (const one of [method].flat()) if ((METHODS as readonly string[]).includes(one)) methods.add(one as Method)
    this.methods.set(path, methods)
  }

  /** The methods of the path `url` names, in Allow's order, if routes name it without parameters. */
  allowed(url: string): Method[] | undefined {
    const methods = this.methods.get(pathOf(url))
    return methods && METHODS.filter((method) => methods.has(method))
  }
}

function refuseMethod(request: FastifyRequest, reply: FastifyReply, allowed: readonly Method[]): ApiError {
  reply.header('allow', allowed.join(', '))
  return errors.methodNotAllowed(request.method, allowed)
}

/**
 * The answer to a request no route takes: a path that exists with other methods is a 405 that says which (in
 * an Allow header too); anything else names no resource.
 */
function unrouted(fastify: FastifyInstance, paths: StaticPaths, request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?', 1)[0] ?? '/'
  const allowed =
    paths.allowed(request.url) ?? METHODS.filter((method) => fastify.findRoute({ method, url: path }) !== null)
  // A route of this very method that found nothing (a static file that is not there) is a plain 404.
  if (allowed.length === 0 || allowed.includes(request.method as Method)) return errors.notFound()
  return refuseMethod(request, reply, allowed)
}

function toApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error
  // A transaction rolled back to run again (a deadlock's victim, a change ordered after another) changed nothing
  // and succeeds when retried, as when the database was out of reach.
  if (isDatabaseUnavailable(error) || mayRunAgain(error)) return errors.serviceUnavailable()
  const known = fromFastifyError(error)
  if (known) return known
  // What remains comes from a plugin (the reference page's static files refuse `..` with 403): a path that
  // names nothing is not found, any other client error a bad request.
  const status = error.statusCode ?? 500
  if (status === 403 || status === 404) return errors.notFound()
  if (status >= 400 && status < 500) return errors.badRequest()
  return errors.internal()
}

export default fp(
  async function errorEnvelope(fastify) {
    // Registered before any route (src/app.ts), so that it sees them all.
    const paths = new StaticPaths()
    fastify.addHook('onRoute', (route) => paths.add(route.url, route.method))
    // A root hook, before the /api/v1 scope's: a method the path lacks is refused before authentication and the
    // rate limit, as the router's own 405 is.
    fastify.addHook('onRequest', (request, reply, done) => {
      const route = request.routeOptions.url
      const allowed = route === undefined || isStatic(route) ? undefined : paths.allowed(request.url)
      done(allowed && !allowed.includes(request.method as Method) ? refuseMethod(request, reply, allowed) : undefined)
    })
    fastify.setErrorHandler(function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
      // A client that hangs up halfway through its body is no server fault (Node reports it as ECONNRESET,
      // which would otherwise read as a lost database connection) and has nobody left to answer.
      if (request.raw.readableAborted) {
        request.log.info('client closed the connection before its request was complete')
        return reply.code(400).send(errors.badRequest().toBody())
      }
      // A request no route takes is answered as such whatever its body: parsing that body may fail first.
      const apiError = request.is404 ? unrouted(fastify, paths, request, reply) : toApiError(error)
      // A 503 of the shutdown is foreseen and says nothing of the database: only a database error is logged so.
      // A batch refused while the instance holds all the batches it may is backpressure, not a fault.
      if (isDatabaseUnavailable(error)) request.log.warn({ err: error }, 'database unavailable')
      else if (mayRunAgain(error)) request.log.warn({ err: error }, 'rolled back to run again: still so after retries')
      else if (apiError.code === 'server_busy') request.log.info('refused: the instance holds all the batches it may')
      else if (apiError.statusCode >= 500 && apiError.code !== 'service_unavailable') {
        request.log.error({ err: error }, 'request failed')
      }
      // Headers set before the error (e.g. rate-limit counters) are kept; the body is always the envelope, no
      // error is worth caching, and whatever hook did not run, none is to be sniffed.
      reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').headers(apiError.headers)
      return reply.code(apiError.statusCode).type('application/json; charset=utf-8').send(apiError.toBody())
    })
    fastify.setNotFoundHandler(function handleNotFound(request, reply) {
      const apiError = unrouted(fastify, paths, request, reply)
      // Also where a plugin answers not found (a static file that is not there): no error is worth caching.
      reply.header('cache-control', 'no-store')
      return reply.code(apiError.statusCode).send(apiError.toBody())
    })
  },
  { name: 'error-envelope' },
)
