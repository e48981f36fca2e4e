import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import { accepting, defaultIntegration, downUrl, rejecting, startPartner } from '../../../../test/partner-server.js';
import { integrationFromStore } from '../../distribution/integrations/index.js';

// POST /api/partners/{id}/test: one real request to a (loopback) partner, shown, nothing stored.

const SECRET = 'partner-secret-key-123456';

async function createPartner(ta: TestApp, url: string, extra: Record<string, unknown> = {}) {
  const res = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/partners',
    payload: { name: 'Broker', integration: defaultIntegration(url), ...extra },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id as string;
}

const testPartner = (ta: TestApp, id: string, payload?: object, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: `/api/partners/${id}/test`, ...(payload ? { payload } : {}) });

async function counts(ta: TestApp) {
  const n = async (table: 'leads' | 'lead_attempts' | 'audit_log' | 'cap_counters') =>
    Number(
      (
        await ta.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    leads: await n('leads'),
    attempts: await n('lead_attempts'),
    audit: await n('audit_log'),
    caps: await n('cap_counters'),
  };
}

forEachDatabase('Send a test lead to a partner', (engine) => {
  test('shows what was sent (header values masked) and answered, and stores nothing', async (t) => {
    const ta = await buildTestApp(t, engine);
    const partner = await startPartner(t, accepting());
    const id = await createPartner(ta, partner.url, { status: 'paused' }); // a paused partner can be tested
    const before = await counts(ta);

    const res = await testPartner(ta, id, {
      lead: { email: 'tester@example.org', sub_id1: 'campaign-7', language: null },
    });
    assert.equal(res.statusCode, 200, res.body);
    const r = res.json();
    assert.equal(r.outcome, 'accepted');
    assert.equal(r.reason, null);
    assert.match(r.partner_lead_id, /^P-\d+$/);
    assert.equal(r.autologin_url, `https://broker.example/login/${r.partner_lead_id}?email=tester%40example.org`);
    assert.equal(typeof r.duration_ms, 'number');

    // The partner got the real header value and the sample lead with the overrides.
    assert.equal(partner.received.length, 1);
    const got = partner.received[0];
    assert.equal(got.headers['x-api-key'], SECRET);
    assert.deepEqual(
      { ...got.json, clickId: undefined },
      {
        firstName: 'Test',
        lastName: 'Lead',
        email: 'tester@example.org',
        phone: '+4915112345678',
        country: 'DE',
        ip: '203.0.113.10',
        clickId: undefined,
      },
    );
    assert.match(got.json.clickId, /^[0-9a-f-]{36}$/);

    // The answer shows the request as sent, the secret masked; the client's own header in full.
    assert.deepEqual(r.request, {
      method: 'POST',
      url: partner.url,
      headers: { 'content-type': 'application/json', 'X-Api-Key': '••••3456' },
      body: got.body,
    });
    assert.ok(!res.body.includes(SECRET));
    assert.equal(r.response.status, 200);
    assert.equal(r.response.truncated, false);
    assert.equal(r.response.headers['content-type'], 'application/json');
    assert.equal(JSON.parse(r.response.body).data.id, r.partner_lead_id);

    // No lead, no attempt, no audit entry, no cap use; and no secret in the logs.
    assert.deepEqual(await counts(ta), before);
    assert.ok(!ta.logs.join('').includes(SECRET));

    // No body at all: the sample lead as is; a new lead id each time.
    const bare = await testPartner(ta, id);
    assert.equal(bare.statusCode, 200, bare.body);
    assert.equal(partner.received[1].json.email, 'test.lead@example.com');
    assert.notEqual(partner.received[1].json.clickId, got.json.clickId);
  });

  test('a rejection and a down partner are outcomes of a test that ran (200)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const refusing = await startPartner(t, rejecting(422, 'phone is invalid'));
    const refused = (await testPartner(ta, await createPartner(ta, refusing.url))).json();
    assert.equal(refused.outcome, 'rejected');
    assert.equal(refused.reason, 'HTTP 422: {"success":false,"error":"phone is invalid"}');
    assert.equal(refused.response.status, 422);

    const downRes = await testPartner(ta, await createPartner(ta, await downUrl()));
    assert.equal(downRes.statusCode, 200, downRes.body);
    const down = downRes.json();
    assert.equal(down.outcome, 'error');
    assert.equal(down.reason, 'connection refused (ECONNREFUSED)');
    assert.equal(down.response, null);
    assert.equal(down.partner_lead_id, null);
    assert.equal(down.request.headers['X-Api-Key'], '••••3456');
  });

  test('an unsaved integration is tested instead of the saved one; masked values use the saved ones on the same origin', async (t) => {
    const ta = await buildTestApp(t, engine);
    const partner = await startPartner(t, accepting());
    const id = await createPartner(ta, partner.url);
    // Same scheme, host and port as the saved URL (a mask is not sent elsewhere: destination.test.ts), another path and method.
    const draftUrl = partner.url.replace('/leads', '/draft');
    const res = await testPartner(ta, id, {
      integration: {
        ...defaultIntegration(`${draftUrl}?c={{lead.country}}`),
        method: 'GET',
        headers: { 'X-Api-Key': '••••3456', 'X-Extra': 'draft-value-abcdef' },
        body_template: { mail: '{{lead.email}}' },
        autologin_path: '',
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().outcome, 'accepted', res.body);
    assert.equal(partner.received.length, 1);
    const got = partner.received[0];
    assert.equal(got.method, 'GET');
    assert.equal(got.url, '/draft?c=DE&mail=test.lead%40example.com');
    assert.equal(got.headers['x-api-key'], SECRET);
    assert.equal(got.headers['x-extra'], 'draft-value-abcdef');
    assert.deepEqual(res.json().request.headers, { 'X-Api-Key': '••••3456', 'X-Extra': '••••cdef' });
    // The saved integration did not change.
    const stored = integrationFromStore(
      (await ta.db.selectFrom('partners').select('integration').where('id', '=', id).executeTakeFirstOrThrow())
        .integration,
    );
    assert.equal(stored.url, partner.url);
    assert.deepEqual(stored.headers, { 'X-Api-Key': SECRET });
  });

  test('bad input is a 400 naming the field; unknown 404; archived 409', async (t) => {
    const ta = await buildTestApp(t, engine);
    const partner = await startPartner(t, accepting());
    const id = await createPartner(ta, partner.url);
    const fields = async (payload: object) =>
      expectProblem(await testPartner(ta, id, payload), 400, 'validation_failed')
        .errors!.map((e) => e.field)
        .sort();
    assert.deepEqual(
      await fields({
        integration: {
          url: 'ftp://x.example/',
          headers: { 'X-New': '••••9999' },
          body_template: { a: '{{lead.password}}' },
        },
      }),
      ['integration.body_template.a', 'integration.headers.X-New', 'integration.url'],
    );
    assert.deepEqual(await fields({ lead: { email: 5, password: 'x' } }), ['lead.email', 'lead.password']);
    assert.deepEqual(await fields({ lead: { first_name: null } }), ['lead.first_name']);
    assert.deepEqual(await fields({ extra: true }), ['extra']);
    assert.equal(partner.received.length, 0, 'nothing sent for bad input');

    expectProblem(await testPartner(ta, '01900000-0000-7000-8000-000000000000'), 404, 'not_found');
    await ta.db.updateTable('partners').set({ archived_at: new Date().toISOString() }).where('id', '=', id).execute();
    expectProblem(await testPartner(ta, id), 409, 'conflict');
    assert.equal(partner.received.length, 0);
  });

  test('401 without credentials; partners:edit is needed (it sends real traffic)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const partner = await startPartner(t, accepting());
    const id = await createPartner(ta, partner.url);
    const res = await ta.app.inject({ method: 'POST', url: `/api/partners/${id}/test` });
    expectProblem(res, 401, 'unauthorized');
    expectProblem(
      await testPartner(ta, id, {}, (await newApiKey(ta, ['partners:view'])).secret),
      403,
      'insufficient_scope',
    );
    expectProblem(await testPartner(ta, id, {}, (await newOperator(ta, ['partners:view'])).token), 403, 'forbidden');
    assert.equal(partner.received.length, 0);
    const editKey = await newApiKey(ta, ['partners:edit']);
    assert.equal((await testPartner(ta, id, {}, editKey.secret)).statusCode, 200);
    assert.equal(partner.received.length, 1);
  });
});

forEachDatabase('Test before the first save; the sample lead and placeholders', (engine) => {
  test('POST /api/partners/test sends the unsaved integration with an edited lead, stores nothing, and names every bad field at once', async (t) => {
    const ta = await buildTestApp(t, engine);
    const partner = await startPartner(t, accepting());
    const before = await counts(ta);
    const res = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/partners/test',
      payload: { integration: defaultIntegration(partner.url), lead: { first_name: 'Grace', country: 'FR' } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().outcome, 'accepted');
    assert.equal(partner.received[0].json.firstName, 'Grace');
    assert.equal(partner.received[0].json.country, 'FR');
    assert.equal(res.json().request.headers['X-Api-Key'], '••••3456', 'the secret typed in is masked in the answer');
    assert.deepEqual(await counts(ta), before);

    // A masked value cannot be kept: nothing is stored to keep.
    const masked = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/partners/test',
      payload: { integration: { ...defaultIntegration(partner.url), headers: { 'X-Api-Key': '••••3456' } } },
    });
    assert.deepEqual(
      expectProblem(masked, 400, 'validation_failed').errors!.map((e) => e.field),
      ['integration.headers.X-Api-Key'],
    );
    // Schema faults and the URL check in one answer.
    const bad = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/partners/test',
      payload: { integration: { ...defaultIntegration('http://10.0.0.9/x'), timeout_ms: 5 }, lead: { nickname: 'x' } },
    });
    const fields = expectProblem(bad, 400, 'validation_failed')
      .errors!.map((e) => e.field)
      .sort();
    assert.deepEqual(fields, ['integration.timeout_ms', 'integration.url', 'lead.nickname']);
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/partners/test', payload: {} }),
      400,
      'validation_failed',
    );
    assert.equal(partner.received.length, 1);
  });

  test('GET /api/partners/sample-lead: the lead a test sends and every placeholder with its example', async (t) => {
    const ta = await buildTestApp(t, engine);
    const viewer = await newOperator(ta, ['partners:view']);
    const body = (await call(ta.app, viewer.token, { method: 'GET', url: '/api/partners/sample-lead' })).json();
    assert.equal(body.lead.email, 'test.lead@example.com');
    assert.deepEqual(
      body.placeholders.map((p: { placeholder: string }) => p.placeholder),
      [
        'id',
        'first_name',
        'last_name',
        'email',
        'phone',
        'country',
        'ip',
        'language',
        'funnel',
        'sub_id1',
        'sub_id2',
        'sub_id3',
        'sub_id4',
        'sub_id5',
      ].map((f) => `{{lead.${f}}}`),
    );
    assert.equal(body.placeholders.find((p: { field: string }) => p.field === 'email').example, body.lead.email);
    // Each placeholder is one a template may use: a partner saved with all of them is accepted.
    const template = Object.fromEntries(
      body.placeholders.map((p: { field: string; placeholder: string }) => [p.field, p.placeholder]),
    );
    const saved = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/partners',
      payload: {
        name: 'All',
        integration: { ...defaultIntegration('https://broker.example/x'), body_template: template },
      },
    });
    assert.equal(saved.statusCode, 201, saved.body);
  });
});
