// Requests that fail before Fastify routes them get the API's Italian envelope too, never Node's or Fastify's
// English body or an empty one: malformed HTTP (400, an HTTP/1.1 request without Host and a URL that cannot be
// decoded included), a header block too large (431), a request that does not arrive in time (408), an Expect
// other than 100-continue (417).
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { isRepeated } from '../http-headers.js'
import { type ParsedQuery, UNDECODABLE } from '../http-query.js'
import { type ApiError, errors } from './catalogue.js'

/** The headers of an answer given outside Fastify, with the ones every answer of the service carries. */
function envelopeHeaders(body: string, requestId: string): Record<string, string | number> {
  return {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Request-Id': requestId,
    Connection: 'close',
  }
}

/** A whole HTTP response, for the socket-level errors where there is no reply object to send through. */
function rawResponse(error: ApiError, requestId: string): string {
  const body = JSON.stringify(error.toBody())
  const headers = Object.entries(envelopeHeaders(body, requestId)).map(([name, value]) => `${name}: ${value}`)
  return [`HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode]}`, ...headers, '', body].join('\r\n')
}

function clientErrorOf(code: string): ApiError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return errors.requestTimeout()
  if (code === 'HPE_HEADER_OVERFLOW') return errors.headersTooLarge()
  return errors.badRequest()
}

/** Fastify's clientErrorHandler option: called with the server instance as `this`. */
export function clientErrorHandler(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  // A connection the client reset has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const apiError = clientErrorOf(error.code)
  const reqId = randomUUID()
  // Never the error object: Node attaches the request's raw bytes to it (rawPacket), Authorization included.
  this.log.debug({ reqId, code: error.code, status: apiError.statusCode }, 'malformed request refused')
  if (socket.writable) socket.end(rawResponse(apiError, reqId))
  else socket.destroy()
}

/**
 * Fastify's frameworkErrors option: a URL that cannot be decoded (bad percent-encoding) is refused before any
 * route runs, as the malformed request it is.
 */
export function frameworkErrors(_error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const apiError = errors.badRequest()
  // No hook runs for these: the headers every answer carries are set here.
  reply.headers({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-request-id': request.id })
  return reply.code(apiError.statusCode).type('application/json; charset=utf-8').send(apiError.toBody())
}

export default fp(
  async function protocolErrors(fastify) {
    // HTTP/1.1 requires one Host (Node would answer its own bare 400 without it: requireHostHeader is off; and it
    // keeps the first of two, where RFC 9112 asks for a 400).
    fastify.addHook('onRequest', (request, _reply, done) => {
      const raw = request.raw
      const missing = raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1 && !request.headers.host
      // Two Content-Types leave the body's type unknown (Node keeps the first).
      const ambiguous = isRepeated(raw.rawHeaders, 'host') || isRepeated(raw.rawHeaders, 'content-type')
      // A query that does not decode is an undecodable URL, as a path that does not is.
      const undecodable = (request.query as ParsedQuery | undefined)?.[UNDECODABLE] === true
      done(missing || ambiguous || undecodable ? errors.badRequest() : undefined)
    })
    // With a listener here Node no longer answers an unknown Expect by itself (with an empty 417).
    fastify.server.on('checkExpectation', (_request, response) => {
      const apiError = errors.expectationFailed()
      const body = JSON.stringify(apiError.toBody())
      response.writeHead(apiError.statusCode, envelopeHeaders(body, randomUUID())).end(body)
    })
  },
  { name: 'protocol-errors' },
)
