import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { nowIso } from '../../db/ids.js';
import { insertAttempt, insertLeads } from '../../../../test/fixtures.js';
import { makeWorld } from '../../../../test/distribution-world.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  type Engine,
  type TestApp,
} from '../../../../test/helpers.js';

/** A world with two partners (A and B) and one lead delivered to A as partner lead "BRK-1". */
async function setup(
  t: TestContext,
  engine: Engine,
  payout: { model: 'cpl' | 'cpa'; amount: number } = { model: 'cpa', amount: 40 },
) {
  const ta = await buildTestApp(t, engine);
  const world = await makeWorld(t, ta, [{}, {}], { campaign: { payout } });
  const [a, b] = world.partners;
  const deliver = async (over: Record<string, unknown> = {}) =>
    (
      await insertLeads(ta.db, [
        {
          traffic_provider_id: world.providerId,
          campaign_id: world.campaignId,
          flow_id: world.flowId,
          partner_id: a.id,
          partner_lead_id: 'BRK-1',
          status: 'delivered',
          delivered_at: nowIso(),
          status_updated_at: '2026-01-01T00:00:00.000Z',
          ...over,
        },
      ])
    )[0];
  const lead = await deliver();
  return { ta, world, a, b, lead, deliver };
}

const url = (token: string, query = '') => `/api/postback/${token}${query ? `?${query}` : ''}`;
const get = (ta: TestApp, token: string, query: string) => ta.app.inject({ method: 'GET', url: url(token, query) });
const postJson = (ta: TestApp, token: string, payload: object) =>
  ta.app.inject({ method: 'POST', url: url(token), payload });
const postForm = (ta: TestApp, token: string, form: string, type = 'application/x-www-form-urlencoded') =>
  ta.app.inject({ method: 'POST', url: url(token), headers: { 'content-type': type }, payload: form });

