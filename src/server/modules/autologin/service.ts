import { isPostgres, type DB } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import { emitEvent } from '../../events/emit.js';
import { shippedCountryOf } from '../../geo/ip-country.js';
import { maskContactLike } from '../../privacy/mask.js';
import { publicLink, readPublicBaseUrl } from '../hosting/public-url.js';
import { anyPartnerTracks } from './tracking.js';
import { openInOneStatement, type Open } from './open-statement.js';
import { countOpen, findLink, insertLink, insertOpen, linkStats, recentOpens, trackingOf } from './queries.js';
import { linkToken, tokenHash } from './tokens.js';

// Tracked autologin links (issue 28): a partner with track_autologin on has its autologin URL
// answered to traffic providers as <public base URL>/go/<token>; GET /go/<token> records the open
// and redirects. Operators keep seeing the partner's URL (the lead's autologin_url is unchanged).

/** Longest user agent kept; the rest is cut. */
export const USER_AGENT_CHARS = 512;
/** Opens listed on a lead. */
export const RECENT_OPENS = 20;

/**
 * The autologin URL a traffic provider is answered for a delivered lead: the tracked link when
 * the lead's partner tracks links and a public base URL is set (the link is stored on first
 * answer, the same link every time), else the partner's URL as it is.
 */
export async function providerAutologinUrl(db: DB, leadId: string, url: string | null): Promise<string | null> {
  if (url === null || !(await anyPartnerTracks(db))) return url;
  const lead = await trackingOf(db, leadId);
  if (!lead?.partner_id || lead.autologin_url !== url || Number(lead.track_autologin) !== 1) return url;
  const base = await readPublicBaseUrl(db);
  if (!base) return url;
  const token = await linkToken(db, leadId, lead.partner_id);
  await insertLink(db, {
    token_hash: tokenHash(token),
    lead_id: leadId,
    partner_id: lead.partner_id,
    single_use: Number(lead.autologin_single_use),
    created_at: nowIso(),
  });
  return publicLink(base, `/go/${token}`);
}

export type OpenOutcome = { kind: 'redirect'; url: string } | { kind: 'used' } | { kind: 'unknown' };

/**
 * One open of a link: hashed and looked up the same way whatever was sent (no early exit on its
 * form). Every open is counted; it redirects when the link is live (its lead still with the
 * link's partner and a URL) and, for a single-use link, only the open that made the count 1
 * (the counter's update is serialized per row, so of concurrent opens exactly one wins). A link
 * whose lead went to another partner since, or lost its URL, answers as used.
 */
export async function openLink(db: DB, token: string, ip: string, userAgent: string): Promise<OpenOutcome> {
  const hash = tokenHash(token);
  const open = {
    at: nowIso(),
    id: newId(),
    ip,
    country: shippedCountryOf(ip),
    userAgent: userAgent.slice(0, USER_AGENT_CHARS),
  };
  const row = isPostgres(db) ? await openInOneStatement(db, hash, open) : await openInSteps(db, hash, open);
  if (!row) return { kind: 'unknown' };
  return row.redirected ? { kind: 'redirect', url: row.url! } : { kind: 'used' };
}

/** SQLite: the read, then the counter, the open's row and the event in one transaction. */
async function openInSteps(db: DB, hash: string, open: Open) {
  const link = await findLink(db, hash);
  if (!link) return null;
  const live = link.lead_partner_id === link.partner_id && link.autologin_url !== null;
  const single = Number(link.single_use) === 1;
  return db.transaction().execute(async (tx) => {
    const opens = await countOpen(tx, hash, open.at);
    const redirected = live && (!single || opens === 1);
    await insertOpen(tx, {
      id: open.id,
      lead_id: link.lead_id,
      opened_at: open.at,
      ip: open.ip,
      ip_country: open.country,
      user_agent: open.userAgent,
      redirected,
    });
    // No address or user agent: webhook readers need only leads:view (see autologin docs).
    await emitEvent(tx, {
      type: 'lead.autologin_opened',
      lead_id: link.lead_id,
      partner_id: link.partner_id,
      traffic_provider_id: link.traffic_provider_id,
      campaign_id: link.campaign_id,
      data: { opened_at: open.at, opens, redirected, single_use: single },
    });
    return { redirected, url: link.autologin_url };
  });
}

/**
 * A lead's opens for its detail: null when it has no tracked link. Addresses and user agents are
 * the lead's own data: masked like contacts for readers without leads:contacts. An open from
 * another country than the lead's is flagged (its country is looked up when it is recorded).
 */
export async function leadOpens(db: DB, leadId: string, leadCountry: string, contacts: boolean) {
  const stats = await linkStats(db, leadId);
  if (!Number(stats.links)) return null;
  const recent = await recentOpens(db, leadId, RECENT_OPENS);
  return {
    count: Number(stats.opens ?? 0),
    first_at: stats.first_open_at ?? null,
    last_at: stats.last_open_at ?? null,
    recent: recent.map((o) => ({
      at: o.opened_at,
      ip: contacts ? o.ip : maskIp(o.ip),
      user_agent: contacts ? o.user_agent : maskUserAgent(o.user_agent),
      ip_country: o.ip_country,
      country_mismatch: o.ip_country !== null && o.ip_country !== leadCountry,
      redirected: Number(o.redirected) === 1,
    })),
  };
}

/** Its first product token only (e.g. "Mozilla/5.0 …"), contact-like text in it masked. */
export const maskUserAgent = (ua: string) => (ua ? `${maskContactLike(ua.split(' ')[0])} …` : ua);

/** 203.0.113.7 → 203.0.113.*; 2001:db8::1 → 2001:db8:*. */
export function maskIp(ip: string): string {
  if (ip.includes(':')) return `${ip.split(':').slice(0, 2).join(':')}:*`;
  return `${ip.split('.').slice(0, 3).join('.')}.*`;
}
