// A receiver of rubrica's webhooks: checks each delivery's signature with the standardwebhooks package, answers
// 204 at once, and handles each event once (a delivery may come more than once: at least once, never lost).
// Run: WEBHOOK_SECRET=whsec_… PORT=8080 node examples/webhook-receiver.mjs
import { createServer } from 'node:http'
import { Webhook } from 'standardwebhooks'

const verifier = new Webhook(process.env.WEBHOOK_SECRET) // the secret shown when the webhook was created
const handled = new Set() // a real receiver keeps the ids it handled in its database

createServer((request, response) => {
  let body = ''
  request.setEncoding('utf8')
  request.on('data', (chunk) => (body += chunk))
  request.on('end', () => {
    let event
    try {
      // Throws on a wrong signature, or a timestamp more than five minutes away (a replay).
      event = verifier.verify(body, request.headers)
    } catch {
      return response.writeHead(400).end()
    }
    response.writeHead(204).end()
    if (handled.has(event.id)) return
    handled.add(event.id)
    console.log(event.type, event.data.id, event.data.email)
  })
}).listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? '127.0.0.1')
