// Request bodies are JSON in UTF-8, not compressed. A body declared in another charset or with a Content-Encoding
// is refused (415) and one whose bytes are not valid UTF-8 is refused (400), instead of being stored with U+FFFD
// where the bad bytes were; so is one that nests deeper or holds more objects and lists than any body of this API
// needs (json-shape.ts), before it costs a parse. Parsing itself is Fastify's own JSON parser, with its
// protection against __proto__ and constructor.prototype keys.
import { parse as parseContentType } from 'content-type'
import fp from 'fastify-plugin'
import { errors } from '../../errors/catalogue.js'
import { jsonShapeExcess, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH } from './json-shape.js'

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The declared charset, lower-cased; undefined when none is declared or the header cannot be read. */
function charsetOf(header: string | undefined): string | undefined {
  try {
    return header === undefined ? undefined : parseContentType(header).parameters.charset?.toLowerCase()
  } catch {
    return undefined
  }
}

export default fp(
  async function jsonBody(fastify) {
    // A DELETE takes no body, as a GET takes none: one sent anyway, of any type and size (clients that label every
    // request JSON, with nothing or something in it), is read and dropped here, before a parser would hold it, or
    // refuse it past the body limit; the request then goes on as one without a body.
    fastify.addHook('preParsing', (request, _reply, payload, done) => {
      if (request.method === 'DELETE') {
        payload.resume()
        const { headers } = request
        delete headers['content-type']
        delete headers['transfer-encoding']
        headers['content-length'] = '0'
      }
      done(null, payload)
    })
    const parseJson = fastify.getDefaultJsonParser('error', 'error')
    fastify.removeContentTypeParser('application/json')
    fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const charset = charsetOf(request.headers['content-type'])
      if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
        done(errors.unsupportedMediaType(), undefined)
        return
      }
      // Compressed bodies are not decoded: one labelled so would be read as the wrong bytes. Node undoes a
      // transfer's chunks only, so a body sent `gzip, chunked` is refused likewise.
      const encoding = request.headers['content-encoding']?.trim().toLowerCase()
      const transfer = request.headers['transfer-encoding']?.trim().toLowerCase()
      if (
        (encoding !== undefined && encoding !== '' && encoding !== 'identity') ||
        (transfer ?? 'chunked') !== 'chunked'
      ) {
        done(errors.unsupportedEncoding(), undefined)
        return
      }
      const excess = jsonShapeExcess(body as Buffer)
      if (excess !== undefined) {
        const refusal =
          excess === 'depth' ? errors.jsonTooDeep(MAX_JSON_DEPTH) : errors.jsonTooManyContainers(MAX_JSON_CONTAINERS)
        done(refusal, undefined)
        return
      }
      let text: string
      try {
        text = UTF8.decode(body as Buffer)
      } catch {
        done(errors.invalidUtf8(), undefined)
        return
      }
      parseJson(request, text, done)
    })
    // Any other type, or none: the body must be JSON, refused before it is read.
    fastify.addContentTypeParser('*', (_request, _payload, done) => {
      done(errors.notJsonBody(), undefined)
    })
  },
  { name: 'json-body' },
)
