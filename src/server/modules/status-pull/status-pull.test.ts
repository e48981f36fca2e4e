import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { json, startPartner, type ReceivedRequest } from '../../../../test/partner-server.js';
import { configFromStore } from './stored.js';

/** A partner's status API on loopback: the leads in `statuses`, `pageSize` a page, answering ?page=N from 1. */
async function statusApi(
  t: Parameters<typeof startPartner>[0],
  statuses: Map<string, { status: string; ftd?: string | null; amount?: number }>,
  pageSize = 2,
) {
  return startPartner(t, (req: ReceivedRequest, res) => {
    if (req.headers['x-api-key'] !== 'pull-secret-123456') return json(res, 401, { error: 'bad key' });
    const page = Number(new URL(req.url, 'http://x').searchParams.get('page') ?? '1');
    const all = [...statuses].map(([id, s]) => ({
      lead: { ref: id },
      state: s.status,
      deposit: s.ftd ?? null,
      amount: s.amount ?? null,
    }));
    json(res, 200, { result: { rows: all.slice((page - 1) * pageSize, page * pageSize) } });
  });
}

const pullConfig = (url: string, over: Record<string, unknown> = {}) => ({
  url: `${url}?from={{from}}&to={{to}}&page={{page}}&size={{page_size}}`,
  request_headers: { 'X-Api-Key': 'pull-secret-123456' },
  list_path: 'result.rows',
  lead_id_path: 'lead.ref',
  status_path: 'state',
  ftd_path: 'deposit',
  revenue_path: 'amount',
  paging: { type: 'page', first_page: 1, page_size: 2, max_pages: 10 },
  interval_minutes: 5,
  lookback_hours: 48,
  status_map: { 'No Answer': { sale_status: 'No answer' }, Depositor: { sale_status: 'Deposited', ftd: true } },
  ...over,
});

/** Stores the pull disabled, makes its dry run, then turns it on: the only way it runs on schedule. */
async function enablePull(ta: TestApp, partnerId: string, config: Record<string, unknown>) {
  const url = `/api/partners/${partnerId}/status-pull`;
  const saved = await call(ta.app, ta.ownerToken, { method: 'PUT', url, payload: { ...config, enabled: false } });
  assert.equal(saved.statusCode, 200, saved.body);
  const dry = await call(ta.app, ta.ownerToken, { method: 'POST', url: `${url}/run`, payload: { dry_run: true } });
  assert.equal(dry.statusCode, 200, dry.body);
  const on = await call(ta.app, ta.ownerToken, { method: 'PUT', url, payload: { ...config, enabled: true } });
  assert.equal(on.statusCode, 200, on.body);
  return on;
}

async function deliveredLeads(ta: TestApp, token: string, n: number) {
  const out: { id: string; partnerLeadId: string }[] = [];
  for (let i = 0; i < n; i++) {
    const res = await postLead(ta, token, sampleLead());
    assert.equal(res.json().status, 'delivered');
    const row = await ta.db
      .selectFrom('leads')
      .select('partner_lead_id')
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    out.push({ id: res.json().id, partnerLeadId: row.partner_lead_id! });
  }
  return out;
}

