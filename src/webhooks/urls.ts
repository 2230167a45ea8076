// Where webhooks may point: https URLs whose host is a public address, checked when a webhook is registered and
// again by the delivery agent when it connects (a DNS answer that changes in between does not get around it:
// OWASP API7, server-side request forgery). WEBHOOKS_ALLOW_INSECURE lifts both rules, for development and tests.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/** A host name's addresses (tests stub it: they never resolve or reach anything but loopback). */
export type Resolve = (hostname: string) => Promise<string[]>

export const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)

/** Public unicast: not loopback, private, link-local, multicast, reserved, unspecified (IPv4-mapped as IPv4). */
export function isPublicAddress(address: string): boolean {
  try {
    const parsed = ipaddr.process(address)
    // ::/8 is reserved, and holds IPv4-compatible addresses (::a.b.c.d, deprecated) that hide an IPv4 address:
    // ipaddr.js counts them as unicast. (IPv4-mapped ::ffff:a.b.c.d was made IPv4 above.)
    if (parsed.kind() === 'ipv6' && ((parsed as ipaddr.IPv6).parts[0] ?? 0) < 0x100) return false
    return parsed.range() === 'unicast'
  } catch {
    return false
  }
}

/** Why `url` may not receive webhooks, in Italian (for the `url` field's message), or null when it may. */
export async function refusedUrl(url: string, allowInsecure: boolean, resolve: Resolve): Promise<string | null> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'non è un URL valido'
  }
  if (parsed.username || parsed.password) return 'non deve contenere credenziali'
  if (allowInsecure) return ['http:', 'https:'].includes(parsed.protocol) ? null : 'deve essere un URL http o https'
  if (parsed.protocol !== 'https:') return 'deve essere un URL https'
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1')
  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : await resolve(host)
  } catch {
    return `il nome "${host}" non si risolve`
  }
  const hidden = addresses.find((address) => !isPublicAddress(address))
  if (addresses.length === 0 || hidden !== undefined) {
    return `deve indicare un indirizzo pubblico: ${hidden ?? host} è di loopback, privato, link-local o riservato`
  }
  return null
}
