// Where webhooks may point: https URLs whose host is a public address, checked when a webhook is registered and
// again on every delivery's connection (a DNS answer that changes in between does not get around it:
// OWASP API7, server-side request forgery). WEBHOOKS_ALLOW_INSECURE lifts both rules, for development and tests.
import { lookup } from 'node:dns/promises'
import { isIP, type LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'

/** A host name's addresses (tests stub it: they never resolve or reach anything but loopback). */
export type Resolve = (hostname: string) => Promise<string[]>

export const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)

/**
 * Public unicast: not loopback, private, link-local, multicast, reserved, unspecified, nor an IPv4 address written
 * as IPv6 (IPv4-mapped ::ffff:a.b.c.d, or IPv4-compatible ::a.b.c.d). The one definition of the addresses
 * webhooks may reach: registration checks what a host is or resolves to with it, and every delivery's connection
 * checks again with it (publicOnlyLookup), on top of request-filtering-agent's own rule.
 */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false
  try {
    const parsed = ipaddr.parse(address)
    // ::/8 is reserved, and holds IPv4-compatible addresses (::a.b.c.d, deprecated) that hide an IPv4 address:
    // ipaddr.js counts them as unicast, and so does request-filtering-agent.
    if (parsed.kind() === 'ipv6' && ((parsed as ipaddr.IPv6).parts[0] ?? 0) < 0x100) return false
    return parsed.range() === 'unicast'
  } catch {
    return false
  }
}

/** How a connection refused by isPublicAddress fails. */
export class AddressNotAllowed extends Error {
  constructor(hostname: string) {
    super(`${hostname} resolves to an address that is not public`)
  }
}

/**
 * `lookup`, refusing any answer with an address that is not public: given to the delivery agent, so that the
 * address a connection is about to use is checked when it connects (a DNS answer changed since registration
 * does not get around it). Both forms of answer are checked: one address, or all of them.
 */
export function publicOnlyLookup(lookup: LookupFunction): LookupFunction {
  return (hostname, options, callback) =>
    lookup(hostname, options, (error, address, family) => {
      if (error) return callback(error, address, family)
      const addresses = typeof address === 'string' ? [address] : address.map((entry) => entry.address)
      if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
        return callback(new AddressNotAllowed(hostname), address, family)
      }
      callback(null, address, family)
    })
}

/**
 * The one refusal for a host that may not receive webhooks, whatever the reason: not resolving, or resolving to
 * (or being) a loopback, private, reserved… address. Telling them apart, or naming the address, would let a
 * tenant's admin map the operator's internal DNS one registration at a time.
 */
export const HOST_NOT_ALLOWED =
  'l’host deve essere un indirizzo pubblico, o un nome che si risolve solo in indirizzi pubblici'

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
    return HOST_NOT_ALLOWED
  }
  return addresses.length > 0 && addresses.every(isPublicAddress) ? null : HOST_NOT_ALLOWED
}
