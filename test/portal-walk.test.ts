// The traffic-provider portal's isolation (issue 27), walked from the server's own route table,
// so a route is covered the day it is added. Two providers, A and B, each with a portal user, a
// key, a campaign, leads, a postback and its delivery:
//   - every portal route, with A's session and with A's key, every path parameter filled with
//     each of B's ids (plain, and every spelling of the path over real HTTP): 403/404 (400 for a
//     malformed one), never 2xx, never 5xx, never a trace of B in the answer; the list routes,
//     also with B's ids in the query, answer none of B's data; and B's rows stay as they were;
//   - every operator route with A's session and with A's key: 401 or 403, never 5xx;
//   - every portal route with an operator's session and key (the owner's, holding everything): 401.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import type { DB } from '../src/server/db/database.js';
import type { RouteInfo } from '../src/server/types.js';
import { insertCampaign, insertFlow, insertLeads, insertPartner } from './fixtures.js';
import { FAKE_INDEX, fakeBuild } from './fake-build.js';
import { buildTestApp, call, forEachDatabase, newApiKey, newPortalUser, type TestApp } from './helpers.js';
import { sendRaw } from './raw-http.js';
import { spellings } from './path-spellings.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** One provider's world, made through the operators' API where it exists (so it is what real use makes). */
async function providerWorld(ta: TestApp, label: string) {
  const created = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/traffic-providers',
    payload: { name: `Provider ${label} Zebra${label}` },
  });
  assert.equal(created.statusCode, 201, created.body);
  const providerId = created.json().id as string;
  const partner = await insertPartner(ta.db, { name: `Partner of ${label}` });
  const flow = await insertFlow(ta.db, [partner]);
  const campaign = await insertCampaign(ta.db, providerId, flow);
  const leads = await insertLeads(ta.db, [
    {
      traffic_provider_id: providerId,
      campaign_id: campaign,
      partner_id: partner,
      status: 'delivered',
      email: `lead-${label}@marker-${label}.test`,
      sub_id1: `sub-${label}-marker`,
      first_name: `First${label}marker`,
    },
    { traffic_provider_id: providerId, campaign_id: campaign, status: 'rejected', reason: 'no partner' },
  ]);
  const pb = await call(ta.app, ta.ownerToken, {
    method: 'PUT',
    url: `/api/traffic-providers/${providerId}/postbacks`,
    payload: { postbacks: [{ event_type: 'lead.received', campaign_id: null, url: `http://127.0.0.1:9/pb-${label}` }] },
  });
  assert.equal(pb.statusCode, 200, pb.body);
  const user = await newPortalUser(ta, providerId);
  return {
    providerId,
    partner,
    flow,
    campaign,
    leads,
    user,
    postbackIds: (
      await ta.db.selectFrom('provider_postbacks').select('id').where('traffic_provider_id', '=', providerId).execute()
    ).map((p) => p.id),
  };
}

type World = Awaited<ReturnType<typeof providerWorld>>;

/** Every id B owns that a portal route could be asked for. */
async function idsOf(db: DB, w: World): Promise<string[]> {
  const deliveries = await db
    .selectFrom('event_deliveries')
    .innerJoin('events', 'events.id', 'event_deliveries.event_id')
    .select('event_deliveries.id')
    .where('events.traffic_provider_id', '=', w.providerId)
    .execute();
  return [
    ...w.leads,
    w.campaign,
    w.providerId,
    w.user.id,
    w.user.keyId,
    ...w.postbackIds,
    ...deliveries.map((d) => String(d.id)),
  ];
}

/** What must never appear in an answer to A: B's ids, names and lead details. */
const tracesOf = (w: World, ids: string[]) => [
  ...ids.filter((id) => id.length > 6), // numeric delivery ids are too short to search for
  `ZebraB`,
  `marker-B`,
  `sub-B-marker`,
  `FirstBmarker`,
  w.user.email,
];

/** The routes of the portal, and every operator route a credential can reach. */
const portalRoutes = (ta: TestApp) => ta.app.routeTable.filter((r) => !r.hidden && r.access.portal);
const operatorRoutes = (ta: TestApp) =>
  ta.app.routeTable.filter(
    (r) =>
      !r.hidden && !r.access.portal && !r.access.public && !r.access.intake && !r.access.postback && !r.access.metrics,
  );

const fill = (r: RouteInfo, id: string) => r.url.replace(/:[A-Za-z_]+/g, encodeURIComponent(id));

/** Row snapshot of B's own records: none of A's requests may change them. */
async function rowsOfB(db: DB, w: World) {
  const pick = async (
    table: 'provider_postbacks' | 'provider_api_keys' | 'provider_users' | 'campaigns',
    col: string,
    v: string,
  ) =>
    JSON.stringify(
      await db
        .selectFrom(table)
        .selectAll()
        .where(col as never, '=', v as never)
        .orderBy('id' as never)
        .execute(),
    );
  return [
    await pick('provider_postbacks', 'traffic_provider_id', w.providerId),
    await pick('provider_users', 'traffic_provider_id', w.providerId),
    (await pick('provider_api_keys', 'provider_user_id', w.user.id)).replace(/"last_used_at":"[^"]*"/g, ''),
    await pick('campaigns', 'traffic_provider_id', w.providerId),
    JSON.stringify(
      await db.selectFrom('leads').selectAll().where('traffic_provider_id', '=', w.providerId).orderBy('id').execute(),
    ),
    JSON.stringify(await db.selectFrom('traffic_providers').selectAll().where('id', '=', w.providerId).execute()),
  ];
}

