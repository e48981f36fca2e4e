import { CompiledQuery } from 'kysely';
import type { DB } from '../../db/database.js';

// PostgreSQL: an open of a tracked link in one statement (one round trip, no BEGIN/COMMIT): the
// link and its lead read, the counter moved, the open's row and the `lead.autologin_opened`
// event written, as CTEs. The same rules as service.ts's steps for SQLite: every open counts;
// it redirects when the link is live and, for a single-use link, only when it made the count 1.
// Concurrent opens of one link queue on its row's lock, and each UPDATE sees the count the one
// before it left (READ COMMITTED re-reads the updated row), so exactly one gets 1.
// The event's data is built by json_build_object: the same keys and values emitEvent writes.

const SQL = `
with l as (
  select k.token_hash, k.lead_id, k.partner_id, k.single_use,
         (leads.partner_id = k.partner_id and leads.autologin_url is not null) as live,
         leads.autologin_url, leads.traffic_provider_id, leads.campaign_id
  from autologin_links k join leads on leads.id = k.lead_id
  where k.token_hash = $1
), u as (
  update autologin_links a
  set opens = a.opens + 1, first_open_at = coalesce(a.first_open_at, $2), last_open_at = $2
  from l where a.token_hash = l.token_hash
  returning a.opens, l.lead_id, l.partner_id, l.single_use, l.autologin_url, l.traffic_provider_id,
            l.campaign_id, (l.live and (l.single_use = 0 or a.opens = 1)) as redirected
), o as (
  insert into autologin_opens (id, lead_id, opened_at, ip, user_agent, ip_country, redirected)
  select $3, lead_id, $2, $4, $5, $6, case when redirected then 1 else 0 end from u
), e as (
  insert into events (type, occurred_at, lead_id, partner_id, traffic_provider_id, campaign_id, data)
  select 'lead.autologin_opened', $2, lead_id, partner_id, traffic_provider_id, campaign_id,
         json_build_object('opened_at', $2::text, 'opens', opens, 'redirected', redirected,
                           'single_use', single_use = 1)::text
  from u
)
select redirected, autologin_url as url from u`;

/** One open as it is recorded. */
export interface Open {
  at: string;
  id: string;
  ip: string;
  /** The address's country (geo/ip-country.ts); null: unknown. */
  country: string | null;
  userAgent: string;
}

export async function openInOneStatement(
  db: DB,
  hash: string,
  open: Open,
): Promise<{ redirected: boolean; url: string | null } | null> {
  const query = CompiledQuery.raw(SQL, [hash, open.at, open.id, open.ip, open.userAgent, open.country]);
  const { rows } = await db.executeQuery<{ redirected: boolean; url: string | null }>(query);
  return rows[0] ?? null;
}
