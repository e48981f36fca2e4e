import { sql, type Selectable } from 'kysely';
import type { TrafficProvidersTable } from '../db/tables.js';
import { PREPARED, type DB } from '../db/database.js';
import { HttpProblem } from '../http/errors.js';
import { parseToken, secretMatches } from './credentials.js';
import { IpAllowList } from './ip-allowlist.js';

// Credentials of machines rather than operators: a traffic provider's intake token (lgt_, sent
// as a Bearer token to POST /api/intake/leads) and a partner's postback token (lgp_, carried in
// the postback URL's path, since partners' postback systems only fill in URL templates). Both are
// checked in the one auth hook (guard.ts); handlers get request.trafficProvider or
// request.postbackPartner. Neither is subject to the account IP allow-list.

/** The provider columns intake decides from: read by the token, and read again to confirm a kept row. */
export const PROVIDER_COLUMNS = [
  'id',
  'name',
  'status',
  'token_id',
  'token_hash',
  'allowed_ips',
  'duplicate_policy',
  'velocity_policy',
  'review_rule',
  'archived_at',
] as const;
export type ProviderRow = Pick<Selectable<TrafficProvidersTable>, (typeof PROVIDER_COLUMNS)[number]>;

export interface IntakeProvider {
  id: string;
  name: string;
  duplicate_policy: string; // JSON, see traffic-providers/schemas.ts StoredDuplicatePolicy
  velocity_policy: string; // JSON, see modules/quality/velocity.ts StoredVelocityPolicy
  review_rule: string; // JSON, see modules/quality/review-rule.ts StoredReviewRule
  /** The row the request was let in by. */
  row: ProviderRow;
  /**
   * The row was kept in memory from an earlier request, not read for this one: whatever the
   * request decides from it must first be confirmed against the database (sameProvider), as
   * intake's one read does (modules/intake/service.ts storeLead), so a token revoked, a provider
   * paused or a policy changed in any process holds from the next lead on.
   */
  kept: boolean;
}

export interface PostbackPartner {
  id: string;
  name: string;
}

const unauthorized = (detail: string) => new HttpProblem(401, 'unauthorized', detail);

// Intake's token read, kept: a provider sends lead after lead with one token, and on PostgreSQL
// reading it was one of six round trips per lead. Only rows that let a request in are kept (an
// unknown token, a paused or archived provider, a refused address are read each time), at most
// MAX_KEPT per database handle; a kept row that would refuse is read again first.
const MAX_KEPT = 1_000;
const keptRows = new WeakMap<DB, Map<string, ProviderRow>>();
function keptOf(db: DB): Map<string, ProviderRow> {
  let m = keptRows.get(db);
  if (!m) keptRows.set(db, (m = new Map()));
  return m;
}

/** Whether `fresh` (the provider's row as the database holds it now) is still the row `row` was. */
export const sameProvider = (row: ProviderRow, fresh: ProviderRow | null | undefined): boolean =>
  !!fresh && PROVIDER_COLUMNS.every((c) => row[c] === fresh[c]);

/**
 * Authorization: Bearer lgt_… → the active traffic provider it belongs to, from an allowed
 * address. `fresh`: read the row even when one is kept (a kept row's decision turned out stale).
 * Every read forgets the token's kept row first; only a row that lets the request in is kept.
 */
export async function authenticateProvider(
  db: DB,
  authorization: string | undefined,
  ip: string,
  fresh = false,
): Promise<IntakeProvider> {
  if (!authorization) throw unauthorized("Send Authorization: Bearer <the traffic provider's intake token, lgt_…>.");
  const m = /^Bearer +(\S+)\s*$/i.exec(authorization);
  if (!m) throw unauthorized('The Authorization header must be "Bearer <intake token>".');
  const parsed = parseToken(m[1]);
  if (!parsed) throw unauthorized('The intake token is malformed.');
  if (parsed.kind !== 'lgt_')
    throw unauthorized("Lead intake takes a traffic provider's intake token (lgt_…), not a session or API key.");
  const rows = keptOf(db);
  const kept = fresh ? undefined : rows.get(parsed.id);
  // A refusal is never decided from memory: a kept row that would refuse is read again.
  if (kept && secretMatches(parsed.secret, kept.token_hash) && admits(kept, ip) === null) return provider(kept, true);
  rows.delete(parsed.id);
  const row = await db
    .selectFrom('traffic_providers')
    .select(PROVIDER_COLUMNS)
    .where('token_id', '=', parsed.id)
    .modifyEnd(sql.raw(PREPARED))
    .executeTakeFirst();
  if (!row || !secretMatches(parsed.secret, row.token_hash)) throw unauthorized('The intake token is not valid.');
  const refused = admits(row, ip);
  if (refused) throw refused;
  if (rows.size >= MAX_KEPT) rows.clear();
  rows.set(row.token_id, row);
  return provider(row, false);
}

/** Why `row` refuses a request from `ip` (the token's secret matched), or null when it admits it. */
function admits(row: ProviderRow, ip: string): HttpProblem | null {
  if (row.archived_at) return unauthorized('The intake token is not valid.');
  if (row.status !== 'active')
    return new HttpProblem(
      403,
      'provider_paused',
      `The traffic provider "${row.name}" is paused; its leads are not accepted.`,
    );
  const allowed = JSON.parse(row.allowed_ips) as string[];
  if (allowed.length && !new IpAllowList(allowed).allows(ip))
    return new HttpProblem(
      403,
      'ip_not_allowed',
      `Requests from ${ip} are not allowed for this traffic provider (see its allowed_ips).`,
    );
  return null;
}

const provider = (row: ProviderRow, kept: boolean): IntakeProvider => ({
  id: row.id,
  name: row.name,
  duplicate_policy: row.duplicate_policy,
  velocity_policy: row.velocity_policy,
  review_rule: row.review_rule,
  row,
  kept,
});

/** The {token} of /api/postback/{token} → the partner it belongs to (archived partners too). */
export async function authenticatePostback(db: DB, token: string | undefined): Promise<PostbackPartner> {
  const parsed = token ? parseToken(token) : null;
  if (!parsed || parsed.kind !== 'lgp_') throw unauthorized('The postback token is malformed.');
  const row = await db
    .selectFrom('partners')
    .select(['id', 'name', 'postback_token_hash'])
    .where('postback_token_id', '=', parsed.id)
    .executeTakeFirst();
  if (!row || !secretMatches(parsed.secret, row.postback_token_hash))
    throw unauthorized('The postback token is not valid.');
  return { id: row.id, name: row.name };
}