forEachDatabase('status pull', (engine) => {
  test('a scheduled pull reads every page, maps the status words, records the FTD once with its source, and shows its health', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { campaign: { payout: { model: 'cpa', amount: 30 } } });
    const leads = await deliveredLeads(ta, w.token, 3);
    const statuses = new Map([
      [leads[0].partnerLeadId, { status: ' no answer ' }],
      [leads[1].partnerLeadId, { status: 'Depositor', ftd: '2026-11-20T10:00:00Z', amount: 250.5 }],
      [leads[2].partnerLeadId, { status: 'Callback' }],
      ['UNKNOWN-1', { status: 'Depositor' }],
    ]);
    const api = await statusApi(t, statuses);
    const put = await enablePull(ta, w.partners[0].id, pullConfig(api.url));
    assert.equal(put.json().config.request_headers['X-Api-Key'], '••••3456', 'headers are write-only');
    api.received.length = 0; // the dry run's requests

    assert.equal(await ta.app.statusPull.runDue(), 1);
    assert.equal(api.received.length, 3, 'two full pages of 2, then an empty third that ends it');
    const first = new URL(api.received[0].url, 'http://x').searchParams;
    assert.equal(first.get('page'), '1');
    assert.equal(first.get('size'), '2');
    assert.ok(Date.parse(first.get('to')!) - Date.parse(first.get('from')!) === 48 * 3600_000, 'the look-back window');

    const row = (id: string) =>
      ta.db
        .selectFrom('leads')
        .select(['sale_status', 'ftd_at', 'revenue_cents', 'cost_cents'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    assert.equal((await row(leads[0].id)).sale_status, 'No answer');
    const ftd = await row(leads[1].id);
    assert.deepEqual(
      [ftd.sale_status, ftd.ftd_at, Number(ftd.revenue_cents), Number(ftd.cost_cents)],
      ['Deposited', '2026-11-20T10:00:00.000Z', 25050, 3000],
    );
    assert.equal((await row(leads[2].id)).sale_status, 'Callback', 'an unmapped word is the sale status as it is');

    const lead = await getJson(ta, `/api/leads/${leads[1].id}`);
    assert.deepEqual(
      lead.status_history.map((h: any) => [h.source, h.sale_status, h.ftd_at]),
      [['pull', 'Deposited', '2026-11-20T10:00:00.000Z']],
    );
    const health = (await getJson(ta, `/api/partners/${w.partners[0].id}/status-pull`)).health;
    assert.equal(health.last_updated, 3);
    assert.equal(health.last_error, null);
    assert.ok(Date.parse(health.next_run_at) > Date.now() + 4 * 60_000, 'next run in 5 minutes');
    assert.equal(await ta.app.statusPull.runDue(), 0, 'not due again yet');

    // A later postback FTD changes nothing: the first reported wins.
    const pb = await ta.app.inject({
      method: 'GET',
      url: `/api/postback/${w.partners[0].postbackToken}?lead_id=${leads[1].id}&ftd=1&revenue=999`,
    });
    assert.equal(pb.json().changed, false);
    assert.equal(Number((await row(leads[1].id)).revenue_cents), 25050);
  });

  test('no live change before a preview: a pull runs live (on schedule or by hand) only after a dry run of the same settings', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const [lead] = await deliveredLeads(ta, w.token, 1);
    const api = await statusApi(
      t,
      new Map([[lead.partnerLeadId, { status: 'Depositor', ftd: '2026-11-20T10:00:00Z' }]]),
    );
    const url = `/api/partners/${w.partners[0].id}/status-pull`;
    const config = pullConfig(api.url);
    const saleStatus = async () =>
      (
        await ta.db
          .selectFrom('leads')
          .select(['sale_status', 'ftd_at'])
          .where('id', '=', lead.id)
          .executeTakeFirstOrThrow()
      ).sale_status;
    const storedEnabled = async () =>
      JSON.parse((await ta.db.selectFrom('partner_status_pulls').select('config').executeTakeFirstOrThrow()).config)
        .enabled;

    // Saved without `enabled`: kept off, and nothing runs on schedule.
    const saved = await call(ta.app, ta.ownerToken, { method: 'PUT', url, payload: config });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal(saved.json().config.enabled, false, 'a new pull is off until previewed');
    assert.equal(saved.json().dry_run_seen, false);
    assert.equal(await ta.app.statusPull.runDue(), 0);

    // Turned on, or run live by hand, before a dry run: refused, nothing called or changed.
    const early = await call(ta.app, ta.ownerToken, { method: 'PUT', url, payload: { ...config, enabled: true } });
    const problem = expectProblem(early, 400, 'validation_failed');
    assert.deepEqual(
      problem.errors!.map((e) => e.field),
      ['enabled'],
    );
    assert.match(problem.errors![0].message, /dry run of these settings/);
    assert.equal(await storedEnabled(), false, 'nothing stored');
    const live = await call(ta.app, ta.ownerToken, { method: 'POST', url: `${url}/run`, payload: { dry_run: false } });
    assert.match(expectProblem(live, 409, 'conflict').detail!, /dry run of these settings first/);
    assert.equal(api.received.length, 0, 'the partner is not called');
    assert.equal(await saleStatus(), null);

    // The dry run is the preview; settings that change what a run does need a new one.
    const dry = await call(ta.app, ta.ownerToken, { method: 'POST', url: `${url}/run`, payload: { dry_run: true } });
    assert.equal(dry.json().changes.length, 1, dry.body);
    assert.equal((await getJson(ta, url)).dry_run_seen, true);
    const changed = { ...config, status_map: { Depositor: { sale_status: 'Paid', ftd: true } } };
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'PUT', url, payload: { ...changed, enabled: true } }),
      400,
      'validation_failed',
    );
    // How often it runs is not what it changes.
    const on = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url,
      payload: { ...config, interval_minutes: 30, enabled: true },
    });
    assert.equal(on.statusCode, 200, on.body);
    assert.equal(on.json().config.enabled, true);
    assert.equal(await saleStatus(), null, 'enabling changes nothing by itself');
    assert.equal(await ta.app.statusPull.runDue(), 1, 'the first scheduled run is due at once');
    assert.equal(await saleStatus(), 'Deposited');

    // Running on schedule, its settings cannot change under it without a new preview.
    const swap = await call(ta.app, ta.ownerToken, { method: 'PUT', url, payload: changed });
    assert.deepEqual(
      expectProblem(swap, 400, 'validation_failed').errors!.map((e) => e.field),
      ['enabled'],
    );
    const off = await call(ta.app, ta.ownerToken, { method: 'PUT', url, payload: { ...changed, enabled: false } });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().dry_run_seen, false, 'the new settings have not been previewed');
  });

  test('Pull now, dry run: shows the requests, the answers and what would change, and changes nothing', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const [lead] = await deliveredLeads(ta, w.token, 1);
    const api = await statusApi(t, new Map([[lead.partnerLeadId, { status: 'Depositor' }]]));
    await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: `/api/partners/${w.partners[0].id}/status-pull`,
      payload: pullConfig(api.url),
    });
    const dry = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/partners/${w.partners[0].id}/status-pull/run`,
      payload: {},
    });
    assert.equal(dry.statusCode, 200, dry.body);
    const run = dry.json();
    assert.equal(run.dry_run, true);
    assert.equal(run.requests[0].http_status, 200);
    assert.match(run.requests[0].response_excerpt, /Depositor/);
    assert.ok(!JSON.stringify(run).includes('pull-secret-123456'), 'no header value shown');
    assert.deepEqual(
      run.changes.map((c: any) => [c.lead_id, c.sale_status.to, c.ftd]),
      [[lead.id, 'Deposited', true]],
    );
    const after = await ta.db
      .selectFrom('leads')
      .select(['sale_status', 'ftd_at'])
      .where('id', '=', lead.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(after, { sale_status: null, ftd_at: null }, 'a dry run changes nothing');
    assert.equal((await ta.db.selectFrom('lead_status_history').selectAll().execute()).length, 0);
    assert.equal((await getJson(ta, `/api/partners/${w.partners[0].id}/status-pull`)).health.last_run_at, null);
  });

  test('a failing pull says why, and the third failure in a row raises a notification', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const api = await statusApi(t, new Map());
    await enablePull(ta, w.partners[0].id, pullConfig(api.url, { request_headers: { 'X-Api-Key': 'wrong-key-0000' } }));
    for (let i = 0; i < 3; i++) {
      await ta.db.updateTable('partner_status_pulls').set({ next_run_at: '2000-01-01T00:00:00.000Z' }).execute();
      await ta.app.statusPull.runDue();
    }
    const health = (await getJson(ta, `/api/partners/${w.partners[0].id}/status-pull`)).health;
    assert.equal(health.last_error, 'HTTP 401');
    assert.equal(health.consecutive_failures, 3);
    const notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(
      notes.data.map((n: any) => n.type),
      ['partner.pull_failed'],
    );
    assert.match(notes.data[0].text, /status pull failed 3 times in a row \(HTTP 401\)/);
  });

  test('bad configurations are named by field; a masked header needs the same destination', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const url = `/api/partners/${w.partners[0].id}/status-pull`;
    const bad = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url,
      payload: {
        ...pullConfig('http://10.0.0.5/statuses'),
        interval_minutes: 0,
        status_path: '',
        ftd_path: '',
        status_map: { Won: { sale_status: 'Won' }, ' won ': { sale_status: 'X' } },
      },
    });
    const fields = expectProblem(bad, 400, 'validation_failed').errors!.map((e) => e.field);
    assert.ok(fields.includes('interval_minutes'), JSON.stringify(fields));
    const ok = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url,
      payload: pullConfig('https://broker.example/api/statuses'),
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const masked = ok.json().config.request_headers;
    const moved = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url,
      payload: pullConfig('https://evil.example/steal', { request_headers: masked }),
    });
    assert.match(expectProblem(moved, 400, 'validation_failed').errors![0].message, /re-enter this secret/);
    const kept = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url,
      payload: pullConfig('https://broker.example/api/v2/statuses', { request_headers: masked }),
    });
    assert.equal(kept.statusCode, 200, kept.body);
    const raw = (await ta.db.selectFrom('partner_status_pulls').select('config').executeTakeFirstOrThrow()).config;
    assert.ok(!raw.includes('pull-secret-123456'), 'the header value is sealed at rest');
    const stored = configFromStore(raw);
    assert.equal(stored.request_headers['X-Api-Key'], 'pull-secret-123456');
    assert.equal((await call(ta.app, ta.ownerToken, { method: 'DELETE', url })).statusCode, 204);
    // Deleted (or never set): 200 with null, not an error; an unknown partner is the 404.
    const none = await call(ta.app, ta.ownerToken, { method: 'GET', url });
    assert.equal(none.statusCode, 200, none.body);
    assert.equal(none.json(), null);
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/partners/no-such-partner/status-pull' }),
      404,
      'not_found',
    );
  });
});

/** A JSON object `depth` levels deep, as text: JSON.stringify itself cannot write thousands of levels. */
const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{"q":"{{from}}"}${'}'.repeat(depth - 1)}`;
/** The config as JSON text with that body_template. */
const withBody = (config: Record<string, unknown>, body: string) =>
  JSON.stringify({ ...config, body_template: '<body>' }).replace('"<body>"', body);

