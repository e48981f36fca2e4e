// Operators scoped to their accounts (issue 27 item 5): a role limited to one traffic provider
// and one partner. Its operator (a session) and a key it made walk every operator GET route of the
// route table, with ids of objects in and out of the scope and query strings that produce rows
// (exports included), and no lead, report row, export line or event outside the scope ever comes
// back, and no 5xx. The walk reads the route table, so a new route is covered without editing.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, type Engine, type TestApp } from './helpers.js';
import { scopedOperator, world, type World } from './scoped-world.js';

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

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
      // Provider A is in the scope, its lead sold to partner Y is not.
      {
        method: 'POST',
        url: `/api/traffic-providers/${w.A}/postbacks/test`,
        payload: { event_type: 'lead.delivered', lead_id: w.lead.AY },
        what: 'lead',
      },
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
