// Sending one delivery: a POST over keep-alive connections, through request-filtering-agent, which checks the
// address a name resolves to when it connects and refuses any that is not public (loopback, private, link-local…).
// WEBHOOKS_ALLOW_INSECURE uses Node's plain agents instead. The DNS lookup can be replaced (tests answer it with a
// stub and record what would be connected).

import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent'
import { WEBHOOK_LIMITS } from './model.js'

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

/** A short reason for a failed request, never more than a line. */
function reasonOf(error: NodeJS.ErrnoException, timeoutMs: number): string {
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`
  if (/is not allowed/.test(error.message)) return 'address not allowed (not public)'
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
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
  const send: Send = (url, body, headers, timeoutMs, signal) =>
    new Promise((resolve) => {
      const target = new URL(url)
      const secure = target.protocol === 'https:'
      const request = (secure ? https : http).request(target, {
        method: 'POST',
        agent: secure ? agents.https : agents.http,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        ...(options.lookup && { lookup: options.lookup }),
      })
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
        let read = 0
        response.on('data', (chunk: Buffer) => {
          read += chunk.length
          if (read > WEBHOOK_LIMITS.answerBytes) byStatus()
        })
        response.on('end', () => {
          readToEnd = true
          byStatus()
        })
        response.on('error', byStatus)
        response.on('close', byStatus)
      })
      request.on('error', failed)
      request.on('close', () => failed(Object.assign(new Error('closed'), { code: 'ECONNRESET' })))
      if (signal?.aborted) stop()
      else request.end(body)
    })
  return {
    send,
    close() {
      agents.http.destroy()
      agents.https.destroy()
    },
  }
}
