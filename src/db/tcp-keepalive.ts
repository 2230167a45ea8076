// PostgreSQL connections that may stay idle for long (the pool keeps its connections; the notification listener
// only waits): TCP keepalives after 30 s of quiet keep a firewall or NAT on the way from dropping them silently,
// and let the kernel notice one that is gone.
export const TCP_KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 30_000 } as const
