// Webhook secrets are stored sealed: a box opens only with its own key, and on the embedded database the key is a
// private file made once in DATA_DIR, which every later start reads back.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { secretKey } from '../../src/config/secret-key.ts'
import { newSecret, SecretBox } from '../../src/webhooks/secrets.ts'

t.test('a sealed secret opens with its key only, and holds nothing of the secret in clear', async (t) => {
  const secret = newSecret()
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  const box = new SecretBox(Buffer.alloc(32, 1))
  const sealed = box.seal(secret)
  t.equal(box.open(sealed), secret)
  t.notOk(sealed.includes(Buffer.from(secret.slice(6), 'utf8')), 'not the secret')
  t.notOk(sealed.includes(Buffer.from(secret.slice(6), 'base64')), 'not its bytes')
  t.not(box.seal(secret).toString('hex'), sealed.toString('hex'), 'a new nonce each time')
  t.throws(() => new SecretBox(Buffer.alloc(32, 2)).open(sealed), 'another key cannot open it')
  const altered = Buffer.from(sealed)
  altered[altered.length - 1] = (altered.at(-1) ?? 0) ^ 1
  t.throws(() => box.open(altered), 'an altered box does not open')
  t.throws(() => new SecretBox(Buffer.alloc(16)), 'a key has 32 bytes')
})

t.test('the key: configured, or a private file in the embedded data dir, or none', async (t) => {
  const configured = Buffer.alloc(32, 3).toString('base64')
  t.same(await secretKey(configured, null), Buffer.alloc(32, 3))
  t.equal(await secretKey(undefined, null), null, 'PostgreSQL without a key: none')
  const dir = mkdtempSync(join(tmpdir(), 'rubrica-secrets-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const [first, racing] = await Promise.all([secretKey(undefined, dir), secretKey(undefined, dir)])
  t.equal(first?.length, 32)
  t.same(racing, first, 'two starts at once end with one key')
  t.same(await secretKey(undefined, dir), first, 'read back by the next start')
  const file = join(dir, 'webhook-secrets.key')
  t.equal(statSync(file).mode & 0o777, 0o600, 'private to the service user')
  t.equal(readFileSync(file, 'utf8').trim(), first?.toString('base64'))
})
