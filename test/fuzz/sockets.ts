// Raw client connections to an app on a real port, for the tests of slow and abusive clients: open one, trickle
// bytes into it, wait (never unboundedly) for the server to close it. Not a test file: tap does not run it.
import { connect, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'

/** Listens on 127.0.0.1, on a port the system picks, and returns that port. */
export async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  return typeof address === 'object' && address ? address.port : 0
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface Connection {
  socket: Socket
  openedAt: number
  /** Resolves with the milliseconds from opening to the server closing the connection. */
  closed: Promise<number>
  received(): string
}

export async function open(port: number, sockets: Set<Socket>): Promise<Connection> {
  const socket = connect(port, '127.0.0.1')
  sockets.add(socket)
  const chunks: Buffer[] = []
  socket.on('data', (chunk) => chunks.push(chunk))
  // Resets and write-after-close errors are how a cut-off looks from here; 'close' follows them.
  socket.on('error', () => {})
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const openedAt = Date.now()
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - openedAt)))
  return { socket, openedAt, closed, received: () => Buffer.concat(chunks).toString('latin1') }
}

/** Writes `text` one byte every `everyMs` until it is all sent or the connection is gone. */
export function trickle(connection: Connection, text: string, everyMs: number): () => void {
  let i = 0
  const timer = setInterval(() => {
    const { socket } = connection
    if (i >= text.length || socket.destroyed || !socket.writable) {
      clearInterval(timer)
      return
    }
    socket.write(text[i++] ?? '')
  }, everyMs)
  return () => clearInterval(timer)
}

/** The connection's close time, or null when it is still open after `ms`. */
export async function closedWithin(connection: Connection, ms: number): Promise<number | null> {
  const remaining = Math.max(0, ms - (Date.now() - connection.openedAt))
  return Promise.race([connection.closed, sleep(remaining).then(() => null)])
}
