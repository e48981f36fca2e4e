import { sql } from 'kysely';
import { PREPARED, type DB } from '../db/database.js';
import { HttpProblem } from '../http/errors.js';
import { parseToken, secretMatches } from './credentials.js';
import { IpAllowList } from './ip-allowlist.js';

// Credentials of machines rather than operators: a traffic provider's intake token (lgt_, sent
// as a Bearer token to POST /api/intake/leads) and a partner's postback token (lgp_, carried in
// the postback URL's path, since partners' postback systems only fill in URL templates). Both are
// checked in the one auth hook (guard.ts); handlers get request.trafficProvider or
// request.postbackPartner. Neither is subject to the account IP allow-list.

export interface IntakeProvider {
  id: string;
  name: string;
  duplicate_policy: string; // JSON, see traffic-providers/schemas.ts StoredDuplicatePolicy
  velocity_policy: string; // JSON, see modules/quality/velocity.ts StoredVelocityPolicy
  review_rule: string; // JSON, see modules/quality/review-rule.ts StoredReviewRule
}

export interface PostbackPartner {
  id: string;
  name: string;
}

const unauthorized = (detail: string) => new HttpProblem(401, 'unauthorized', detail);

/** Authorization: Bearer lgt_… → the active traffic provider it belongs to, from an allowed address. */
export async function authenticateProvider(
  db: DB,
  authorization: string | undefined,
  ip: string,
): Promise<IntakeProvider> {
  if (!authorization) throw unauthorized("Send Authorization: Bearer <the traffic provider's intake token, lgt_…>.");
  const m = /^Bearer +(\S+)\s*$/i.exec(authorization);
  if (!m) throw unauthorized('The Authorization header must be "Bearer <intake token>".');
  const parsed = parseToken(m[1]);
  if (!parsed) throw unauthorized('The intake token is malformed.');
  if (parsed.kind !== 'lgt_')
    throw unauthorized("Lead intake takes a traffic provider's intake token (lgt_…), not a session or API key.");
  const row = await db
    .selectFrom('traffic_providers')
    .select([
      'id',
      'name',
      'status',
      'token_hash',
      'allowed_ips',
      'duplicate_policy',
      'velocity_policy',
      'review_rule',
      'archived_at',
    ])
    .where('token_id', '=', parsed.id)
    .modifyEnd(sql.raw(PREPARED))
    .executeTakeFirst();
  if (!row || !secretMatches(parsed.secret, row.token_hash) || row.archived_at)
    throw unauthorized('The intake token is not valid.');
  if (row.status !== 'active')
    throw new HttpProblem(
      403,
      'provider_paused',
      `The traffic provider "${row.name}" is paused; its leads are not accepted.`,
    );
  const allowed = JSON.parse(row.allowed_ips) as string[];
  if (allowed.length && !new IpAllowList(allowed).allows(ip)) {
    throw new HttpProblem(
      403,
      'ip_not_allowed',
      `Requests from ${ip} are not allowed for this traffic provider (see its allowed_ips).`,
    );
  }
  return {
    id: row.id,
    name: row.name,
    duplicate_policy: row.duplicate_policy,
    velocity_policy: row.velocity_policy,
    review_rule: row.review_rule,
  };
}

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
