// Key revocations and tenant status changes made by the CLI are announced on Redis (when REDIS_URL is set),
// so that every instance drops its cached key resolutions at once instead of after the cache lifetime.

export const AUTH_CHANGES_CHANNEL = 'rubrica:auth-changes'

/** Best effort: without Redis, instances still notice within AUTH_CACHE_TTL_MS. Returns whether it was sent. */
export async function announceAuthChange(redisUrl: string | undefined, what: string): Promise<boolean> {
  if (!redisUrl) return false
  const { Redis } = await import('ioredis')
  const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.publish(AUTH_CHANGES_CHANNEL, what)
    return true
  } catch {
    return false
  } finally {
    client.disconnect()
  }
}
