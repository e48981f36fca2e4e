// The portal's leads (issue 27): a provider finds its own leads with the filters, pages through
// them, never reads another provider's, and sees each lead only as its settings allow: the FTD
// (and its converted status and CPA payout) after the hold, its sale status mapped or hidden, the
// payout hidden when off, contacts masked and only when on, the same in the CSV.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { providerScope } from '../../db/scope.js';
import type { DB } from '../../db/database.js';
import { insertCampaign, insertLeads, insertTrafficProvider } from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newPortalUser,
  parseCsv,
  postgresOnly,
  type TestApp,
} from '../../../../test/helpers.js';
import { maskEmail, maskPhone } from '../../privacy/mask.js';
import { portalLeadsQuery } from './leads-queries.js';

const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

async function settings(db: DB, provider: string, s: Record<string, number | string>) {
  await db.updateTable('traffic_providers').set(s).where('id', '=', provider).execute();
}

async function world(ta: TestApp) {
  const a = await insertTrafficProvider(ta.db, { name: 'Provider A' });
  const b = await insertTrafficProvider(ta.db, { name: 'Provider B' });
  const cplA = await insertCampaign(ta.db, a, null, { name: 'CPL A' });
  const cpaA = await insertCampaign(ta.db, a, null, { name: 'CPA A' });
  await ta.db
    .updateTable('campaigns')
    .set({ payout: JSON.stringify({ model: 'cpa', amount_cents: 5000, currency: 'USD' }) })
    .where('id', '=', cpaA)
    .execute();
  const campB = await insertCampaign(ta.db, b, null, { name: 'Campaign B' });
  const user = await newPortalUser(ta, a);
  return { a, b, cplA, cpaA, campB, user };
}

const get = async (ta: TestApp, token: string, url: string) => {
  const res = await call(ta.app, token, { method: 'GET', url });
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json();
};

