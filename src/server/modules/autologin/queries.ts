import { sql } from 'kysely';
import { compiledOnce } from '../../db/compiled.js';
import { PREPARED, type DB } from '../../db/database.js';

/** The lead's delivery as tracking needs it: its partner's settings and autologin URL. */
export const trackingOf = (db: DB, leadId: string) =>
  db
    .selectFrom('leads')
    .innerJoin('partners', 'partners.id', 'leads.partner_id')
    .select(['leads.partner_id', 'leads.autologin_url', 'partners.track_autologin', 'partners.autologin_single_use'])
    .where('leads.id', '=', leadId)
    .executeTakeFirst();

/** A link once: the same lead and partner always give the same token, so a second insert changes nothing. */
export const insertLink = (
  db: DB,
  row: { token_hash: string; lead_id: string; partner_id: string; single_use: number; created_at: string },
) =>
  db
    .insertInto('autologin_links')
    .values(row)
    .onConflict((oc) => oc.column('token_hash').doNothing())
    .execute();

/** One indexed lookup (the primary key), the lead joined for where the link goes now. */
export const findLink = (db: DB, hash: string) =>
  db
    .selectFrom('autologin_links as l')
    .innerJoin('leads', 'leads.id', 'l.lead_id')
    .select([
      'l.lead_id',
      'l.partner_id',
      'l.single_use',
      'leads.partner_id as lead_partner_id',
      'leads.autologin_url',
      'leads.traffic_provider_id',
      'leads.campaign_id',
    ])
    .where('l.token_hash', '=', hash)
    .executeTakeFirst();

/** Counts an open (whatever it answers); the count after it. The link must exist. */
export async function countOpen(db: DB, hash: string, at: string): Promise<number> {
  const row = await db
    .updateTable('autologin_links')
    .set((eb) => ({
      opens: eb('opens', '+', 1),
      first_open_at: eb.fn.coalesce('first_open_at', eb.val(at)),
      last_open_at: at,
    }))
    .where('token_hash', '=', hash)
    .returning('opens')
    .executeTakeFirstOrThrow();
  return Number(row.opens);
}

export const insertOpen = (
  db: DB,
  o: {
    id: string;
    lead_id: string;
    opened_at: string;
    ip: string;
    ip_country: string | null;
    user_agent: string;
    redirected: boolean;
  },
) =>
  db
    .insertInto('autologin_opens')
    .values({ ...o, redirected: o.redirected ? 1 : 0 })
    .execute();

// The lead detail's two reads (GET /api/leads/{id}, the API's hottest read for scripts), built
// once (db/compiled.ts): Kysely building them cost a tenth of that request.
const linkStatsOnce = compiledOnce((db: DB, leadId: string) =>
  db
    .selectFrom('autologin_links')
    .select((eb) => [
      eb.fn.sum<number>('opens').as('opens'),
      eb.fn.min<string | null>('first_open_at').as('first_open_at'),
      eb.fn.max<string | null>('last_open_at').as('last_open_at'),
      eb.fn.countAll<number>().as('links'),
    ])
    .where('lead_id', '=', leadId)
    .modifyEnd(sql.raw(PREPARED)),
);

/** The lead's tracked links: how many, and their opens (an aggregate: always one row). */
export const linkStats = async (db: DB, leadId: string) => (await linkStatsOnce(db, leadId))[0];

export const recentOpens = compiledOnce((db: DB, leadId: string, limit: number) =>
  db
    .selectFrom('autologin_opens')
    .select(['opened_at', 'ip', 'user_agent', 'ip_country', 'redirected'])
    .where('lead_id', '=', leadId)
    .orderBy('opened_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .modifyEnd(sql.raw(PREPARED)),
);
