import { promises as dns } from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector } from 'undici';

// The outbound guard (API contract rule 14). Every call Leadgate makes to another server goes
// through an agent made here, so that an operator (or a key with partners:edit) cannot point
// Leadgate at the machine it runs on, its private network or the cloud metadata service and read
// the answer back through attempts or "Send test lead".
//
// The address is checked where it is used: in the connector, after DNS resolution, and the
// socket is opened to the very address that was checked. A name check before the call would
// not do: a host name can resolve to a public address when checked and to 127.0.0.1 a moment
// later (DNS rebinding). Literal addresses reach the connector already normalised by the URL
// parser (2130706433, 0x7f000001, 127.1 and 0177.0.0.1 all arrive as 127.0.0.1).
//
// Ranges come from ipaddr.js, not from a hand-written list: whatever it does not call
// 'unicast' is refused, unless the address is inside PARTNER_ALLOWED_NETWORKS on purpose.

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Why a destination is refused: `message` is what an operator reads on the attempt. */
export interface Refusal {
  /** The address refused, canonical (IPv4-mapped IPv6 shown as the IPv4 address). */
  address: string;
  /** ipaddr.js's range name ('loopback', 'private', 'linkLocal'…), or ours for what it calls unicast but is not. */
  range: string;
  message: string;
}

/** What the connector answers instead of a socket when a destination is refused. */
export class DestinationRefusedError extends Error {
  readonly code = 'LEADGATE_DESTINATION_REFUSED';
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
    this.name = 'DestinationRefusedError';
  }
}

const RANGE_WORDS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private (unique local)',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT (shared)',
  multicast: 'multicast',
  broadcast: 'broadcast',
  unspecified: 'unspecified',
  reserved: 'reserved',
  ipv4Compatible: 'IPv4-compatible (deprecated)',
  rfc6052: 'NAT64 (embeds an IPv4 address)',
  rfc6145: 'IPv4-translated (embeds an IPv4 address)',
  '6to4': '6to4 (embeds an IPv4 address)',
  teredo: 'Teredo (embeds an IPv4 address)',
  deprecatedSiteLocal: 'site-local (deprecated private)',
};
const describeRange = (range: string) => RANGE_WORDS[range] ?? `special-purpose (${range})`;
const withArticle = (words: string) => `${/^[aeiou]/i.test(words) ? 'an' : 'a'} ${words}`;

// IANA allocates global unicast IPv6 from 2000::/3 only. ipaddr.js calls the rest of the space
// 'unicast' too, e.g. IPv4-compatible ::7f00:1 (::127.0.0.1), which must not slip through.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

function parse(ip: string): { raw: Address; address: Address } | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (!ipaddr.isValid(bare)) return null;
  const raw = ipaddr.parse(bare);
  // process() turns ::ffff:127.0.0.1 into 127.0.0.1, so it meets the IPv4 ranges.
  return { raw, address: ipaddr.process(bare) };
}

function rangeOf(a: Address): string {
  const range = a.range();
  if (range !== 'unicast' || a.kind() === 'ipv4' || a.match(GLOBAL_UNICAST_V6)) return range;
  return a.match(IPV4_COMPATIBLE) ? 'ipv4Compatible' : 'reserved';
}

/**
 * The range of an IP address in any spelling ipaddr.js reads (2130706433, 0x7f000001, 127.1,
 * 0177.0.0.1, ::ffff:127.0.0.1, [::1]); 'unicast' means public. null when it is no IP address.
 */
export function classifyAddress(ip: string): { address: string; range: string } | null {
  const p = parse(ip);
  return p && { address: p.address.toString(), range: rangeOf(p.address) };
}

type Network = [Address, number];
const parsedNetworks = new WeakMap<readonly string[], Network[]>();

/** PARTNER_ALLOWED_NETWORKS as parsed by config.ts ("addr/prefix"), parsed once per list. */
function networks(cidrs: readonly string[]): Network[] {
  let list = parsedNetworks.get(cidrs);
  if (!list) {
    list = cidrs.map((c) => ipaddr.parseCIDR(c));
    parsedNetworks.set(cidrs, list);
  }
  return list;
}

