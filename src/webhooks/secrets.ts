// Webhook signing secrets: made here, shown once in the answer that creates the webhook, and stored only sealed
// with AES-256-GCM under a key the database does not hold, the instance's secrets key (src/config/secret-key.ts).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const NONCE_BYTES = 12
const TAG_BYTES = 16

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** Seals and opens secrets with one 32-byte key. */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a webhook secret key has 32 bytes')
  }

  /** nonce, tag, ciphertext. */
  seal(secret: string): Buffer {
    const nonce = randomBytes(NONCE_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce)
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
    return Buffer.concat([nonce, cipher.getAuthTag(), sealed])
  }

  /** The secret; throws when the box was sealed with another key or altered. */
  open(box: Buffer): string {
    const decipher = createDecipheriv('aes-256-gcm', this.key, box.subarray(0, NONCE_BYTES))
    decipher.setAuthTag(box.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES))
    return Buffer.concat([decipher.update(box.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
  }
}
