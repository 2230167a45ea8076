// Subscriptions to PostgreSQL notifications (LISTEN). `onChange` runs on every notification, with its payload, and
// again whenever the subscription starts or starts over after a lost connection, without one, because
// notifications sent meanwhile are lost.
import type { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { TCP_KEEPALIVE } from './tcp-keepalive.js'

export type Unsubscribe = () => Promise<void>

/** Hears a notification's payload, or undefined when the subscription (re)starts. */
export type OnChange = (payload?: string) => void

/** Hears when a subscription's connection is lost and when it listens again: once each, not per retry. */
export type ListenState = (state: 'lost' | 'restored') => void

/** How long to wait before connecting again after the listening connection was lost. */
const RECONNECT_MS = 1000

/** One dedicated connection (a pooled one would be handed to other work), reopened whenever it is lost. */
export async function listenPostgres(
  url: string,
  channel: string,
  onChange: OnChange,
  connectTimeoutMs: number,
  onState: ListenState = () => {},
): Promise<Unsubscribe> {
  let stopped = false
  let listening = false
  let lost = false
  let client: pg.Client | null = null
  let retry: NodeJS.Timeout | undefined
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, ...TCP_KEEPALIVE })
    next.on('notification', (message) => {
      if (message.channel === channel) onChange(message.payload ?? '')
    })
    next.on('error', () => {})
    next.on('end', () => {
      if (stopped) return
      if (listening) {
        listening = false
        lost = true
        onState('lost')
      }
      retry = setTimeout(() => void connect(), RECONNECT_MS).unref()
    })
    client = next
    try {
      await next.connect()
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
      listening = true
      if (lost) onState('restored')
      lost = false
      onChange()
    } catch {
      await next.end().catch(() => {})
    }
  }
  await connect()
  return async () => {
    stopped = true
    clearTimeout(retry)
    await client?.end().catch(() => {})
  }
}

export async function listenPglite(client: PGlite, channel: string, onChange: OnChange): Promise<Unsubscribe> {
  const unlisten = await client.listen(channel, (payload) => onChange(payload))
  onChange()
  return unlisten
}