const inside = (a: Address, nets: Network[]) => nets.some(([n, bits]) => n.kind() === a.kind() && a.match(n, bits));

/**
 * null when Leadgate may connect to `ip`: a public unicast address, or one inside `allowed`
 * (CIDRs). Otherwise why not. Something that is not an IP address is refused.
 */
export function checkAddress(ip: string, allowed: readonly string[]): Refusal | null {
  const p = parse(ip);
  if (!p) return { address: ip, range: 'invalid', message: `destination ${ip} is not an IP address: not allowed` };
  const nets = networks(allowed);
  // Both forms: an allowed "::ffff:0:0/96" should match as written, an allowed "127.0.0.0/8" the mapped ::ffff:127.0.0.1.
  if (inside(p.address, nets) || inside(p.raw, nets)) return null;
  const range = rangeOf(p.address);
  if (range === 'unicast') return null;
  const address = p.address.toString();
  return { address, range, message: `destination ${address} is ${describeRange(range)}: not allowed` };
}

// RFC 6761: names under .localhost are the machine itself, whatever DNS says.
const LOCALHOST_ADDRESSES = ['127.0.0.1', '::1'];

/**
 * Save-time check of a destination URL: refuses a host that is a refused address written
 * literally (in any spelling the URL parser reads), or localhost. Host names are not resolved
 * here (the agent checks them at connect time); a URL that does not parse is left to the
 * caller's own URL validation. null when nothing is wrong.
 */
export function checkDestinationUrl(url: string, allowed: readonly string[]): Refusal | null {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (net.isIP(host)) {
    const refusal = checkAddress(host, allowed);
    return (
      refusal && {
        ...refusal,
        message: `points to ${refusal.address}, ${withArticle(describeRange(refusal.range))} address: ${NOT_CALLED}`,
      }
    );
  }
  if (host === 'localhost' || host.endsWith('.localhost')) {
    // Refused unless one of the addresses it stands for is allowed; the connect-time check has the last word.
    const refusals = LOCALHOST_ADDRESSES.map((a) => checkAddress(a, allowed));
    if (refusals.every(Boolean))
      return { ...refusals[0]!, message: `points to ${host}, a loopback address: ${NOT_CALLED}` };
  }
  return null;
}

const NOT_CALLED =
  'Leadgate does not call loopback, private, link-local or other non-public addresses unless PARTNER_ALLOWED_NETWORKS includes them';

/** Every address a host name resolves to, in the resolver's order. */
export type Lookup = (hostname: string) => Promise<string[]>;

const systemLookup: Lookup = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** The addresses to connect to, every one of them checked; throws DestinationRefusedError when any is refused. */
export async function resolveDestination(
  hostname: string,
  allowed: readonly string[],
  lookup: Lookup = systemLookup,
): Promise<string[]> {
  const literal = net.isIP(hostname) !== 0;
  const addresses = literal ? [hostname] : await lookup(hostname);
  if (!addresses.length) throw Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' });
  // Every address, not just the first: the one we would fall back to must be as safe.
  for (const ip of addresses) {
    const refusal = checkAddress(ip, allowed);
    if (refusal) {
      throw new DestinationRefusedError(
        literal
          ? refusal
          : {
              ...refusal,
              message: `destination ${hostname} resolves to ${refusal.address}, which is ${describeRange(refusal.range)}: not allowed`,
            },
      );
    }
  }
  return addresses;
}

export interface OutboundAgentOptions extends Omit<Agent.Options, 'connect' | 'connectTimeout'> {
  /** CIDRs that may be reached although not public (app.config.partnerAllowedNetworks). */
  allowedNetworks: readonly string[];
  /** Per address tried (undici's own default is 10 s). */
  connectTimeout?: number;
  /** Resolves host names (tests give their own); default: the system resolver, all addresses. */
  lookup?: Lookup;
}