forEachDatabase('portal walk', (engine) => {
  test("a provider's session and key never reach another provider's data, nor any operator route", async (t) => {
    const ta = await buildTestApp(t, engine, {
      env: { RATE_LIMIT_PER_IP: '0', RATE_LIMIT_PER_KEY: '0' },
      webDir: fakeBuild(t),
    });
    const A = await providerWorld(ta, 'A');
    const B = await providerWorld(ta, 'B');
    await ta.app.events.fanOut();
    const bIds = await idsOf(ta.db, B);
    const traces = tracesOf(B, bIds);
    const before = await rowsOfB(ta.db, B);
    await ta.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (ta.app.server.address() as { port: number }).port;
    const origin = `http://127.0.0.1:${port}`;
    // "/API/…" is no API path: the dashboard's page answers a GET of it, which holds no data.
    const dashboardPage = (await sendRaw(port, 'GET', '/', {})).body;
    assert.equal(dashboardPage, FAKE_INDEX);

    const portal = portalRoutes(ta);
    assert.ok(portal.length >= 4, `${portal.length} portal routes`);
    const failures: string[] = [];
    // A trace the request itself carried may be echoed back (a 404 naming the path); any other is a leak.
    const leak = (where: string, body: string) => {
      const found = traces.filter(
        (s) => body.includes(s) && !where.includes(s) && !where.includes(encodeURIComponent(s)),
      );
      if (found.length) failures.push(`${where} shows B's ${found.join(', ')}`);
    };
    let sent = 0;
    for (const cred of [A.user.token, A.user.key]) {
      const kind = cred === A.user.token ? 'session' : 'key';
      const headers = { authorization: `Bearer ${cred}` };
      for (const r of portal) {
        const body = WRITES.has(r.method) && r.method !== 'DELETE' ? {} : undefined;
        if (!r.url.includes(':')) {
          // A list or a singleton: whatever it answers, nothing of B; with B's ids as filters too.
          const query = ['campaign_id', 'traffic_provider_id', 'lead_id', 'id', 'q', 'sub_id1']
            .map(
              (k) =>
                `${k}=${encodeURIComponent(k === 'q' ? B.user.email : k === 'sub_id1' ? 'sub-B-marker' : k === 'campaign_id' ? B.campaign : k === 'traffic_provider_id' ? B.providerId : B.leads[0])}`,
            )
            .join('&');
          for (const url of [r.url, `${r.url}?${query}`]) {
            if (WRITES.has(r.method) && url !== r.url) continue;
            // Writes without an id act on A's own things only: they are exercised by their own tests.
            if (WRITES.has(r.method)) continue;
            const res = await call(ta.app, cred, { method: r.method as 'GET', url });
            sent++;
            if (res.statusCode >= 500) failures.push(`${kind} ${r.method} ${url} → ${res.statusCode}`);
            leak(`${kind} ${r.method} ${url}`, res.body);
          }
          continue;
        }
        for (const id of bIds) {
          const url = fill(r, id);
          const res = await call(ta.app, cred, { method: r.method as 'GET', url, ...(body ? { payload: body } : {}) });
          sent++;
          if (res.statusCode < 400 || res.statusCode >= 500 || res.statusCode === 401)
            failures.push(`${kind} ${r.method} ${url} → ${res.statusCode} ${res.body.slice(0, 160)}`);
          leak(`${kind} ${r.method} ${url}`, res.body);
        }
        // Every spelling, over real HTTP, with B's first lead id (and every other param alike).
        // "/API/…" is no API path: the dashboard's page answers a GET of it, which holds no data.
        for (const target of spellings(fill(r, B.leads[0]), origin)) {
          const res = await sendRaw(port, r.method, target, headers, body ? '{}' : undefined);
          sent++;
          if ((res.status >= 200 && res.status < 300 && res.body !== dashboardPage) || res.status >= 500)
            failures.push(`${kind} ${r.method} ${target} → ${res.status} ${res.body.slice(0, 160)}`);
          leak(`${kind} ${r.method} ${target}`, res.body);
        }
      }
      // Operator routes: never for a provider principal.
      for (const r of operatorRoutes(ta)) {
        const url = fill(r, A.leads[0]);
        const res = await call(ta.app, cred, {
          method: r.method as 'GET',
          url,
          ...(WRITES.has(r.method) && r.method !== 'DELETE' ? { payload: {} } : {}),
        });
        sent++;
        if (res.statusCode !== 401 && res.statusCode !== 403)
          failures.push(`${kind} on operator route ${r.method} ${url} → ${res.statusCode} ${res.body.slice(0, 160)}`);
      }
    }
    // Operators' credentials (the owner's session, and a key with every scope) never open the portal.
    const ownerKey = (await newApiKey(ta, ALL_PERMISSIONS)).secret;
    for (const cred of [ta.ownerToken, ownerKey]) {
      for (const r of portal) {
        const res = await call(ta.app, cred, { method: r.method as 'GET', url: fill(r, A.leads[0]) });
        sent++;
        if (res.statusCode !== 401) failures.push(`operator credential on ${r.method} ${r.url} → ${res.statusCode}`);
      }
    }
    assert.deepEqual(failures, [], `${failures.length} of ${sent} requests misbehaved`);
    assert.deepEqual(await rowsOfB(ta.db, B), before, "A's requests changed B's records");
    assert.ok(sent > 200, `${sent} requests`);
  });
});