const leadRow = (ta: TestApp, id: string) =>
  ta.db
    .selectFrom('leads')
    .select(['sale_status', 'ftd_at', 'revenue_cents', 'cost_cents', 'status_updated_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
const postbackAudits = (ta: TestApp) =>
  ta.db.selectFrom('audit_log').selectAll().where('action', '=', 'lead.postback').orderBy('id').execute();
const badFields = (res: Awaited<ReturnType<typeof get>>) =>
  expectProblem(res, 400, 'validation_failed')
    .errors!.map((e) => e.field)
    .sort();

forEachDatabase('Postbacks', (engine) => {
  test("each sale-status change and the FTD go into the lead's status history with source postback; repeats add nothing", async (t) => {
    const { ta, a, lead } = await setup(t, engine);
    await get(ta, a.postbackToken, `lead_id=${lead}&sale_status=Interested`);
    await get(ta, a.postbackToken, `lead_id=${lead}&sale_status=Interested`);
    await get(ta, a.postbackToken, `lead_id=${lead}&sale_status=Deposited&ftd=1&ftd_at=2026-11-20T09:00:00Z`);
    const history = (await getJson(ta, `/api/leads/${lead}`)).status_history;
    assert.deepEqual(
      history.map((h: any) => [h.source, h.previous_sale_status, h.sale_status, h.ftd_at]),
      [
        ['postback', null, 'Interested', null],
        ['postback', 'Interested', 'Deposited', '2026-11-20T09:00:00.000Z'],
      ],
    );
  });

  test('GET by lead_id sets the sale status, audited with the partner as the actor; unknown parameters are ignored', async (t) => {
    const { ta, a, lead } = await setup(t, engine);
    const res = await get(ta, a.postbackToken, `lead_id=${lead}&sale_status=Interested&click_id=xyz&payout=12`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      lead_id: lead,
      changed: true,
      sale_status: 'Interested',
      ftd_at: null,
      revenue: 0,
      notes: [],
    });
    const row = await leadRow(ta, lead);
    assert.equal(row.sale_status, 'Interested');
    assert.ok(row.status_updated_at > '2026-01-01T00:00:00.000Z', 'status_updated_at moves');
    assert.equal(row.ftd_at, null);

    const [entry] = await postbackAudits(ta);
    assert.equal(entry.actor_id, null);
    assert.equal(entry.via, 'system');
    assert.equal(entry.target_type, 'lead');
    assert.equal(entry.target_id, lead);
    assert.deepEqual(JSON.parse(entry.details), {
      partner_id: a.id,
      partner_name: a.name,
      changes: { sale_status: { from: null, to: 'Interested' } },
    });
    // The audit log API shows it too; the token never reaches a log line.
    const listed = await getJson(ta, '/api/audit-log?action=lead.postback');
    assert.equal(listed.data.length, 1);
    assert.ok(!ta.logs.join('').includes(a.postbackToken.slice(4)), 'the postback token is not logged');
  });

  test('an FTD by partner_lead_id sets ftd_at, revenue and the cpa cost, and shows in analytics', async (t) => {
    const { ta, a, lead } = await setup(t, engine, { model: 'cpa', amount: 40 });
    const ftdAt = new Date(Date.now() - 3_600_000);
    const offset = ftdAt
      .toISOString()
      .replace('Z', '+00:00')
      .replace(/T(\d\d)/, (_m, h) => `T${h}`); // same instant, written with an offset
    const res = await get(
      ta,
      a.postbackToken,
      `partner_lead_id=BRK-1&ftd=1&revenue=250.50&ftd_at=${encodeURIComponent(offset)}&sale_status=Deposit`,
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      lead_id: lead,
      changed: true,
      sale_status: 'Deposit',
      ftd_at: ftdAt.toISOString(),
      revenue: 250.5,
      notes: [],
    });
    const row = await leadRow(ta, lead);
    assert.deepEqual(
      [row.ftd_at, Number(row.revenue_cents), Number(row.cost_cents)],
      [ftdAt.toISOString(), 25050, 4000],
    );

    // The rollup triggers carried it into analytics, on the FTD day and the registration day.
    for (const dateType of ['ftd', 'registration']) {
      const s = await getJson(ta, `/api/analytics/summary?timezone=UTC&date_type=${dateType}`);
      assert.equal(s.totals.ftds, 1, dateType);
      assert.equal(s.totals.revenue, 250.5, dateType);
      assert.equal(s.totals.cost, 40, dateType);
      assert.equal(s.totals.profit, 210.5, dateType);
    }
    const lead1 = await getJson(ta, `/api/leads/${lead}`);
    assert.equal(lead1.is_ftd, true);
    assert.equal(lead1.revenue, 250.5);
  });

  test('POST as JSON (native types) and as a form; a cpl campaign keeps its cost', async (t) => {
    const { ta, a, deliver } = await setup(t, engine, { model: 'cpl', amount: 10 });
    const json = await deliver({ partner_lead_id: 'J-1', cost_cents: 1000 });
    const form = await deliver({ partner_lead_id: 'F-1', cost_cents: 1000 });

    const r1 = await postJson(ta, a.postbackToken, {
      partner_lead_id: 'J-1',
      ftd: true,
      revenue: 99.99,
      extra: { nested: true },
    });
    assert.equal(r1.statusCode, 200, r1.body);
    assert.equal(r1.json().lead_id, json);
    assert.equal(r1.json().revenue, 99.99);
    const before = Date.now();
    const r2 = await postForm(
      ta,
      a.postbackToken,
      `lead_id=${form}&ftd=Yes&revenue=100&sale_status=FTD+done&sub=abc`,
      'application/x-www-form-urlencoded; charset=UTF-8',
    );
    assert.equal(r2.statusCode, 200, r2.body);
    assert.equal(r2.json().sale_status, 'FTD done');
    assert.ok(Date.parse(r2.json().ftd_at) >= before - 1000, 'ftd_at defaults to now');

    for (const [id, revenue] of [
      [json, 9999],
      [form, 10000],
    ] as const) {
      const row = await leadRow(ta, id);
      assert.notEqual(row.ftd_at, null);
      assert.equal(Number(row.revenue_cents), revenue);
      assert.equal(Number(row.cost_cents), 1000, 'cpl: the cost was set at delivery, an FTD does not change it');
    }
    // JSON numbers name the partner's numeric id as text.
    await deliver({ partner_lead_id: '12345' });
    const r3 = await postJson(ta, a.postbackToken, { partner_lead_id: 12345, sale_status: 'Callback' });
    assert.equal(r3.statusCode, 200, r3.body);
  });

  test('the form parser belongs to the postback routes only: elsewhere a form is still 415', async (t) => {
    const ta = await buildTestApp(t, engine);
    const res = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/roles',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=x&permissions=leads:view',
    });
    expectProblem(res, 415, 'unsupported_media_type');
  });

  test('a repeated postback changes nothing: the first FTD wins, the answer says so, one audit entry', async (t) => {
    const { ta, a, lead } = await setup(t, engine);
    const first = await get(
      ta,
      a.postbackToken,
      `lead_id=${lead}&ftd=true&revenue=100&ftd_at=2026-03-01T10:00:00Z&sale_status=Deposit`,
    );
    assert.equal(first.statusCode, 200, first.body);
    const stored = await leadRow(ta, lead);

    const same = await get(
      ta,
      a.postbackToken,
      `lead_id=${lead}&ftd=true&revenue=100&ftd_at=2026-03-01T10:00:00Z&sale_status=Deposit`,
    );
    assert.equal(same.statusCode, 200, same.body);
    const other = await postJson(ta, a.postbackToken, {
      lead_id: lead,
      ftd: 'true',
      revenue: '500',
      ftd_at: '2026-03-02T10:00:00Z',
    });
    assert.equal(other.statusCode, 200, other.body);
    for (const res of [same, other]) {
      const body = res.json();
      assert.equal(body.changed, false);
      assert.equal(body.ftd_at, '2026-03-01T10:00:00.000Z');
      assert.equal(body.revenue, 100);
      assert.equal(body.notes.length, 1);
      assert.match(body.notes[0], /already recorded.*first one reported wins/);
    }
    assert.deepEqual(await leadRow(ta, lead), stored, 'nothing changed, not even status_updated_at');
    assert.equal((await postbackAudits(ta)).length, 1);
  });

  test('concurrent FTD postbacks for one lead: exactly one is recorded', async (t) => {
    const { ta, a, lead } = await setup(t, engine);
    const answers = await Promise.all(
      [100, 200, 300, 400, 500].map((revenue) => postJson(ta, a.postbackToken, { lead_id: lead, ftd: 1, revenue })),
    );
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [200, 200, 200, 200, 200],
    );
    const winners = answers.filter((r) => r.json().changed);
    assert.equal(winners.length, 1);
    const row = await leadRow(ta, lead);
    assert.equal(Number(row.revenue_cents) / 100, winners[0].json().revenue);
    for (const r of answers)
      assert.equal(r.json().revenue, Number(row.revenue_cents) / 100, 'every answer shows the stored FTD');
    assert.equal((await postbackAudits(ta)).length, 1);
  });

  test("unknown or malformed token 401; another partner's token, an unknown lead or one not delivered 404", async (t) => {
    const { ta, a, b, lead, deliver } = await setup(t, engine);
    for (const token of ['lgp_000000000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'nonsense', `${a.postbackToken}x`]) {
      const res = await get(ta, token, `lead_id=${lead}&sale_status=X`);
      expectProblem(res, 401, 'unauthorized');
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
    }
    expectProblem(
      await postJson(ta, 'lgt_000000000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', { lead_id: lead }),
      401,
      'unauthorized',
    );
    expectProblem(await get(ta, b.postbackToken, `lead_id=${lead}&sale_status=X`), 404, 'not_found');
    expectProblem(await get(ta, b.postbackToken, 'partner_lead_id=BRK-1&sale_status=X'), 404, 'not_found');
    expectProblem(await get(ta, a.postbackToken, 'lead_id=no-such-lead&sale_status=X'), 404, 'not_found');
    const rejected = await deliver({ status: 'rejected', partner_lead_id: null, delivered_at: null });
    expectProblem(await get(ta, a.postbackToken, `lead_id=${rejected}&ftd=1`), 404, 'not_found');
    assert.equal((await leadRow(ta, lead)).sale_status, null);
    assert.equal((await postbackAudits(ta)).length, 0);
  });

  test('a partner_lead_id two delivered leads share is ambiguous (409): lead_id still works', async (t) => {
    const { ta, a, lead, deliver } = await setup(t, engine);
    await deliver(); // also BRK-1
    expectProblem(await get(ta, a.postbackToken, 'partner_lead_id=BRK-1&sale_status=X'), 409, 'conflict');
    assert.equal((await get(ta, a.postbackToken, `lead_id=${lead}&sale_status=X`)).statusCode, 200);
  });

  test('a rotated token stops working at once; the new one works', async (t) => {
    const { ta, a, lead } = await setup(t, engine);
    const rotated = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/partners/${a.id}/rotate-postback-token`,
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    expectProblem(await get(ta, a.postbackToken, `lead_id=${lead}&sale_status=X`), 401, 'unauthorized');
    const res = await ta.app.inject({
      method: 'GET',
      url: `${rotated.json().postback_url}?lead_id=${lead}&sale_status=X`,
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('bad input is a 400 naming each field, and changes nothing', async (t) => {
    const { ta, a, lead } = await setup(t, engine);
    const q = (s: string) => get(ta, a.postbackToken, s);
    for (const revenue of ['abc', '-5', '1.234', '1,50', '1e3', '99999999']) {
      assert.deepEqual(badFields(await q(`lead_id=${lead}&ftd=1&revenue=${revenue}`)), ['revenue'], revenue);
    }
    assert.deepEqual(badFields(await postJson(ta, a.postbackToken, { lead_id: lead, ftd: true, revenue: -1 })), [
      'revenue',
    ]);
    assert.deepEqual(badFields(await postJson(ta, a.postbackToken, { lead_id: lead, ftd: true, revenue: 1.005 })), [
      'revenue',
    ]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    for (const at of [
      'yesterday',
      '2026-03-01',
      '2026-03-01T10:00:00',
      '2026-02-30T10:00:00Z',
      '0001-01-01T00:00:00Z',
      future,
    ]) {
      assert.deepEqual(badFields(await q(`lead_id=${lead}&ftd=1&ftd_at=${encodeURIComponent(at)}`)), ['ftd_at'], at);
    }
    assert.deepEqual(badFields(await q(`lead_id=${lead}&partner_lead_id=BRK-1&ftd=1`)), ['partner_lead_id']);
    assert.deepEqual(badFields(await q('ftd=1')), ['lead_id']);
    assert.deepEqual(
      badFields(await q(`lead_id=${lead}&ftd=maybe&revenue=x&ftd_at=now`)),
      ['ftd', 'ftd_at', 'revenue'],
      'all at once',
    );
    assert.deepEqual(badFields(await q(`lead_id=${lead}&sale_status=${'x'.repeat(101)}`)), ['sale_status']);
    assert.deepEqual(badFields(await q(`lead_id=${lead}&ftd=1&ftd=0`)), ['ftd'], 'a repeated parameter');
    assert.deepEqual(badFields(await postForm(ta, a.postbackToken, `lead_id=${lead}&revenue=1&revenue=2`)), [
      'revenue',
    ]);
    assert.deepEqual(badFields(await postJson(ta, a.postbackToken, { lead_id: lead, ftd: 'nope' })), ['ftd']);
    assert.deepEqual(
      badFields(await postJson(ta, a.postbackToken, { lead_id: lead, sale_status: 7, ftd: [true] })),
      ['ftd', 'sale_status'],
      'JSON of the wrong type',
    );
    assert.deepEqual(
      badFields(await ta.app.inject({ method: 'POST', url: url(a.postbackToken) })),
      ['body'],
      'no body at all',
    );
    const row = await leadRow(ta, lead);
    assert.deepEqual([row.sale_status, row.ftd_at, Number(row.revenue_cents)], [null, null, 0]);
  });

  test('empty values count as not sent; ftd_at and revenue without ftd=true are ignored with a note', async (t) => {
    const { ta, a, lead } = await setup(t, engine);
    const res = await get(
      ta,
      a.postbackToken,
      `lead_id=${lead}&partner_lead_id=&sale_status=Call+back&ftd=&revenue=50&ftd_at=`,
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      lead_id: lead,
      changed: true,
      sale_status: 'Call back',
      ftd_at: null,
      revenue: 0,
      notes: ['ftd_at and revenue are recorded only with ftd=true; ignored.'],
    });
  });

  test('whatever a partner sends with a valid token: 200, or a 4xx problem naming the field; never a 5xx', async (t) => {
    const { ta, a, lead } = await setup(t, engine);
    const FIELDS = [
      'lead_id',
      'partner_lead_id',
      'sale_status',
      'ftd',
      'ftd_at',
      'revenue',
      'click_id',
      '__proto__',
      'constructor',
      '',
    ];
    const SAMPLES = [
      lead,
      'BRK-1',
      '',
      ' ',
      '1',
      '0',
      'yes',
      'TRUE',
      'abc',
      '-1',
      '1.005',
      '1e3',
      '250.50',
      '2026-03-01T10:00:00Z',
      '9999-12-31T23:59:59Z',
    ];
    const value = fc.oneof(fc.constantFrom(...SAMPLES, '\u0000', 'x'.repeat(300)), fc.string({ maxLength: 20 }));
    const jsonValue = fc.oneof(
      value,
      fc.boolean(),
      fc.integer(),
      fc.double(),
      fc.constant(null),
      fc.array(value, { maxLength: 2 }),
      fc.dictionary(fc.string({ maxLength: 3 }), value, { maxKeys: 2 }),
    );
    // Most requests name the lead, so that many get past the lookup; the rest is noise.
    const entries = <T>(v: fc.Arbitrary<T>) =>
      fc
        .tuple(fc.boolean(), fc.array(fc.tuple(fc.constantFrom(...FIELDS), v), { maxLength: 4 }))
        .map(([named, rest]) => (named ? [['lead_id', lead] as [string, T | string], ...rest] : rest));
    const form = (e: [string, unknown][]) =>
      e.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
    const post = (type: string, payload: string) => ({
      method: 'POST' as const,
      url: url(a.postbackToken),
      headers: { 'content-type': type },
      payload,
    });
    const request = fc.oneof(
      entries(value).map((e) => ({ method: 'GET' as const, url: url(a.postbackToken, form(e)) })),
      entries(value).map((e) => post('application/x-www-form-urlencoded', form(e))),
      entries(jsonValue).map((e) => post('application/json', JSON.stringify(Object.fromEntries(e)))),
    );
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const res = await ta.app.inject(r);
        seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
        assert.ok([200, 400, 404, 409].includes(res.statusCode), `${res.statusCode} ${res.body}`);
        if (res.statusCode === 200) assert.equal(res.json().lead_id, lead);
        else if (res.statusCode === 400) assert.ok(expectProblem(res, 400, 'validation_failed').errors!.length > 0);
        else assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      }),
      { seed: 20261122, numRuns: 150 },
    );
    t.diagnostic(JSON.stringify(Object.fromEntries(seen)));
    assert.ok(seen.get(200) && seen.get(400), 'the requests reach the handler, both accepted and refused');
  });

  test('a lead failed by an interrupted call to this partner is recovered by its postback, conversion included', async (t) => {
    const { ta, world, a, b } = await setup(t, engine, { model: 'cpl', amount: 7 });
    const [lead] = await insertLeads(ta.db, [
      {
        traffic_provider_id: world.providerId,
        campaign_id: world.campaignId,
        flow_id: world.flowId,
        status: 'failed',
        reason: 'Delivery interrupted',
        cost_cents: 0,
      },
    ]);
    await insertAttempt(ta.db, { lead_id: lead, partner_id: b.id, attempt_no: 1, outcome: 'rejected' });
    await insertAttempt(ta.db, {
      lead_id: lead,
      partner_id: a.id,
      attempt_no: 2,
      outcome: 'error',
      reason: "the server stopped while waiting for the partner's answer",
    });

    // B was offered the lead too, but not last: its postback does not match; nor does A's by partner_lead_id (none known).
    expectProblem(await get(ta, b.postbackToken, `lead_id=${lead}&ftd=1`), 404, 'not_found');
    expectProblem(await get(ta, a.postbackToken, `partner_lead_id=${lead}&ftd=1`), 404, 'not_found');

    const res = await get(ta, a.postbackToken, `lead_id=${lead}&ftd=1&revenue=300&ftd_at=2026-11-20T10:00:00Z`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().changed, true);
    assert.match(res.json().notes[0], /interrupted/);
    const row = await ta.db.selectFrom('leads').selectAll().where('id', '=', lead).executeTakeFirstOrThrow();
    assert.equal(row.status, 'delivered');
    assert.equal(row.partner_id, a.id);
    assert.equal(row.reason, null);
    assert.ok(row.delivered_at);
    assert.equal(row.ftd_at, '2026-11-20T10:00:00.000Z');
    assert.equal(Number(row.revenue_cents), 30_000);
    assert.equal(Number(row.cost_cents), 700, 'the cpl cost of a delivered lead');
    const [entry] = (await postbackAudits(ta)).filter((e) => e.target_id === lead);
    assert.deepEqual(JSON.parse(entry.details).changes.status, { from: 'failed', to: 'delivered' });
    // Now an ordinary delivered lead: a repeat changes nothing.
    assert.equal((await get(ta, a.postbackToken, `lead_id=${lead}&ftd=1`)).json().changed, false);
  });
});