// Errors after which the next checked address of the same name is worth trying ("localhost"
// may answer ::1 first while the server listens on 127.0.0.1 only).
const TRY_NEXT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * An undici Agent whose every connection passes the guard: resolve, check every address, then
 * connect to a checked address (TLS still verifies the certificate against the host name).
 * Redirects are not followed (undici's default; do not turn maxRedirections on): a redirect
 * would pass this connector again anyway.
 */
export function createOutboundAgent({
  allowedNetworks,
  connectTimeout = 10_000,
  lookup = systemLookup,
  ...options
}: OutboundAgentOptions): Agent {
  const base = buildConnector({ timeout: connectTimeout });
  const connect: buildConnector.connector = (opts, callback) => {
    const attempt = (addresses: string[], i: number) =>
      // `host` (and so the TLS server name) stays the name from the URL; only where to connect changes.
      base({ ...opts, hostname: addresses[i] }, (err, socket) => {
        if (!err) return callback(null, socket!);
        const code = (err as { code?: string }).code;
        if (code && TRY_NEXT.has(code) && i + 1 < addresses.length) return attempt(addresses, i + 1);
        callback(err, null);
      });
    resolveDestination(opts.hostname, allowedNetworks, lookup).then(
      (addresses) => attempt(addresses, 0),
      (err: Error) => callback(err, null),
    );
  };
  return new Agent({ ...options, connect });
}

export interface GuardedSocketOptions {
  host: string;
  port: number;
  allowedNetworks: readonly string[];
  /** TLS from the first byte (smtps); the certificate is verified against `host`. */
  tls: boolean;
  /** Per address tried. */
  timeoutMs: number;
  lookup?: Lookup;
  /** Trusted certificates instead of the system's (tests). */
  ca?: string;
}

/** TLS options that verify the certificate against `host` (the name asked for, not the address connected to). */
export const tlsFor = (host: string, ca?: string): tls.ConnectionOptions => ({
  ...(net.isIP(host) ? {} : { servername: host }),
  checkServerIdentity: (_name, cert) => tls.checkServerIdentity(host, cert),
  rejectUnauthorized: true,
  ...(ca ? { ca } : {}),
});

const ignore = () => {};

/**
 * A socket for a protocol that is not HTTP (SMTP), through the same guard: resolve, check every
 * address, connect to a checked one. Throws DestinationRefusedError before any traffic when refused.
 */
export async function connectGuarded(o: GuardedSocketOptions): Promise<net.Socket> {
  const addresses = await resolveDestination(o.host, o.allowedNetworks, o.lookup);
  let last: unknown;
  for (const address of addresses) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const socket = o.tls
          ? tls.connect({ host: address, port: o.port, ...tlsFor(o.host, o.ca) })
          : net.connect({ host: address, port: o.port });
        const fail = (err: Error) => (socket.destroy(), reject(err));
        socket.setTimeout(o.timeoutMs, () =>
          fail(Object.assign(new Error(`connecting to ${o.host} timed out`), { code: 'UND_ERR_CONNECT_TIMEOUT' })),
        );
        // `on`, not `once`: a second error must not go unheard (that would crash the process).
        socket.on('error', fail);
        socket.once(o.tls ? 'secureConnect' : 'connect', () => {
          socket.setTimeout(0);
          socket.off('error', fail);
          socket.on('error', ignore); // until the caller listens
          resolve(socket);
        });
      });
    } catch (err) {
      last = err;
      if (!TRY_NEXT.has((err as { code?: string }).code ?? '')) throw err;
    }
  }
  throw last;
}

/**
 * A small pool for sends made by hand (a test postback, a test event), through the guard like
 * every other call: made on first use, closed when the app closes.
 */
export function onDemandAgent(
  app: { addHook(name: 'onClose', hook: () => Promise<void>): unknown },
  allowedNetworks: readonly string[],
): () => Agent {
  let agent: Agent | null = null;
  app.addHook('onClose', async () => agent?.close());
  return () => (agent ??= createOutboundAgent({ allowedNetworks, connections: 4, pipelining: 1 }));
}
