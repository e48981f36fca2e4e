import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashSecret, parseToken } from '../../auth/credentials.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import {
  insertAttempt,
  insertFlow,
  insertLeads,
  insertPartner,
  insertTrafficProvider,
} from '../../../../test/fixtures.js';

const INTEGRATION = {
  method: 'POST',
  url: 'https://broker.example/api/leads',
  headers: { Authorization: 'Bearer sk_live_abcdefgh12345678', 'X-Short': 'abcdefgh' },
  body_template: {
    person: { mail: '{{lead.email}}', names: ['{{lead.first_name}} {{lead.last_name}}'] },
    aff: 'sub={{lead.sub_id3}}',
    fixed: 7,
  },
  success_path: 'success',
  lead_id_path: 'data.id',
  autologin_path: 'data.autologin_url',
  timeout_ms: 8000,
};

const create = (ta: TestApp, payload: object, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: '/api/partners', payload });
const get = (ta: TestApp, url: string, token = ta.ownerToken) => call(ta.app, token, { method: 'GET', url });
const patch = (ta: TestApp, id: string, payload: object, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'PATCH', url: `/api/partners/${id}`, payload });
const del = (ta: TestApp, id: string, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'DELETE', url: `/api/partners/${id}` });
const rotate = (ta: TestApp, id: string, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: `/api/partners/${id}/rotate-postback-token` });
const fields = (res: Awaited<ReturnType<typeof get>>) =>
  expectProblem(res, 400, 'validation_failed')
    .errors!.map((e) => e.field)
    .sort();

async function auditActions(ta: TestApp, targetId: string) {
  const rows = await ta.db
    .selectFrom('audit_log')
    .select(['action', 'details'])
    .where('target_id', '=', targetId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ action: r.action, details: JSON.parse(r.details) }));
}

