import { type Kysely } from 'kysely';

// Tracked autologin links (issue 28, item 3). Per partner, off by default: answer the traffic
// provider with Leadgate's own link (/go/{token}) instead of the partner's autologin URL, and
// record each open; optionally a link opens once. A link is stored only as the SHA-256 of its
// token (the token itself is re-derived when needed: modules/autologin/tokens.ts); each open is
// a row of its own (time, address, user agent, and a country column left empty until Leadgate
// has an IP-to-country source).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('partners')
    .addColumn('track_autologin', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('partners')
    .addColumn('autologin_single_use', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('autologin_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('lead_id', 'text', (c) => c.notNull().references('leads.id'))
    .addColumn('partner_id', 'text', (c) => c.notNull().references('partners.id'))
    .addColumn('single_use', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('opens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('first_open_at', 'text')
    .addColumn('last_open_at', 'text')
    .execute();
  await db.schema.createIndex('autologin_links_lead').on('autologin_links').columns(['lead_id', 'partner_id']).execute();

  await db.schema
    .createTable('autologin_opens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('lead_id', 'text', (c) => c.notNull().references('leads.id'))
    .addColumn('opened_at', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text', (c) => c.notNull())
    // The address's country, for the "against the lead's country": null until a source exists.
    .addColumn('ip_country', 'text')
    // 1: answered with the redirect; 0: a single-use link opened again (the plain page)
    .addColumn('redirected', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('autologin_opens_lead').on('autologin_opens').columns(['lead_id', 'opened_at']).execute();
}
