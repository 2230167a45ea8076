// The instance's secrets key, which the database never holds: WEBHOOKS_SECRET_KEY, or on the embedded database a
// key file made in DATA_DIR at the first start (private to the service's user, like the database beside it). It
// seals webhooks' signing secrets (src/webhooks/secrets.ts), and keys, through a key derived from it for that one
// use, the hashes of erased email addresses (src/contacts/erased-emails.ts). Features read it here, from one
// place, so that none imports another for it.
import { hkdfSync, randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import fp from 'fastify-plugin'

const KEY_FILE = 'webhook-secrets.key'

/**
 * The key: WEBHOOKS_SECRET_KEY when set; on the embedded database the key file in DATA_DIR, made on first use;
 * otherwise none (webhooks cannot be created nor contacts erased, and the start says so).
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

/** What a derived key is for: each use has its own key, so that one use's outputs say nothing of another's. */
export type KeyUse = 'erased emails'

/** A 32-byte key for one use, derived from the instance's key with HKDF-SHA256 (RFC 5869). */
export function derivedKey(key: Buffer, use: KeyUse): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `rubrica ${use}`, 32))
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The instance's secrets key; null when none is configured (PostgreSQL without WEBHOOKS_SECRET_KEY). */
    secretKey: Buffer | null
  }
}

/** The key on the app, read once at start; without one, the start says what cannot be done. */
export const secretKeyPlugin = fp(
  async function secretKeyOfInstance(fastify) {
    const key = await secretKey(fastify.config.WEBHOOKS_SECRET_KEY, fastify.db.dataDir)
    if (key === null) {
      fastify.log.warn(
        'WEBHOOKS_SECRET_KEY is not set: webhooks cannot be created, nor delivered by this instance, and contacts ' +
          'cannot be erased',
      )
    }
    fastify.decorate('secretKey', key)
  },
  { name: 'secret-key', dependencies: ['database'] },
)