/** Every page of a list, following next_cursor; fails on a repeated id. */
async function allPages(ta: TestApp, query: string, limit: number) {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(ta, `/api/partners?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    assert.ok(page.data.length <= limit);
    ids.push(...page.data.map((p: { id: string }) => p.id));
    cursor = page.next_cursor;
  } while (cursor);
  assert.equal(new Set(ids).size, ids.length, 'no partner twice');
  return ids;
}

const PARTNER_KEYS = [
  'archived_at',
  'autologin_single_use',
  'consecutive_failures',
  'countries',
  'created_at',
  'daily_cap',
  'deal',
  'hourly_cap',
  'id',
  'integration',
  'name',
  'pause_after_failures',
  'postback_token_prefix',
  'quality',
  'status',
  'total_cap',
  'track_autologin',
  'updated_at',
  'working_hours',
].sort();

forEachDatabase('Partners', (engine) => {
  test('create with defaults and in full, read back, change: shapes, the postback token once, audit', async (t) => {
    const ta = await buildTestApp(t, engine);
    const min = await create(ta, { name: '  Minimal  ', integration: { url: 'http://buyer.example/leads' } });
    assert.equal(min.statusCode, 201, min.body);
    const m = min.json();
    assert.deepEqual(Object.keys(m).sort(), [...PARTNER_KEYS, 'postback_token', 'postback_url'].sort());
    assert.equal(m.name, 'Minimal');
    assert.equal(m.status, 'active');
    assert.deepEqual(m.countries, []);
    assert.equal(m.working_hours, null);
    assert.equal(m.daily_cap, null);
    assert.equal(m.total_cap, null);
    assert.equal(m.archived_at, null);
    assert.deepEqual(m.integration, {
      method: 'POST',
      url: 'http://buyer.example/leads',
      headers: {},
      body_template: {},
      body_format: 'json',
      success_path: '',
      lead_id_path: '',
      autologin_path: '',
      timeout_ms: 5000,
    });
    assert.match(m.postback_token, /^lgp_[0-9A-Za-z]{50}$/);
    assert.equal(m.postback_url, `/api/postback/${m.postback_token}`);
    const parsed = parseToken(m.postback_token)!;
    assert.equal(m.postback_token_prefix, `lgp_${parsed.id}`);
    const row = await ta.db.selectFrom('partners').selectAll().where('id', '=', m.id).executeTakeFirstOrThrow();
    assert.equal(row.postback_token_id, parsed.id);
    assert.equal(row.postback_token_hash, hashSecret(parsed.secret), 'only the hash of the secret is stored');
    assert.ok(!JSON.stringify(row).includes(parsed.secret));

    const full = {
      name: 'Broker One',
      status: 'paused',
      countries: ['DE', 'AT'],
      working_hours: { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' },
      daily_cap: 50,
      hourly_cap: 10,
      total_cap: 1000,
      deal: {
        model: 'cpl',
        amount: 40,
        currency: 'USD',
        by_country: { AT: 35.5 },
        crg: { rate: 12.5, period: 'week' },
      },
      pause_after_failures: 10,
      integration: { ...INTEGRATION, body_format: 'form' },
      track_autologin: true,
      autologin_single_use: true,
      quality: { refuse_flags: ['disposable_email'], min_score: 40 },
    };
    const res = await create(ta, full);
    assert.equal(res.statusCode, 201, res.body);
    const p = res.json();
    const { postback_token: _t, postback_url: _u, ...shown } = p;
    assert.deepEqual(
      { ...shown, id: undefined, created_at: undefined, updated_at: undefined, postback_token_prefix: undefined },
      {
        ...full,
        integration: { ...full.integration, headers: { Authorization: '••••5678', 'X-Short': '••••' } },
        id: undefined,
        created_at: undefined,
        updated_at: undefined,
        postback_token_prefix: undefined,
        archived_at: null,
        consecutive_failures: 0,
      },
    );

    const one = await get(ta, `/api/partners/${p.id}`);
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), shown, 'GET shows what the create showed, without the token');

    const changed = await patch(ta, p.id, {
      name: 'Broker 1',
      status: 'active',
      countries: [],
      working_hours: null,
      daily_cap: null,
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(Object.keys(changed.json()).sort(), PARTNER_KEYS);
    assert.deepEqual(
      { ...(changed.json() as object), updated_at: undefined },
      {
        ...shown,
        name: 'Broker 1',
        status: 'active',
        countries: [],
        working_hours: null,
        daily_cap: null,
        updated_at: undefined,
      },
    );
    assert.ok(changed.json().updated_at >= shown.updated_at);
    assert.deepEqual((await get(ta, `/api/partners/${p.id}`)).json(), changed.json());
    const stored = await ta.db
      .selectFrom('partners')
      .select(['name', 'status', 'countries', 'working_hours', 'daily_cap', 'total_cap'])
      .where('id', '=', p.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored, {
      name: 'Broker 1',
      status: 'active',
      countries: '[]',
      working_hours: null,
      daily_cap: null,
      total_cap: 1000,
    });

    // An empty PATCH is refused; so is an unknown field.
    assert.deepEqual(fields(await patch(ta, p.id, {})), ['body']);
    assert.deepEqual(fields(await patch(ta, p.id, { postback_token_hash: 'x' })), ['postback_token_hash']);

    const audit = await auditActions(ta, p.id);
    assert.deepEqual(
      audit.map((a) => a.action),
      ['partner.created', 'partner.updated'],
    );
    assert.equal(audit[0].details.name, 'Broker One');
    assert.deepEqual(audit[0].details.integration.headers, ['Authorization', 'X-Short'], 'header names only');
    assert.equal(audit[1].details.changes.name, 'Broker 1');
  });

  test('401 without credentials, 403 for a key without the scope or an operator without the permission; view keys cannot write', async (t) => {
    const ta = await buildTestApp(t, engine);
    const id = (await create(ta, { name: 'P', integration: { url: 'https://x.example/' } })).json().id;
    const routes = [
      { method: 'GET', url: '/api/partners' },
      { method: 'GET', url: `/api/partners/${id}` },
      { method: 'POST', url: '/api/partners', payload: { name: 'Q', integration: { url: 'https://x.example/' } } },
      { method: 'PATCH', url: `/api/partners/${id}`, payload: { name: 'R' } },
      { method: 'POST', url: `/api/partners/${id}/rotate-postback-token` },
      { method: 'DELETE', url: `/api/partners/${id}` },
    ] as const;
    const otherScope = await newApiKey(ta, ['traffic_providers:view', 'traffic_providers:edit']);
    const viewKey = await newApiKey(ta, ['partners:view']);
    const outsider = await newOperator(ta, ['traffic_providers:view', 'traffic_providers:edit']);
    const viewer = await newOperator(ta, ['partners:view']);
    for (const r of routes) {
      const res = await ta.app.inject(r);
      expectProblem(res, 401, 'unauthorized');
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
      expectProblem(await call(ta.app, otherScope.secret, r), 403, 'insufficient_scope');
      expectProblem(await call(ta.app, outsider.token, r), 403, 'forbidden');
      if (r.method === 'GET') {
        assert.equal((await call(ta.app, viewKey.secret, r)).statusCode, 200);
        assert.equal((await call(ta.app, viewer.token, r)).statusCode, 200);
      } else {
        expectProblem(await call(ta.app, viewKey.secret, r), 403, 'insufficient_scope');
        expectProblem(await call(ta.app, viewer.token, r), 403, 'forbidden');
      }
    }
    // Nothing above changed the partner, and nothing was made.
    const rows = await ta.db.selectFrom('partners').select(['id', 'name']).execute();
    assert.deepEqual(rows, [{ id, name: 'P' }]);
    // A key with the edit scope writes.
    const editKey = await newApiKey(ta, ['partners:view', 'partners:edit']);
    const made = await create(ta, { name: 'By key', integration: { url: 'https://x.example/' } }, editKey.secret);
    assert.equal(made.statusCode, 201, made.body);
    const entry = await ta.db
      .selectFrom('audit_log')
      .select(['via', 'actor_id'])
      .where('target_id', '=', made.json().id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(entry, { via: 'api_key', actor_id: ta.ownerId });
  });

  test('404 for a partner that does not exist', async (t) => {
    const ta = await buildTestApp(t, engine);
    const missing = '01900000-0000-7000-8000-000000000000';
    expectProblem(await get(ta, `/api/partners/${missing}`), 404, 'not_found');
    expectProblem(await patch(ta, missing, { name: 'x' }), 404, 'not_found');
    expectProblem(await del(ta, missing), 404, 'not_found');
    expectProblem(await rotate(ta, missing), 404, 'not_found');
  });

  test('the postback token is shown once; rotating it makes the old one stop matching', async (t) => {
    const ta = await buildTestApp(t, engine);
    const made = (await create(ta, { name: 'P', integration: INTEGRATION })).json();
    const first = made.postback_token as string;
    const firstSecret = parseToken(first)!.secret;
    const viewKey = await newApiKey(ta, ['partners:view', 'audit:view']);
    const bodies = [
      (await get(ta, `/api/partners/${made.id}`)).body,
      (await get(ta, '/api/partners')).body,
      (await get(ta, `/api/partners/${made.id}`, viewKey.secret)).body,
      (await patch(ta, made.id, { name: 'P2' })).body,
      (await get(ta, '/api/audit-log?limit=500')).body,
    ];
    for (const body of bodies) {
      assert.ok(!body.includes(firstSecret), 'no token secret in any later answer');
      assert.ok(!/postback_token"|postback_url|lgp_[0-9A-Za-z]{20,}/.test(body), body.slice(0, 300));
    }

    const rotated = await rotate(ta, made.id);
    assert.equal(rotated.statusCode, 200, rotated.body);
    const r = rotated.json();
    assert.deepEqual(Object.keys(r).sort(), [...PARTNER_KEYS, 'postback_token', 'postback_url'].sort());
    const second = parseToken(r.postback_token)!;
    assert.ok(second && second.kind === 'lgp_');
    assert.notEqual(r.postback_token, first);
    assert.equal(r.postback_url, `/api/postback/${r.postback_token}`);
    assert.equal(r.postback_token_prefix, `lgp_${second.id}`);
    assert.equal(r.name, 'P2');
    const row = await ta.db
      .selectFrom('partners')
      .select(['postback_token_id', 'postback_token_hash'])
      .where('id', '=', made.id)
      .executeTakeFirstOrThrow();
    const old = parseToken(first)!;
    assert.notEqual(row.postback_token_id, old.id, 'the old token id finds nothing');
    assert.notEqual(row.postback_token_hash, hashSecret(old.secret), 'the old secret does not match');
    assert.deepEqual(row, { postback_token_id: second.id, postback_token_hash: hashSecret(second.secret) });
    const byOldId = await ta.db.selectFrom('partners').select('id').where('postback_token_id', '=', old.id).execute();
    assert.deepEqual(byOldId, []);

    // Neither token in later answers, the audit log or any log line.
    const after = [
      (await get(ta, `/api/partners/${made.id}`)).body,
      (await get(ta, '/api/audit-log?limit=500')).body,
    ].join('\n');
    const logs = ta.logs.join('\n');
    for (const secret of [firstSecret, second.secret]) {
      assert.ok(!after.includes(secret));
      assert.ok(!logs.includes(secret), 'no token in a log line');
    }
    assert.ok(logs.includes('rotate-postback-token'), 'the log capture works');
    const actions = (await auditActions(ta, made.id)).map((a) => a.action);
    assert.deepEqual(actions, ['partner.created', 'partner.updated', 'partner.postback_token_rotated']);
  });

  test('delete: 409 while a live flow routes to it, archived when leads or attempts refer to it, deleted otherwise', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);

    const routed = await insertPartner(ta.db, { name: 'Routed' });
    const flow = await insertFlow(ta.db, [routed], { name: 'Main flow' });
    const refused = expectProblem(await del(ta, routed), 409, 'conflict');
    assert.match(refused.detail, /Main flow/);
    assert.match(refused.detail, new RegExp(flow));
    assert.ok(await ta.db.selectFrom('partners').select('id').where('id', '=', routed).executeTakeFirst());
    // Once the flow is archived, the partner is no longer live configuration: archived, not deleted (the target still refers).
    await ta.db.updateTable('flows').set({ archived_at: new Date().toISOString() }).where('id', '=', flow).execute();
    assert.equal((await del(ta, routed)).statusCode, 204);
    assert.ok((await get(ta, `/api/partners/${routed}`)).json().archived_at);

    const withLeads = (await create(ta, { name: 'With leads', integration: INTEGRATION })).json().id;
    await insertLeads(ta.db, [{ traffic_provider_id: provider, partner_id: withLeads, status: 'delivered' }]);
    assert.equal((await del(ta, withLeads)).statusCode, 204);
    const archived = await get(ta, `/api/partners/${withLeads}`);
    assert.equal(archived.statusCode, 200, 'still readable by id');
    assert.match(archived.json().archived_at, /^\d{4}-\d\d-\d\dT/);
    expectProblem(await patch(ta, withLeads, { name: 'again' }), 409, 'conflict');
    expectProblem(await rotate(ta, withLeads), 409, 'conflict');
    assert.equal((await del(ta, withLeads)).statusCode, 204, 'deleting again changes nothing');
    assert.equal((await get(ta, `/api/partners/${withLeads}`)).json().archived_at, archived.json().archived_at);

    const withAttempt = await insertPartner(ta.db);
    const [lead] = await insertLeads(ta.db, [{ traffic_provider_id: provider, status: 'rejected' }]);
    await insertAttempt(ta.db, { lead_id: lead, partner_id: withAttempt, attempt_no: 1, outcome: 'rejected' });
    assert.equal((await del(ta, withAttempt)).statusCode, 204);
    assert.ok(
      (await ta.db.selectFrom('partners').select('archived_at').where('id', '=', withAttempt).executeTakeFirstOrThrow())
        .archived_at,
    );

    const unused = (await create(ta, { name: 'Unused', integration: INTEGRATION })).json().id;
    assert.equal((await del(ta, unused)).statusCode, 204);
    assert.equal(
      await ta.db.selectFrom('partners').select('id').where('id', '=', unused).executeTakeFirst(),
      undefined,
    );
    expectProblem(await get(ta, `/api/partners/${unused}`), 404, 'not_found');

    // Archived partners are left out of lists unless asked for.
    const listed = (await get(ta, '/api/partners')).json().data.map((p: { id: string }) => p.id);
    assert.deepEqual(listed, []);
    const all = (await get(ta, '/api/partners?include_archived=true')).json().data.map((p: { id: string }) => p.id);
    assert.deepEqual(all, [routed, withLeads, withAttempt]);

    assert.deepEqual(
      (await auditActions(ta, withLeads)).map((a) => a.action),
      ['partner.created', 'partner.archived'],
    );
    assert.deepEqual(
      (await auditActions(ta, unused)).map((a) => a.action),
      ['partner.created', 'partner.deleted'],
    );
    assert.deepEqual(
      (await auditActions(ta, routed)).map((a) => a.action),
      ['partner.archived'],
    );
  });

  test('list: every partner exactly once across pages; filters by status, name, country and archive', async (t) => {
    const ta = await buildTestApp(t, engine);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await insertPartner(ta.db, { name: `Broker ${i}` }));
    const paused = await insertPartner(ta.db, { name: 'Sleepy 50%_off', status: 'paused', countries: ['DE', 'FR'] });
    const french = await insertPartner(ta.db, { name: 'Le Courtier', countries: ['FR'] });
    const archived = await insertPartner(ta.db, { name: 'Broker old', countries: ['DE'] });
    await ta.db
      .updateTable('partners')
      .set({ archived_at: new Date().toISOString() })
      .where('id', '=', archived)
      .execute();
    const live = [...ids, paused, french];

    for (const limit of [1, 3, 9, 10, 500]) assert.deepEqual(await allPages(ta, '', limit), live, `limit ${limit}`);
    assert.deepEqual(await allPages(ta, '&include_archived=true', 4), [...live, archived]);

    const list = async (q: string) =>
      (await get(ta, `/api/partners?${q}`)).json().data.map((p: { id: string }) => p.id);
    assert.deepEqual(await list('status=paused'), [paused]);
    assert.deepEqual(await list('status=active'), [...ids, french]);
    assert.deepEqual(await list('q=bROKER'), ids);
    assert.deepEqual(await list('q=broker&include_archived=true'), [...ids, archived]);
    assert.deepEqual(await list('q=50%25_'), [paused], 'LIKE wildcards in q are literal');
    assert.deepEqual(await list('q=0%25'), [paused]);
    assert.deepEqual(await list('q=nobody'), []);
    // country: partners listing it, or accepting every country.
    assert.deepEqual(await list('country=FR'), [...ids, paused, french]);
    assert.deepEqual(await list('country=DE'), [...ids, paused]);
    assert.deepEqual(await list('country=DE&include_archived=true'), [...ids, paused, archived]);
    assert.deepEqual(await list('country=DE&status=paused&q=sleepy'), [paused]);
    await ta.db.updateTable('partners').set({ countries: '["IT"]' }).where('id', 'in', ids).execute();
    assert.deepEqual(await list('country=DE'), [paused]);
    assert.deepEqual(await list('country=IT'), ids);

    assert.deepEqual(fields(await get(ta, '/api/partners?limit=0')), ['limit']);
    assert.deepEqual(fields(await get(ta, '/api/partners?limit=501')), ['limit']);
    assert.deepEqual(fields(await get(ta, '/api/partners?cursor=nonsense')), ['cursor']);
    assert.deepEqual(fields(await get(ta, '/api/partners?country=de')), ['country']);
    assert.deepEqual(fields(await get(ta, '/api/partners?status=archived')), ['status']);
    assert.deepEqual(fields(await get(ta, '/api/partners?sort=name')), ['sort']);
  });
});

forEachDatabase('Partners: every error in one answer', (engine) => {
  test('a body its schema refuses still gets the URL, header, template, time zone and cap checks: one 400 names every bad field', async (t) => {
    const ta = await buildTestApp(t, engine);
    const body = {
      name: '',
      countries: ['UK'],
      daily_cap: 10,
      total_cap: 5,
      working_hours: { timezone: 'Mars/Olympus', days: [1], from: '09:00', to: '18:00' },
      integration: {
        url: 'http://10.1.2.3/leads',
        headers: { 'Content-Length': '1', 'bad name': 'x' },
        body_template: { email: '{{lead.mail}}' },
        timeout_ms: -5,
      },
    };
    const first = expectProblem(await create(ta, body), 400, 'validation_failed');
    const byField = new Map(first.errors!.map((e) => [e.field, e.message]));
    assert.deepEqual([...byField.keys()].sort(), [
      'countries[0]',
      'integration.body_template.email',
      'integration.headers.Content-Length',
      'integration.headers.bad name',
      'integration.timeout_ms',
      'integration.url',
      'name',
      'total_cap',
      'working_hours.timezone',
    ]);
    assert.equal(byField.get('countries[0]'), '"UK" is not an ISO 3166-1 alpha-2 code; use GB');
    // The same on PATCH, and nothing stored by either.
    const ok = await create(ta, { name: 'Fine', integration: INTEGRATION });
    assert.equal(ok.statusCode, 201, ok.body);
    const p = expectProblem(
      await patch(ta, ok.json().id, { ...body, name: 'x'.repeat(500) }),
      400,
      'validation_failed',
    );
    assert.ok(
      p.errors!.some((e) => e.field === 'name') &&
        p.errors!.some((e) => e.field === 'integration.url') &&
        p.errors!.some((e) => e.field === 'total_cap'),
    );
    assert.equal((await get(ta, '/api/partners')).json().data.length, 1);
    assert.equal((await get(ta, `/api/partners/${ok.json().id}`)).json().name, 'Fine');
    // A body of the wrong shape altogether: the schema's errors, no crash in the extra checks.
    for (const odd of [
      [],
      { integration: [] },
      { integration: { url: 5, headers: 'x', body_template: null } },
      { working_hours: 'x', daily_cap: 'x' },
    ]) {
      expectProblem(await create(ta, odd as object), 400, 'validation_failed');
    }
  });
});
