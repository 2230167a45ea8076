// Webhook signing secrets: made here, shown once in the answer that creates the webhook, and stored only sealed
// with AES-256-GCM under a key the database does not hold: WEBHOOKS_SECRET_KEY, or on the embedded database a key
// file made in DATA_DIR at the first start (private to the service's user, like the database beside it).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

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

const KEY_FILE = 'webhook-secrets.key'

/**
 * The key: WEBHOOKS_SECRET_KEY when set; on the embedded database the key file in DATA_DIR, made on first use;
 * otherwise none (webhooks cannot be created, and the start says so).
 */
export async function secretKey(
  configured: string | undefined,
  embeddedDataDir: string | null,
): Promise<Buffer | null> {
  if (configured) return Buffer.from(configured, 'base64')
  if (embeddedDataDir === null) return null
  const path = join(embeddedDataDir, KEY_FILE)
  try {
    return Buffer.from((await readFile(path, 'utf8')).trim(), 'base64')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    const key = randomBytes(32)
    // 'wx': never overwrite a key another start wrote meanwhile (the secrets sealed with it would be lost).
    await writeFile(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' }).catch(async (raced) => {
      if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced
    })
    return Buffer.from((await readFile(path, 'utf8')).trim(), 'base64')
  }
}