forEachDatabase('portal leads', (engine) => {
  test('search: its own leads only, every filter, keyset paging, another provider’s lead is 404', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    const [l1, l2, l3, l4, l5] = await insertLeads(ta.db, [
      {
        traffic_provider_id: w.a,
        campaign_id: w.cplA,
        created_at: '2026-11-01T10:00:00.000Z',
        status: 'delivered',
        sub_id1: 'click-1',
      },
      {
        traffic_provider_id: w.a,
        campaign_id: w.cplA,
        created_at: '2026-11-02T10:00:00.000Z',
        status: 'rejected',
        country: 'AT',
      },
      {
        traffic_provider_id: w.a,
        campaign_id: w.cpaA,
        created_at: '2026-11-03T10:00:00.000Z',
        status: 'delivered',
        sub_id3: 'banner-7',
      },
      { traffic_provider_id: w.a, campaign_id: w.cpaA, created_at: '2026-11-04T10:00:00.000Z', status: 'duplicate' },
      { traffic_provider_id: w.a, created_at: '2026-11-05T10:00:00.000Z', status: 'failed', sub_id1: 'click-1' },
    ]);
    const [bLead] = await insertLeads(ta.db, [
      { traffic_provider_id: w.b, campaign_id: w.campB, status: 'delivered', sub_id1: 'click-1', country: 'AT' },
    ]);
    const ids = async (query: string, cred = w.user.token) =>
      (await get(ta, cred, `/api/portal/leads?${query}`)).data.map((l: { id: string }) => l.id);

    assert.deepEqual(await ids(''), [l5, l4, l3, l2, l1]);
    assert.deepEqual(await ids('', w.user.key), [l5, l4, l3, l2, l1]);
    assert.deepEqual(await ids('status=delivered'), [l3, l1]);
    assert.deepEqual(await ids('status=rejected,duplicate'), [l4, l2]);
    assert.deepEqual(await ids('country=at'), [l2]);
    assert.deepEqual(await ids(`campaign_id=${w.cpaA}`), [l4, l3]);
    assert.deepEqual(await ids(`campaign_id=${w.campB}`), []);
    assert.deepEqual(await ids('sub_id1=click-1'), [l5, l1]);
    assert.deepEqual(await ids('q=banner-7'), [l3]);
    assert.deepEqual(await ids('q=click-1'), [l5, l1]);
    assert.deepEqual(await ids(`q=${l2.toUpperCase()}`), [l2]);
    assert.deepEqual(await ids(`q=${bLead}`), []);
    // A UUID may be a click id as well as a lead id: both found, each lead once, never B's.
    await ta.db.updateTable('leads').set({ sub_id2: l1, sub_id4: l1 }).where('id', 'in', [l4, bLead]).execute();
    assert.deepEqual(await ids(`q=${l1}`), [l4, l1]);
    // Sub ids are matched as long as intake takes them (500 characters).
    const long = 'x'.repeat(500);
    await ta.db.updateTable('leads').set({ sub_id5: long }).where('id', 'in', [l2, bLead]).execute();
    assert.deepEqual(await ids(`q=${long}`), [l2]);
    assert.deepEqual(await ids(`sub_id5=${long}`), [l2]);
    assert.deepEqual(await ids('date_from=2026-11-02&date_to=2026-11-04'), [l4, l3, l2]);
    assert.deepEqual(await ids('date_from=2026-11-03T10:00:00Z&date_to=2026-11-05T10:00:00Z'), [l4, l3]);

    // Keyset paging: every lead once, in order.
    const seen: string[] = [];
    let url = '/api/portal/leads?limit=2';
    for (;;) {
      const page = await get(ta, w.user.token, url);
      assert.ok(page.data.length <= 2);
      seen.push(...page.data.map((l: { id: string }) => l.id));
      if (!page.next_cursor) break;
      url = `/api/portal/leads?limit=2&cursor=${page.next_cursor}`;
    }
    assert.deepEqual(seen, [l5, l4, l3, l2, l1]);

    const one = await get(ta, w.user.token, `/api/portal/leads/${l3}`);
    assert.equal(one.id, l3);
    assert.equal(one.campaign_name, 'CPA A');
    for (const cred of [w.user.token, w.user.key]) {
      expectProblem(await call(ta.app, cred, { method: 'GET', url: `/api/portal/leads/${bLead}` }), 404, 'not_found');
      expectProblem(await call(ta.app, cred, { method: 'GET', url: '/api/portal/leads/nope' }), 404, 'not_found');
    }

    const bad = await call(ta.app, w.user.token, {
      method: 'GET',
      url: '/api/portal/leads?status=sold&country=Germany',
    });
    const fields = expectProblem(bad, 400, 'validation_failed').errors!.map((e) => e.field);
    assert.deepEqual(fields.sort(), ['country', 'status']);
    const badDate = await call(ta.app, w.user.token, { method: 'GET', url: '/api/portal/leads?date_from=2026-11-40' });
    expectProblem(badDate, 400, 'validation_failed');
    const reversed = await call(ta.app, w.user.token, {
      method: 'GET',
      url: '/api/portal/leads?date_from=2026-11-05&date_to=2026-11-01',
    });
    assert.equal(expectProblem(reversed, 400, 'validation_failed').errors![0].field, 'date_from');
    const cursor = await call(ta.app, w.user.token, { method: 'GET', url: '/api/portal/leads?cursor=garbage' });
    assert.equal(expectProblem(cursor, 400, 'validation_failed').errors![0].field, 'cursor');
    // An operator's token is not a portal credential.
    expectProblem(await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/portal/leads' }), 401, 'unauthorized');
  });

  test('what a lead shows: the FTD hold, sale statuses mapped or hidden, payout, contacts, reasons', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    await settings(ta.db, w.a, {
      ftd_hold_hours: 48,
      portal_sale_status: 1,
      sale_status_map: JSON.stringify({ deposited: 'converted', 'call later': 'callback' }),
    });
    const [ftd, callback, odd, refused] = await insertLeads(ta.db, [
      // An FTD recorded now, on a CPA campaign: its payout is earned by the FTD.
      {
        traffic_provider_id: w.a,
        campaign_id: w.cpaA,
        status: 'delivered',
        sale_status: 'Deposited',
        ftd_at: ago(0),
        cost_cents: 5000,
        email: 'john.doe@example.test',
        phone: '+4915123456767',
      },
      {
        traffic_provider_id: w.a,
        campaign_id: w.cplA,
        status: 'delivered',
        sale_status: 'Call later',
        cost_cents: 1000,
      },
      {
        traffic_provider_id: w.a,
        campaign_id: w.cplA,
        status: 'delivered',
        sale_status: 'Whatever PartnerX says',
        cost_cents: 1000,
      },
      {
        traffic_provider_id: w.a,
        campaign_id: w.cplA,
        status: 'rejected',
        reason: 'Partner ZebraCorp: HTTP 400 bad phone',
      },
    ]);
    const lead = (id: string, cred = w.user.token) => get(ta, cred, `/api/portal/leads/${id}`);

    let l = await lead(ftd);
    assert.equal(l.ftd_at, null, 'in its hold, the FTD is not shown');
    assert.equal(l.sale_status, 'in_progress', 'nor its converted sale status');
    assert.equal(l.payout_cents, 0, 'nor the CPA payout it earns');
    assert.equal(l.currency, 'USD');
    assert.equal((await lead(callback)).sale_status, 'callback');
    assert.equal((await lead(callback)).payout_cents, 1000);
    assert.equal((await lead(odd)).sale_status, 'in_progress');
    const r = await lead(refused);
    assert.equal(r.reason, 'no buyer accepted the lead');
    assert.ok(!JSON.stringify(r).includes('ZebraCorp'));
    // Contacts: hidden by default.
    assert.equal(l.email, null);
    assert.equal(l.phone, null);

    // 49 hours later the FTD is out of its hold: shown, with everything that comes with it.
    const ftdAt = ago(49 * HOUR);
    await ta.db.updateTable('leads').set({ ftd_at: ftdAt }).where('id', '=', ftd).execute();
    l = await lead(ftd, w.user.key);
    assert.equal(l.ftd_at, ftdAt);
    assert.equal(l.sale_status, 'converted');
    assert.equal(l.payout_cents, 5000);
    // A shorter hold shows an FTD sooner.
    await ta.db
      .updateTable('leads')
      .set({ ftd_at: ago(HOUR) })
      .where('id', '=', ftd)
      .execute();
    assert.equal((await lead(ftd)).ftd_at, null);
    await settings(ta.db, w.a, { ftd_hold_hours: 0 });
    assert.notEqual((await lead(ftd)).ftd_at, null);

    // Sale statuses off, payout off, contacts on (masked).
    await settings(ta.db, w.a, { portal_sale_status: 0, portal_payout: 0, portal_contacts: 1 });
    l = await lead(ftd);
    assert.equal(l.sale_status, null);
    assert.equal(l.payout_cents, null);
    assert.equal(l.currency, null);
    assert.equal(l.email, maskEmail('john.doe@example.test'));
    assert.equal(l.phone, maskPhone('+4915123456767'));
    assert.ok(!JSON.stringify(await get(ta, w.user.token, '/api/portal/leads')).includes('john.doe'));
  });

  test('CSV export: the same leads, shown the same way, none of another provider’s', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    await settings(ta.db, w.a, {
      ftd_hold_hours: 48,
      portal_sale_status: 1,
      sale_status_map: '{"deposited":"converted"}',
    });
    const [held, shown] = await insertLeads(ta.db, [
      {
        traffic_provider_id: w.a,
        campaign_id: w.cpaA,
        status: 'delivered',
        sale_status: 'deposited',
        ftd_at: ago(HOUR),
        cost_cents: 5000,
        created_at: ago(3 * HOUR),
        sub_id1: '=cmd()',
      },
      {
        traffic_provider_id: w.a,
        campaign_id: w.cpaA,
        status: 'delivered',
        sale_status: 'deposited',
        ftd_at: ago(50 * HOUR),
        cost_cents: 5000,
        created_at: ago(60 * HOUR),
        email: 'mary@example.test',
      },
    ]);
    await insertLeads(ta.db, [{ traffic_provider_id: w.b, campaign_id: w.campB, sub_id1: 'sub-B-marker' }]);
    const res = await call(ta.app, w.user.key, { method: 'GET', url: '/api/portal/leads/export.csv' });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="leads-.*\.csv"$/);
    const [header, ...rows] = parseCsv(res.body);
    assert.equal(rows.length, 2);
    assert.ok(!res.body.includes('sub-B-marker'));
    const col = (row: string[], name: string) => row[header.indexOf(name)];
    const byId = new Map(rows.map((r) => [col(r, 'id'), r]));
    assert.equal(col(byId.get(held)!, 'ftd_at'), '');
    assert.equal(col(byId.get(held)!, 'sale_status'), 'in_progress');
    assert.equal(col(byId.get(held)!, 'payout_cents'), '0');
    assert.equal(col(byId.get(held)!, 'sub_id1'), "'=cmd()", 'a formula is neutralised');
    assert.notEqual(col(byId.get(shown)!, 'ftd_at'), '');
    assert.equal(col(byId.get(shown)!, 'sale_status'), 'converted');
    assert.equal(col(byId.get(shown)!, 'payout_cents'), '5000');
    assert.equal(col(byId.get(shown)!, 'email'), '', 'contacts hidden by default');
    assert.ok(!res.body.includes('mary@'));
    // The filters apply; a bad one is a 400 before any CSV.
    const one = await call(ta.app, w.user.token, { method: 'GET', url: `/api/portal/leads/export.csv?q=${shown}` });
    assert.equal(parseCsv(one.body).length, 2);
    const bad = await call(ta.app, w.user.token, { method: 'GET', url: '/api/portal/leads/export.csv?status=x' });
    expectProblem(bad, 400, 'validation_failed');
    // Contacts on: masked in the CSV too. The export is audited as the provider user.
    await settings(ta.db, w.a, { portal_contacts: 1 });
    const masked = await call(ta.app, w.user.token, { method: 'GET', url: `/api/portal/leads/export.csv?q=${shown}` });
    assert.ok(masked.body.includes(maskEmail('mary@example.test')) && !masked.body.includes('mary@'));
    const audited = await ta.db
      .selectFrom('audit_log')
      .select(['actor_kind'])
      .where('action', '=', 'portal.leads_exported')
      .execute();
    assert.equal(audited.length, 3, 'each export that ran (the refused one did not)');
    assert.ok(audited.every((a) => a.actor_kind === 'provider_user'));
  });

  test('PATCH /api/portal/me: name and time zone, checked; date filters follow the zone', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    const [late] = await insertLeads(ta.db, [{ traffic_provider_id: w.a, created_at: '2026-11-10T23:30:00.000Z' }]);
    const day = async (d: string) =>
      (await get(ta, w.user.token, `/api/portal/leads?date_from=${d}&date_to=${d}`)).data.map(
        (l: { id: string }) => l.id,
      );
    assert.deepEqual(await day('2026-11-10'), [late]);
    const res = await call(ta.app, w.user.token, {
      method: 'PATCH',
      url: '/api/portal/me',
      payload: { timezone: 'europe/berlin', name: 'Aff Ops' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().user.timezone, 'Europe/Berlin');
    assert.equal(res.json().user.name, 'Aff Ops');
    assert.equal((await get(ta, w.user.token, '/api/portal/me')).user.timezone, 'Europe/Berlin');
    assert.deepEqual(await day('2026-11-10'), []);
    assert.deepEqual(await day('2026-11-11'), [late]);
    const bad = await call(ta.app, w.user.token, {
      method: 'PATCH',
      url: '/api/portal/me',
      payload: { timezone: 'Mars/Base' },
    });
    assert.equal(expectProblem(bad, 400, 'validation_failed').errors![0].field, 'timezone');
    const empty = await call(ta.app, w.user.token, { method: 'PATCH', url: '/api/portal/me', payload: {} });
    expectProblem(empty, 400, 'validation_failed');
    const audited = await ta.db
      .selectFrom('audit_log')
      .select(['actor_kind'])
      .where('action', '=', 'portal.profile_updated')
      .execute();
    assert.deepEqual(audited, [{ actor_kind: 'provider_user' }]);
  });
});

