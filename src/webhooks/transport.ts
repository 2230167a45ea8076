// Sending one delivery: a POST over keep-alive connections, through request-filtering-agent, which refuses when it
// connects any address that is not public (loopback, private, link-local…), and through rubrica's own check of
// the address each connection is to use (isPublicAddress, which also refuses ::/8, IPv4 written as IPv6).
// WEBHOOKS_ALLOW_INSECURE uses Node's plain agents and no check instead. The DNS lookup can be replaced (tests
// answer it with a stub and record what would be connected).

import { lookup as systemLookup } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent'
import { WEBHOOK_LIMITS } from './model.js'
import { AddressNotAllowed, isPublicAddress, publicOnlyLookup } from './urls.js'

export interface Sent {
  /** The endpoint's HTTP status; null when it gave none. */
  status: number | null
  /** Why the attempt failed, briefly; null on a 2xx. */
  error: string | null
}

export type Send = (
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  /** Aborts the request (the server is stopping). */
  signal?: AbortSignal,
) => Promise<Sent>

export interface TransportOptions {
  allowInsecure: boolean
  lookup?: LookupFunction
}

const HOST_NOT_ALLOWED_REASON = 'host not found or not public'

/** A short reason for a failed request, never more than a line. */
function reasonOf(error: NodeJS.ErrnoException, timeoutMs: number): string {
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`
  // One reason for a name that does not resolve and one that resolves to an address not allowed: the deliveries
  // log must not tell a tenant what the operator's DNS holds (a name of theirs made a CNAME to an internal one).
  if (error instanceof AddressNotAllowed || /is not allowed/.test(error.message) || error.code === 'ENOTFOUND') {
    return HOST_NOT_ALLOWED_REASON
  }
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    EAI_AGAIN: 'host not found (DNS temporarily failed)',
    EHOSTUNREACH: 'host unreachable',
    ETIMEDOUT: 'connection timed out',
  }
  return known[error.code ?? ''] ?? (error.code ? `connection failed (${error.code})` : error.message.slice(0, 120))
}

export function httpTransport(options: TransportOptions): { send: Send; close(): void } {
  // No cap on sockets per host: webhooks of many tenants often share one (a SaaS receiver), and a capped pool
  // would let one hanging webhook's requests queue everyone else's. The deliverer bounds concurrency per webhook.
  const agentOptions = { keepAlive: true, maxFreeSockets: 64 }
  const agents = options.allowInsecure
    ? { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) }
    : { http: new RequestFilteringHttpAgent(agentOptions), https: new RequestFilteringHttpsAgent(agentOptions) }
  // The agents look the name up with this when they connect (request-filtering-agent wraps it with its own check).
  const lookup = options.allowInsecure ? options.lookup : publicOnlyLookup(options.lookup ?? systemLookup)
  // Async, so that a URL or a header Node refuses rejects the attempt rather than throwing at the caller.
  const send: Send = async (url, body, headers, timeoutMs, signal) => {
    const target = new URL(url)
    const secure = target.protocol === 'https:'
    // An address in the URL is connected to without a lookup: checked here, by the same rule.
    const literal = target.hostname.replace(/^\[(.*)\]$/, '$1')
    if (!options.allowInsecure && isIP(literal) !== 0 && !isPublicAddress(literal)) {
      return { status: null, error: HOST_NOT_ALLOWED_REASON }
    }
    const request = (secure ? https : http).request(target, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      ...(lookup && { lookup }),
    })
    return outcomeOf(request, body, timeoutMs, signal)
  }
  return {
    send,
    close() {
      agents.http.destroy()
      agents.https.destroy()
    },
  }
}

/**
 * Sends `body` on `request` and settles with the attempt's outcome: the endpoint's status once its answer began
 * (whatever happens to the rest of it), otherwise why none came (the timeout, a stop, the connection).
 */
function outcomeOf(request: http.ClientRequest, body: string, timeoutMs: number, signal?: AbortSignal): Promise<Sent> {
  return new Promise((resolve) => {
    // A plain timer, not AbortSignal.timeout: combined with AbortSignal.any, Node 20 may collect the timeout
    // signal and never fire it (nodejs/node#57736), leaving the attempt hanging and its socket open.
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      request.destroy()
    }, timeoutMs)
    const stop = () => request.destroy(Object.assign(new Error('stopping'), { name: 'AbortError' }))
    signal?.addEventListener('abort', stop, { once: true })
    /** The endpoint's status, once its answer began: from then on, it alone decides the outcome. */
    let status: number | null = null
    /** The answer was read to its end: its connection may serve another attempt. */
    let readToEnd = false
    let settled = false
    const finish = (sent: Sent) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', stop)
      // Whatever ended the attempt (the limit, the timeout, the endpoint, a stop), nothing more is read, and a
      // connection whose answer was not read to its end is closed rather than reused.
      if (!readToEnd) request.destroy()
      resolve(sent)
    }
    const byStatus = () =>
      finish({ status, error: status !== null && status >= 200 && status < 300 ? null : `HTTP ${status}` })
    const failed = (error: NodeJS.ErrnoException) => {
      // A body cut short after the status (by the limit, the timeout or the endpoint) changes nothing.
      if (status !== null) return byStatus()
      finish({ status: null, error: timedOut ? `no answer within ${timeoutMs} ms` : reasonOf(error, timeoutMs) })
    }
    request.on('response', (response) => {
      status = response.statusCode ?? null
      readAnswer(response, byStatus, () => {
        readToEnd = true
      })
    })
    request.on('error', failed)
    request.on('close', () => failed(Object.assign(new Error('closed'), { code: 'ECONNRESET' })))
    if (signal?.aborted) stop()
    else request.end(body)
  })
}

/**
 * Reads an endpoint's answer only to learn that it ended: `ended` once it is read to its end (before `done`), `done`
 * when it ends in any way, or once more of it came than WEBHOOK_LIMITS.answerBytes.
 */
function readAnswer(response: http.IncomingMessage, done: () => void, ended: () => void): void {
  let read = 0
  response.on('data', (chunk: Buffer) => {
    read += chunk.length
    if (read > WEBHOOK_LIMITS.answerBytes) done()
  })
  response.on('end', () => {
    ended()
    done()
  })
  response.on('error', done)
  response.on('close', done)
}
