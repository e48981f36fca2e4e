// Operators scoped to their accounts (issue 27 item 5): a role limited to one traffic provider
// and one partner. Its operator (a session) and a key it made walk every operator GET route of the
// route table, with ids of objects in and out of the scope and query strings that produce rows
// (exports included), and no lead, report row, export line or event outside the scope ever comes
// back, and no 5xx. The walk reads the route table, so a new route is covered without editing.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import type { DB } from '../src/server/db/database.js';
import { nowIso } from '../src/server/db/ids.js';
import { ACCOUNT_WIDE } from '../src/server/modules/roles/scope.js';
import { ownerCheck } from '../src/server/modules/webhooks/access.js';
import {
  insertAttempt,
  insertCampaign,
  insertFlow,
  insertLeads,
  insertPartner,
  insertTrafficProvider,
} from './fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  login,
  newApiKey,
  OWNER,
  type Engine,
  type TestApp,
} from './helpers.js';

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** What a scoped role may hold: every permission but the account-wide ones. */
const SCOPED_PERMISSIONS = ALL_PERMISSIONS.filter((p) => !ACCOUNT_WIDE.includes(p));

async function insertEvent(
  db: DB,
  e: { type: string; lead_id?: string; partner_id?: string; traffic_provider_id?: string; data: object },
) {
  const row = await db
    .insertInto('events')
    .values({
      type: e.type,
      occurred_at: nowIso(),
      lead_id: e.lead_id ?? null,
      partner_id: e.partner_id ?? null,
      traffic_provider_id: e.traffic_provider_id ?? null,
      campaign_id: null,
      data: JSON.stringify(e.data),
      dedupe_key: null,
      fanned: 1,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function insertPostbackDelivery(db: DB, eventId: number | string, providerId: string, leadId: string) {
  const now = nowIso();
  const row = await db
    .insertInto('event_deliveries')
    .values({
      event_id: eventId,
      destination_kind: 'postback',
      destination_id: providerId,
      lead_id: leadId,
      state: 'delivered',
      attempts: 1,
      created_at: now,
      next_attempt_at: now,
      expires_at: now,
      lease_until: null,
      lease_token: null,
      last_attempt_at: now,
      last_status: 200,
      last_error: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return String(row.id);
}

/**
 * Two providers (A in scope, B out) and two partners (X in, Y out); a lead of each pair, an
 * undelivered one, their attempts, sale statuses, alerts and provider postback deliveries.
 */
async function world(ta: TestApp) {
  const db = ta.db;
  const A = await insertTrafficProvider(db, { name: 'Provider InScopeA' });
  const B = await insertTrafficProvider(db, { name: 'Provider HiddenB' });
  const X = await insertPartner(db, { name: 'Partner InScopeX' });
  const Y = await insertPartner(db, { name: 'Partner HiddenY' });
  await db.updateTable('partners').set({ daily_cap: 100 }).where('id', 'in', [X, Y]).execute();
  const flow = await insertFlow(db, [X, Y], { name: 'Shared flow' });
  const cA = await insertCampaign(db, A, flow, { name: 'Campaign InScopeA' });
  const cB = await insertCampaign(db, B, flow, { name: 'Campaign HiddenB' });
  const now = Date.now();
  const delivered = (partner: string, sale: string) => ({
    partner_id: partner,
    status: 'delivered' as const,
    delivered_at: new Date(now - 60_000).toISOString(),
    status_updated_at: new Date(now - 60_000).toISOString(),
    ftd_at: new Date(now - 30_000).toISOString(),
    sale_status: sale,
    crg_bp: 1000,
    revenue_cents: 5000,
    cost_cents: 1000,
  });
  const leads = {
    AX: { traffic_provider_id: A, campaign_id: cA, flow_id: flow, ...delivered(X, 'SeenSaleAX'), last_name: 'SeenAX' },
    AY: {
      traffic_provider_id: A,
      campaign_id: cA,
      flow_id: flow,
      ...delivered(Y, 'HiddenSaleAY'),
      last_name: 'HiddenAY',
    },
    BX: {
      traffic_provider_id: B,
      campaign_id: cB,
      flow_id: flow,
      ...delivered(X, 'HiddenSaleBX'),
      last_name: 'HiddenBX',
    },
    BY: {
      traffic_provider_id: B,
      campaign_id: cB,
      flow_id: flow,
      ...delivered(Y, 'HiddenSaleBY'),
      last_name: 'HiddenBY',
    },
    // Refused by every partner: no partner of the scope has it.
    A0: {
      traffic_provider_id: A,
      campaign_id: cA,
      flow_id: flow,
      status: 'rejected' as const,
      reason: 'HiddenReasonA0',
      last_name: 'HiddenA0',
    },
  };
  const keys = Object.keys(leads) as (keyof typeof leads)[];
  const rows = keys.map((k) => ({ ...leads[k], email: `lead-${k.toLowerCase()}@example.test` }));
  const leadIds = await insertLeads(db, rows);
  const lead = Object.fromEntries(keys.map((k, i) => [k, leadIds[i]])) as Record<keyof typeof leads, string>;
  // The in-scope lead was offered to Y first: that attempt is Y's, not the scope's.
  await insertAttempt(db, {
    lead_id: lead.AX,
    partner_id: Y,
    attempt_no: 1,
    outcome: 'rejected',
    reason: 'HiddenReasonY',
  });
  await insertAttempt(db, { lead_id: lead.AX, partner_id: X, attempt_no: 2 });
  await insertAttempt(db, { lead_id: lead.AY, partner_id: Y, attempt_no: 1 });
  await insertAttempt(db, { lead_id: lead.BX, partner_id: X, attempt_no: 1 });
  await insertAttempt(db, { lead_id: lead.BY, partner_id: Y, attempt_no: 1 });
  await insertAttempt(db, {
    lead_id: lead.A0,
    partner_id: Y,
    attempt_no: 1,
    outcome: 'rejected',
    reason: 'HiddenReasonA0',
  });

  // Alerts about each partner and provider.
  const failing = (partner: string) => ({
    type: 'partner.failing',
    partner_id: partner,
    data: { failures: 5, paused: false, last_reason: 'x' },
  });
  await insertEvent(db, failing(X));
  await insertEvent(db, failing(Y));
  const silent = (provider: string) => ({
    type: 'traffic_provider.silent',
    traffic_provider_id: provider,
    data: { hours: 3, last_lead_at: null },
  });
  await insertEvent(db, silent(A));
  await insertEvent(db, silent(B));
  // Provider A's postbacks about its leads: one of X (in), one of Y (out).
  const leadEvent = (id: string, partner: string) => ({
    type: 'lead.delivered',
    lead_id: id,
    partner_id: partner,
    traffic_provider_id: A,
    data: { status: 'delivered', country: 'DE', sub_id1: null },
  });
  const deliveryIn = await insertPostbackDelivery(db, await insertEvent(db, leadEvent(lead.AX, X)), A, lead.AX);
  const deliveryOut = await insertPostbackDelivery(db, await insertEvent(db, leadEvent(lead.AY, Y)), A, lead.AY);

  // What must never come back to the scoped operator.
  const hidden = [
    B,
    'Provider HiddenB',
    Y,
    'Partner HiddenY',
    cB,
    'Campaign HiddenB',
    'HiddenReasonY',
    ...(['AY', 'BX', 'BY', 'A0'] as const).flatMap((k) => [
      lead[k],
      `Hidden${k}`,
      `lead-${k.toLowerCase()}@example.test`,
      ...(k === 'A0' ? ['HiddenReasonA0'] : [`HiddenSale${k}`]),
    ]),
  ];
  return { A, B, X, Y, flow, cA, cB, lead, deliveryIn, deliveryOut, hidden };
}

type World = Awaited<ReturnType<typeof world>>;

/** A role limited to provider A and partner X, an operator holding it (signed in) and a key it made. */
async function scopedOperator(ta: TestApp, w: World, permissions: string[] = SCOPED_PERMISSIONS) {
  const role = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/roles',
    payload: { name: 'Affiliate manager A/X', permissions, scope: { traffic_provider_ids: [w.A], partner_ids: [w.X] } },
  });
  assert.equal(role.statusCode, 201, role.body);
  assert.deepEqual(role.json().scope, { traffic_provider_ids: [w.A], partner_ids: [w.X] });
  const email = 'scoped@example.test';
  const password = 'scoped-password-1';
  const op = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/operators',
    payload: { email, name: 'Scoped', password, role_id: role.json().id, current_password: OWNER.password },
  });
  assert.equal(op.statusCode, 201, op.body);
  const token = await login(ta.app, email, password);
  const key = await newApiKey(ta, permissions, { token });
  return {
    roleId: role.json().id as string,
    operatorId: op.json().id as string,
    token,
    key: key.secret,
    keyId: key.id,
  };
}

type Param = { name: string; in: string; schema?: Record<string, any> };

/** The values an enum-like query schema allows (enum, a union of consts, an array of them). */
const enumOf = (s: Record<string, any> | undefined): string[] | null =>
  s?.enum ??
  s?.items?.enum ??
  (s?.anyOf?.every((x: any) => x.const !== undefined) ? s.anyOf.map((x: any) => x.const) : null);

/** Query strings for a route: ones that produce rows (each date type, each grouping) and ones that ask for the hidden objects outright. */
function queries(params: Param[], w: World, now: number): URLSearchParams[] {
  const names = new Set(params.map((p) => p.name));
  const base = new URLSearchParams();
  if (names.has('limit')) base.set('limit', '500');
  if (names.has('date_from')) base.set('date_from', day(now - 30 * DAY));
  if (names.has('date_to')) base.set('date_to', day(now + DAY));
  for (const flag of ['include_archived', 'total', 'all']) if (names.has(flag)) base.set(flag, 'true');
  const out = [base];
  const vary = (name: string, value: string) => {
    const q = new URLSearchParams(base);
    q.set(name, value);
    out.push(q);
  };
  for (const p of params) {
    if (['date_type', 'group_by', 'then_by', 'state'].includes(p.name)) {
      for (const v of enumOf(p.schema) ?? []) vary(p.name, v);
    }
  }
  const asks: Record<string, string> = {
    traffic_provider_id: w.B,
    partner_id: w.Y,
    campaign_id: w.cB,
    id: w.lead.BY,
    q: 'HiddenBY',
    sale_status: 'HiddenSaleBY',
  };
  for (const [name, value] of Object.entries(asks)) if (names.has(name)) vary(name, value);
  return out;
}

/** Ids to put in each path parameter: the scope's objects and the hidden ones. */
function pathIds(url: string, w: World, op: { roleId: string; operatorId: string; keyId: string }) {
  const module = url.split('/')[2];
  const byModule: Record<string, { in: string[]; out: string[] }> = {
    partners: { in: [w.X], out: [w.Y] },
    'traffic-providers': { in: [w.A], out: [w.B] },
    campaigns: { in: [w.cA], out: [w.cB] },
    leads: { in: [w.lead.AX], out: [w.lead.AY, w.lead.BX, w.lead.BY, w.lead.A0] },
    flows: { in: [w.flow], out: [] },
    roles: { in: [op.roleId], out: [] },
    operators: { in: [op.operatorId], out: [] },
    'api-keys': { in: [op.keyId], out: [] },
  };
  const ids = byModule[module] ?? { in: ['x1'], out: [] };
  const fill = (id: string, delivery: string) =>
    url
      .replace(/:id\b/, id)
      .replace(/:deliveryId\b/, delivery)
      .replace(/:[A-Za-z_]+/g, 'x1');
  if (!url.includes(':id')) return [{ path: fill('x1', 'x1'), outOfScope: false }];
  const targets: { path: string; outOfScope: boolean }[] = [];
  for (const id of ids.in) {
    targets.push({ path: fill(id, w.deliveryIn), outOfScope: false });
    if (url.includes(':deliveryId')) targets.push({ path: fill(id, w.deliveryOut), outOfScope: true });
  }
  for (const id of ids.out) targets.push({ path: fill(id, w.deliveryIn), outOfScope: true });
  return targets;
}

/** Every operator GET route, walked with the credential; what leaked, what broke. */
async function walk(ta: TestApp, w: World, credential: string, op: Parameters<typeof pathIds>[2]) {
  const doc = (await ta.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  const routes = ta.app.routeTable.filter(
    (r) =>
      r.method === 'GET' &&
      r.url.startsWith('/api/') &&
      !r.hidden &&
      !r.access.public &&
      !r.access.intake &&
      !r.access.postback &&
      !r.access.metrics &&
      !r.access.portal,
  );
  assert.ok(routes.length > 40, `${routes.length} operator GET routes`);
  const now = Date.now();
  const problems: string[] = [];
  let answered = 0;
  for (const r of routes) {
    const openapiPath = r.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const params: Param[] = (doc.paths[openapiPath]?.get?.parameters ?? []).filter((p: Param) => p.in === 'query');
    for (const { path, outOfScope } of pathIds(r.url, w, op)) {
      for (const q of queries(params, w, now)) {
        const url = q.size ? `${path}?${q}` : path;
        const res = await call(ta.app, credential, { method: 'GET', url });
        if (res.statusCode >= 500) problems.push(`${url} → ${res.statusCode} ${res.body.slice(0, 200)}`);
        if (res.statusCode >= 400) continue;
        answered++;
        if (outOfScope) problems.push(`${url} → ${res.statusCode} for an object out of the scope`);
        for (const h of w.hidden) if (res.body.includes(h)) problems.push(`${url} shows ${h}`);
      }
    }
  }
  return { problems, answered };
}

async function setup(t: TestContext, engine: Engine) {
  const ta = await buildTestApp(t, engine);
  const w = await world(ta);
  const op = await scopedOperator(ta, w);
  return { ta, w, op };
}

forEachDatabase('scoped operator', (engine) => {
  test('walks every operator GET route, session and key: nothing outside its provider and partner, no 5xx', async (t) => {
    const { ta, w, op } = await setup(t, engine);
    // The owner sees the hidden data on the same routes: the walk can find it.
    const owner = await walk(ta, w, ta.ownerToken, op);
    assert.ok(owner.problems.filter((p) => p.includes(' shows ')).length > 50, 'the owner sees the hidden data');
    for (const credential of [op.token, op.key]) {
      const { problems, answered } = await walk(ta, w, credential, op);
      assert.deepEqual(problems, []);
      assert.ok(answered > 60, `${answered} answers`);
    }
    // And it does see its own.
    const search = await call(ta.app, op.token, { method: 'GET', url: '/api/leads/search?date_type=registration' });
    assert.deepEqual(
      search.json().data.map((l: { id: string }) => l.id),
      [w.lead.AX],
    );
    const detail = await call(ta.app, op.key, { method: 'GET', url: `/api/leads/${w.lead.AX}` });
    assert.deepEqual(
      detail.json().attempts.map((a: { partner_id: string }) => a.partner_id),
      [w.X],
      "the lead's attempt at Y is not shown",
    );
    const csv = await call(ta.app, op.key, { method: 'GET', url: '/api/leads/export?date_type=registration' });
    assert.equal(csv.body.trim().split('\r\n').length, 2, 'a header and the one lead');
  });

  test('writes on objects out of the scope answer 404', async (t) => {
    const { ta, w, op } = await setup(t, engine);
    const tries = [
      { method: 'PATCH', url: `/api/partners/${w.Y}`, payload: { name: 'Taken' }, what: 'partner' },
      { method: 'PATCH', url: `/api/traffic-providers/${w.B}`, payload: { name: 'Taken' }, what: 'traffic provider' },
      { method: 'PATCH', url: `/api/campaigns/${w.cB}`, payload: { name: 'Taken' }, what: 'campaign' },
      { method: 'POST', url: `/api/leads/${w.lead.BX}/redeliver`, payload: { partner_id: w.X }, what: 'lead' },
      { method: 'POST', url: `/api/traffic-providers/${w.B}/rotate-token`, payload: {}, what: 'traffic provider' },
      {
        method: 'PUT',
        url: `/api/traffic-providers/${w.B}/postbacks`,
        payload: { postbacks: [] },
        what: 'traffic provider',
      },
      { method: 'DELETE', url: `/api/partners/${w.Y}`, what: 'partner' },
      { method: 'POST', url: `/api/leads/${w.lead.BX}/conversion`, payload: { sale_status: 'Taken' }, what: 'lead' },
    ] as const;
    for (const credential of [op.token, op.key]) {
      for (const { what, ...req } of tries) {
        const res = await call(ta.app, credential, req);
        assert.equal(res.statusCode, 404, `${req.method} ${req.url}: ${res.body}`);
      }
    }
    // A campaign for a provider out of the scope names a provider it does not know.
    const made = await call(ta.app, op.token, {
      method: 'POST',
      url: '/api/campaigns',
      payload: { name: 'Sneaky', traffic_provider_id: w.B, payout: { model: 'cpl', amount: 1 } },
    });
    const body = expectProblem(made, 400, 'validation_failed');
    assert.ok(
      body.errors?.some((e) => e.field === 'traffic_provider_id'),
      made.body,
    );
    // Nor adds a provider or a partner: it would be out of its own scope at once.
    for (const [url, what, payload] of [
      ['/api/traffic-providers', 'traffic provider', { name: 'New one' }],
      ['/api/partners', 'partner', { name: 'New one', integration: { url: 'http://buyer.example/leads' } }],
    ] as const) {
      const add = await call(ta.app, op.token, { method: 'POST', url, payload });
      const p = expectProblem(add, 403, 'forbidden');
      assert.match(p.detail, new RegExp(`limited to some ${what}s`));
    }
    // The routing simulation needs flows:edit, which reaches the whole account: no scoped role holds it.
    const sim = await call(ta.app, op.token, {
      method: 'POST',
      url: '/api/routing/simulate',
      payload: { country: 'DE', flow_id: w.flow },
    });
    expectProblem(sim, 403, 'forbidden');
    // Nothing changed.
    const names = await ta.db.selectFrom('partners').select('name').where('id', '=', w.Y).executeTakeFirstOrThrow();
    assert.equal(names.name, 'Partner HiddenY');
  });

  test('a role change narrows at once, for the session and the key alike', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    const op = await scopedOperator(ta, w);
    // Widened to every provider and partner: BY is readable.
    const widen = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${op.roleId}`,
      payload: { scope: { traffic_provider_ids: null, partner_ids: null } },
    });
    assert.equal(widen.statusCode, 200, widen.body);
    for (const c of [op.token, op.key]) {
      assert.equal((await call(ta.app, c, { method: 'GET', url: `/api/leads/${w.lead.BY}` })).statusCode, 200);
    }
    // Narrowed to provider A alone: BY is gone on the very next request, AY (partner Y) is back.
    const narrow = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${op.roleId}`,
      payload: { scope: { traffic_provider_ids: [w.A], partner_ids: null } },
    });
    assert.equal(narrow.statusCode, 200, narrow.body);
    assert.deepEqual(narrow.json().scope, { traffic_provider_ids: [w.A], partner_ids: null });
    for (const c of [op.token, op.key]) {
      expectProblem(await call(ta.app, c, { method: 'GET', url: `/api/leads/${w.lead.BY}` }), 404, 'not_found');
      assert.equal((await call(ta.app, c, { method: 'GET', url: `/api/leads/${w.lead.AY}` })).statusCode, 200);
      const count = await call(ta.app, c, { method: 'GET', url: '/api/leads/count?date_type=registration' });
      assert.equal(count.json().count, 3, 'AX, AY and A0');
    }
  });
});