test('q looks a lead up by its primary key and the sub id indexes, never by walking the provider (SQLite plan)', async (t) => {
  const ta = await buildTestApp(t, 'sqlite');
  const provider = await insertTrafficProvider(ta.db);
  const filter = { from: null, to: null, status: [], country: [], subIds: {}, q: 'click-1' };
  const c = portalLeadsQuery(ta.db, providerScope(provider), filter, null, 50).compile();
  const plan = await ta.db.executeQuery(CompiledQuery.raw(`explain query plan ${c.sql}`, [...c.parameters]));
  const text = plan.rows.map((r) => (r as { detail: string }).detail).join(' | ');
  for (const n of [1, 2, 3, 4, 5])
    assert.match(
      text,
      new RegExp(`USING INDEX leads_provider_sub_id${n} \\(traffic_provider_id=\\? AND sub_id${n}=\\?\\)`),
      text,
    );
  assert.match(text, /USING (COVERING )?INDEX sqlite_autoindex_leads_1 \(id=\?\)/, text);
  assert.doesNotMatch(text, /SCAN (l|s|leads)\b/, text);
});

postgresOnly(
  'PostgreSQL knows a campaign belongs to one provider (extended statistics), so it plans a provider’s campaign well',
  async (t) => {
    const ta = await buildTestApp(t, 'postgres');
    const { rows } = await sql<{ stxname: string; stxkind: string[] | string }>`
    select stxname, stxkind from pg_statistic_ext
    where stxname = 'leads_provider_campaign' and stxnamespace = current_schema()::regnamespace`.execute(ta.db);
    assert.equal(rows.length, 1);
    assert.match(String(rows[0].stxkind), /f/); // f: functional dependencies
  },
);
