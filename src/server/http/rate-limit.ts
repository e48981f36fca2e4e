import type { FastifyReply, FastifyRequest } from 'fastify';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import { parseToken } from '../auth/credentials.js';
import type { App, RouteAccess } from '../types.js';
import { HttpProblem } from './errors.js';

// Request rate limits (API-CONTRACT rule 18): per credential (RATE_LIMIT_PER_KEY) and per client
// address (RATE_LIMIT_PER_IP), each per minute, 0 = off. Over a limit: 429 rate_limited with
// Retry-After, like every other problem.
//
// Counts are kept in this process's memory (@fastify/rate-limit's LRU store), per server
// instance: with N instances behind a proxy a client may get up to N times the limit. That is a
// deliberate exception to "nothing in one process": these limits protect each instance's CPU and
// database pool from one runaway client, they are not a quota, and counting in the shared
// database would cost a write on every request, the very load they exist to bound.
//
// What counts:
// - Every /api request except the health checks (load balancers and monitors poll them) counts
//   against its address: a request over the limit is refused before the auth hook, so it costs
//   no database query. The dashboard's own files (outside /api) are not counted.
// - A request carrying a well-formed session (lgs_) or API key (lg_) also counts against that
//   credential, by the id inside the token: no database look-up, so a key is limited even
//   where it is unknown or revoked, and many keys from one address still meet the address limit.
// - Lead intake and partner postbacks are exempt from the per-credential limit (their tokens are
//   a traffic provider's or partner's, not a key) and count per address in buckets of their own:
//   intake is the revenue path and a provider may legitimately burst, so its traffic must neither
//   be refused because operators at the same address use the dashboard, nor lock them out. The
//   per-address limit still bounds it; raise RATE_LIMIT_PER_IP (or set 0) for a provider that
//   sends more than that from one address.
// - Tracked autologin links (GET /go/{token}, outside /api, public) count per address in a
//   bucket of their own ('link-ip'): a lead's opens neither spend the dashboard's budget nor
//   are refused because of it, while guessing tokens from one address stays bounded.
//
// Every answer under a limit carries RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-
// headers: one item per policy, e.g. `"key";q=1200;w=60` and `"key";r=1187;t=42`). The plugin's
// own enableDraftSpec headers are RateLimit-Limit/-Remaining/-Reset of an older draft, so it is
// used for its counting store only (createRateLimit) and the headers are written here.

/** Health checks: load balancers and orchestrators poll them, often from the proxy's one address. */
export const UNLIMITED_ROUTES: ReadonlySet<string> = new Set(['/api/health', '/api/health/live']);

/** The tracked autologin link (modules/autologin): per address, in a bucket of its own. */
export const GO_ROUTE = '/go/:token';

const WINDOW_MS = 60_000;
const WINDOW_S = WINDOW_MS / 1000;
/** Entries per store (least recently used go first): bounds memory whatever the traffic. */
const STORE_ENTRIES = 50_000;

type PolicyName = 'key' | 'ip' | 'intake-ip' | 'postback-ip' | 'link-ip';

const BUCKET_KEY = Symbol('leadgate.rateLimitBucket');
type Bucketed = FastifyRequest & { [BUCKET_KEY]?: string };

/** The session or API key a request carries, as "<kind><id>", or null. Form and checksum only. */
function credentialOf(req: FastifyRequest): { id: string; kind: 'session' | 'API key' } | null {
  const m = /^Bearer +(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  const parsed = m ? parseToken(m[1]) : null;
  if (parsed?.kind === 'lg_') return { id: parsed.kind + parsed.id, kind: 'API key' };
  if (parsed?.kind === 'lgs_') return { id: parsed.kind + parsed.id, kind: 'session' };
  return null;
}

interface Count {
  policy: PolicyName;
  max: number;
  remaining: number;
  resetSeconds: number;
  exceeded: boolean;
}

function writeHeaders(reply: FastifyReply, counts: Count[]) {
  reply.header('ratelimit-policy', counts.map((c) => `"${c.policy}";q=${c.max};w=${WINDOW_S}`).join(', '));
  reply.header('ratelimit', counts.map((c) => `"${c.policy}";r=${c.remaining};t=${c.resetSeconds}`).join(', '));
}

export async function installRateLimit(app: App) {
  const { rateLimitPerKey, rateLimitPerIp } = app.config;
  if (!rateLimitPerKey && !rateLimitPerIp) return;
  // global: false: no route gets the plugin's own hook; the one hook below runs both limits.
  await app.register(rateLimit, { global: false });

  const limiter = (max: number) =>
    app.createRateLimit({
      max,
      timeWindow: WINDOW_MS,
      keyGenerator: (req) => (req as Bucketed)[BUCKET_KEY]!,
      // Passed through to the store (not in the plugin's types for createRateLimit).
      ...({ cache: STORE_ENTRIES } as object),
    });
  const perKey = rateLimitPerKey ? limiter(rateLimitPerKey) : null;
  const perIp = rateLimitPerIp ? limiter(rateLimitPerIp) : null;

  async function count(
    req: FastifyRequest,
    limit: NonNullable<typeof perKey>,
    policy: PolicyName,
    bucket: string,
  ): Promise<Count> {
    (req as Bucketed)[BUCKET_KEY] = `${policy}:${bucket}`;
    const r = await limit(req);
    if (r.isAllowed) throw new Error('rate limit: no allow-list is configured'); // narrows the type
    return { policy, max: r.max, remaining: r.remaining, resetSeconds: r.ttlInSeconds, exceeded: r.isExceeded };
  }

  function refuse(reply: FastifyReply, counts: Count[], over: Count, who: string): never {
    writeHeaders(reply, counts);
    const max = over.max;
    throw new HttpProblem(
      429,
      'rate_limited',
      `Too many requests ${who}: at most ${max} a minute on this server. Retry in ${over.resetSeconds} s.`,
      undefined,
      { 'Retry-After': String(over.resetSeconds) },
    );
  }

  app.addHook('onRequest', async (req, reply) => {
    const route = req.routeOptions.url;
    const path = route ?? req.url;
    // Tracked autologin links (/go/{token}) are the one public route outside /api: counted too.
    const link = route === GO_ROUTE;
    if (!link && path !== '/api' && !path.startsWith('/api/')) return;
    if (route && UNLIMITED_ROUTES.has(route)) return;
    const access = (route ? req.routeOptions.config : {}) as RouteAccess;
    const machine = access.intake || access.postback;

    const counts: Count[] = [];
    if (perIp) {
      const policy: PolicyName = access.intake
        ? 'intake-ip'
        : access.postback
          ? 'postback-ip'
          : link
            ? 'link-ip'
            : 'ip';
      // IPv6 clients usually hold a whole /64: count it as one address, as the plugin does.
      const c = await count(req, perIp, policy, normalizeIP(req.ip, 64));
      counts.push(c);
      if (c.exceeded) refuse(reply, counts, c, 'from this address');
    }
    const credential = perKey && !machine ? credentialOf(req) : null;
    if (perKey && credential) {
      const c = await count(req, perKey, 'key', credential.id);
      counts.unshift(c);
      if (c.exceeded) refuse(reply, counts, c, `for this ${credential.kind}`);
    }
    if (counts.length) writeHeaders(reply, counts);
  });
}