forEachDatabase('role scope API', (engine) => {
  test('ids are checked, account-wide permissions refused, the admin role never scoped, no one grants a wider scope', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    const make = (token: string, body: object) =>
      call(ta.app, token, { method: 'POST', url: '/api/roles', payload: { name: `r${Math.random()}`, ...body } });

    const unknown = await make(ta.ownerToken, {
      permissions: ['leads:view'],
      scope: { traffic_provider_ids: ['no-such-provider'], partner_ids: ['no-such-partner'] },
    });
    const e1 = expectProblem(unknown, 400, 'validation_failed');
    assert.deepEqual(e1.errors?.map((e) => e.field).sort(), ['scope.partner_ids', 'scope.traffic_provider_ids']);

    const wide = await make(ta.ownerToken, {
      permissions: ['leads:view', 'audit:view'],
      scope: { traffic_provider_ids: [w.A], partner_ids: null },
    });
    const e2 = expectProblem(wide, 400, 'validation_failed');
    assert.deepEqual(
      e2.errors?.map((e) => e.field),
      ['permissions'],
    );
    assert.match(e2.detail, /audit:view/);

    // An open role answers its scope as nulls.
    const open = await make(ta.ownerToken, { permissions: ['leads:view'] });
    assert.deepEqual(open.json().scope, { traffic_provider_ids: null, partner_ids: null });

    // The admin role is never scoped: it cannot be changed at all.
    const roles = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/roles' });
    const admin = roles.json().data.find((r: { builtin: boolean }) => r.builtin);
    assert.deepEqual(admin.scope, { traffic_provider_ids: null, partner_ids: null });
    const scopeAdmin = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${admin.id}`,
      payload: { scope: { traffic_provider_ids: [w.A], partner_ids: null } },
    });
    expectProblem(scopeAdmin, 409, 'conflict');

    // A scoped operator who may edit roles grants no more than its own scope.
    const op = await scopedOperator(ta, w, [...SCOPED_PERMISSIONS]);
    for (const scope of [
      { traffic_provider_ids: null, partner_ids: null },
      { traffic_provider_ids: [w.A, w.B], partner_ids: [w.X] },
      { traffic_provider_ids: [w.A], partner_ids: null },
    ]) {
      expectProblem(await make(op.token, { permissions: ['leads:view'], scope }), 403, 'forbidden');
    }
    const same = await make(op.token, {
      permissions: ['leads:view'],
      scope: { traffic_provider_ids: [w.A], partner_ids: [w.X] },
    });
    assert.equal(same.statusCode, 201, same.body);
    // Nor hands an open role to an operator, new or existing (the same permissions, more accounts).
    const hire = await call(ta.app, op.token, {
      method: 'POST',
      url: '/api/operators',
      payload: {
        email: 'wider@example.test',
        name: 'Wider',
        password: 'wider-password-1',
        role_id: open.json().id,
        current_password: 'scoped-password-1',
      },
    });
    expectProblem(hire, 403, 'forbidden');
    const other = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/operators',
      payload: {
        email: 'narrow@example.test',
        name: 'Narrow',
        password: 'narrow-password-1',
        role_id: same.json().id,
        current_password: OWNER.password,
      },
    });
    assert.equal(other.statusCode, 201, other.body);
    const promote = await call(ta.app, op.key, {
      method: 'PATCH',
      url: `/api/operators/${other.json().id}`,
      payload: { role_id: open.json().id },
    });
    expectProblem(promote, 403, 'forbidden');
    // Nor changes a role wider than its own.
    const widen = await call(ta.app, op.token, {
      method: 'PATCH',
      url: `/api/roles/${open.json().id}`,
      payload: { name: 'Mine now' },
    });
    expectProblem(widen, 403, 'forbidden');
  });

  test('an open scope adds no clause to the leads search', async (t) => {
    const statements: string[] = [];
    const ta = await buildTestApp(t, engine, { onQuery: (s) => statements.push(s) });
    const w = await world(ta);
    const op = await scopedOperator(ta, w);
    statements.length = 0;
    await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?date_type=registration' });
    const open = statements.filter((s) => /from "leads"/.test(s));
    assert.ok(open.length > 0);
    assert.ok(
      open.every((s) => !s.includes('"traffic_provider_id" in (')),
      open.join('\n'),
    );
    statements.length = 0;
    await call(ta.app, op.token, { method: 'GET', url: '/api/leads/search?date_type=registration' });
    assert.ok(
      statements.some((s) => s.includes('"leads"."traffic_provider_id" in (')),
      statements.join('\n'),
    );
  });
});

test("a webhook whose owner's role is scoped sends nothing: it would send the whole account's events", () => {
  const owner = {
    owner_status: 'active' as const,
    owner_builtin: 0,
    owner_permissions: JSON.stringify(['leads:view']),
    owner_scope_traffic_provider_ids: null,
    owner_scope_partner_ids: null,
  };
  assert.equal(ownerCheck(owner)('lead.received'), null);
  assert.match(
    ownerCheck({ ...owner, owner_scope_traffic_provider_ids: JSON.stringify(['p1']) })('lead.received') ?? '',
    /limited to some traffic providers or partners/,
  );
  assert.match(ownerCheck({ ...owner, owner_scope_partner_ids: '[]' })('lead.received') ?? '', /limited/);
});