forEachDatabase('status pull: templates and what a run shows', (engine) => {
  test('a body_template nested deeper than 32 levels is a 400 naming it; one stored before that check fails its runs cleanly and releases its lease', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const api = await statusApi(t, new Map());
    const url = `/api/partners/${w.partners[0].id}/status-pull`;
    for (const depth of [33, 4000, 6000]) {
      const bad = await call(ta.app, ta.ownerToken, {
        method: 'PUT',
        url,
        headers: { 'content-type': 'application/json' },
        payload: withBody(pullConfig(api.url, { method: 'POST' }), nested(depth)),
      });
      const errors = expectProblem(bad, 400, 'validation_failed').errors!;
      assert.deepEqual(
        errors.map((e) => e.field),
        ['body_template'],
        `depth ${depth}`,
      );
      assert.match(errors[0].message, /deeper than 32/);
    }
    assert.equal((await ta.db.selectFrom('partner_status_pulls').selectAll().execute()).length, 0, 'nothing stored');
    const ok = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url,
      payload: pullConfig(api.url, { method: 'POST', body_template: JSON.parse(nested(32)) }),
    });
    assert.equal(ok.statusCode, 200, ok.body);

    // As an older release stored it: 4,000 levels, on schedule.
    const config = {
      ...JSON.parse((await ta.db.selectFrom('partner_status_pulls').select('config').executeTakeFirstOrThrow()).config),
      enabled: true,
    };
    await ta.db
      .updateTable('partner_status_pulls')
      .set({ config: withBody(config, nested(4000)) })
      .execute();
    const run = await call(ta.app, ta.ownerToken, { method: 'POST', url: `${url}/run`, payload: { dry_run: false } });
    assert.equal(run.statusCode, 200, run.body);
    assert.equal(run.json().ok, false);
    assert.match(run.json().error, /body_template nests deeper than 32 levels/);
    assert.equal(api.received.length, 0);
    await ta.db.updateTable('partner_status_pulls').set({ next_run_at: '2000-01-01T00:00:00.000Z' }).execute();
    assert.equal(await ta.app.statusPull.runDue(), 1);
    const row = await ta.db
      .selectFrom('partner_status_pulls')
      .select(['lease_until', 'consecutive_failures', 'last_error'])
      .executeTakeFirstOrThrow();
    assert.equal(row.lease_until, null, 'the lease is released');
    assert.equal(Number(row.consecutive_failures), 2);
    assert.match(row.last_error!, /nests deeper/);
  });

  test('a pull URL whose placeholder would be its scheme, host or port is refused, however it is spelled', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const url = `/api/partners/${w.partners[0].id}/status-pull`;
    for (const spelling of [
      'http:\\\\{{page}}/s',
      'http:\\\\x@{{page}}.:8080/s',
      'http:/{{from}}/s',
      'https://broker.example:{{page}}/s',
      '{{page}}://broker.example/s',
    ]) {
      const bad = await call(ta.app, ta.ownerToken, {
        method: 'PUT',
        url,
        payload: pullConfig('x', { url: spelling }),
      });
      assert.deepEqual(
        expectProblem(bad, 400, 'validation_failed').errors!.map((e) => e.field),
        ['url'],
        spelling,
      );
    }
  });

  test("without leads:contacts, a run shows no lead's email or phone the partner quoted, in the answer or anywhere else", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const [lead] = await deliveredLeads(ta, w.token, 1);
    const contacts = await ta.db
      .selectFrom('leads')
      .select(['email', 'phone'])
      .where('id', '=', lead.id)
      .executeTakeFirstOrThrow();
    const stranger = { email: 'someone.else@elsewhere.example', phone: '+447700900123' };
    const api = await startPartner(t, (_req, res) =>
      json(res, 200, [
        {
          ref: lead.partnerLeadId,
          state: `Call back ${contacts.email}`,
          phone: contacts.phone,
          email: contacts.email.replace('@', '%40'),
        },
        { ref: 'P-UNKNOWN', state: 'New', email: stranger.email, phone: stranger.phone },
      ]),
    );
    const url = `/api/partners/${w.partners[0].id}/status-pull`;
    assert.equal(
      (
        await call(ta.app, ta.ownerToken, {
          method: 'PUT',
          url,
          payload: pullConfig(api.url, {
            list_path: '',
            lead_id_path: 'ref',
            ftd_path: '',
            revenue_path: '',
            paging: { type: 'none' },
          }),
        })
      ).statusCode,
      200,
    );
    const operator = await newOperator(ta, ['partners:view', 'partners:edit']);
    const shown = await call(ta.app, operator.token, { method: 'POST', url: `${url}/run`, payload: {} });
    assert.equal(shown.statusCode, 200, shown.body);
    const text = shown.body;
    const digits = (p: string) => p.replace(/\D/g, '').slice(2);
    for (const secret of [
      contacts.email,
      contacts.email.replace('@', '%40'),
      digits(contacts.phone),
      stranger.email,
      digits(stranger.phone),
    ]) {
      assert.ok(!text.includes(secret), `${secret} shown: ${text}`);
    }
    const run = shown.json();
    assert.deepEqual(
      run.changes.map((c: any) => c.lead_id),
      [lead.id],
    );
    assert.match(run.changes[0].status_word, /^Call back \w\*\*\*@/);
    assert.match(run.requests[0].response_excerpt, /P-UNKNOWN/, 'the rest of the answer still shows');
    // The owner holds leads:contacts: the answer as the partner sent it.
    const full = await call(ta.app, ta.ownerToken, { method: 'POST', url: `${url}/run`, payload: {} });
    assert.ok(full.body.includes(contacts.email) && full.body.includes(stranger.email));
  });
});
