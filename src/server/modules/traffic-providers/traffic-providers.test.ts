import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashSecret, parseToken, secretMatches } from '../../auth/credentials.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import { insertCampaign, insertLeads, insertTrafficProvider } from '../../../../test/fixtures.js';

const BASE = '/api/traffic-providers';
const create = (ta: TestApp, payload: object, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: BASE, payload });
const get = (ta: TestApp, url: string, token = ta.ownerToken) => call(ta.app, token, { method: 'GET', url });
const patch = (ta: TestApp, id: string, payload: object, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'PATCH', url: `${BASE}/${id}`, payload });
const del = (ta: TestApp, id: string, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'DELETE', url: `${BASE}/${id}` });
const rotate = (ta: TestApp, id: string, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: `${BASE}/${id}/rotate-token` });
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

/** The stored token of a provider, checked the way the intake endpoint will: id lookup, then hash. */
async function tokenWorks(ta: TestApp, token: string): Promise<boolean> {
  const parsed = parseToken(token);
  if (!parsed || parsed.kind !== 'lgt_') return false;
  const row = await ta.db
    .selectFrom('traffic_providers')
    .select('token_hash')
    .where('token_id', '=', parsed.id)
    .executeTakeFirst();
  return !!row && secretMatches(parsed.secret, row.token_hash);
}

async function allPages(ta: TestApp, query: string, limit: number) {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(ta, `${BASE}?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(res.json().data.length <= limit);
    ids.push(...res.json().data.map((p: { id: string }) => p.id));
    cursor = res.json().next_cursor;
  } while (cursor);
  assert.equal(new Set(ids).size, ids.length, 'no provider twice');
  return ids;
}

const KEYS = [
  'allowed_ips',
  'archived_at',
  'created_at',
  'duplicate_policy',
  'id',
  'name',
  'review',
  'silent_after_hours',
  'status',
  'token_prefix',
  'updated_at',
  'velocity',
];

forEachDatabase('Traffic providers', (engine) => {
  test('create with defaults and in full, read back, change: shapes, the token once, audit', async (t) => {
    const ta = await buildTestApp(t, engine);
    const min = await create(ta, { name: ' Affiliate A ' });
    assert.equal(min.statusCode, 201, min.body);
    const m = min.json();
    assert.deepEqual(Object.keys(m).sort(), [...KEYS, 'token', 'intake_url'].sort());
    assert.equal(m.name, 'Affiliate A');
    assert.equal(m.status, 'active');
    assert.deepEqual(m.allowed_ips, []);
    assert.deepEqual(m.duplicate_policy, { fields: ['email', 'phone'], window_hours: 720, scope: 'provider' });
    assert.equal(m.archived_at, null);
    assert.match(m.token, /^lgt_[0-9A-Za-z]{50}$/);
    const parsed = parseToken(m.token)!;
    assert.equal(m.token_prefix, `lgt_${parsed.id}`);
    const row = await ta.db
      .selectFrom('traffic_providers')
      .selectAll()
      .where('id', '=', m.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.token_id, parsed.id);
    assert.equal(row.token_hash, hashSecret(parsed.secret), 'only the hash of the secret is stored');
    assert.ok(!JSON.stringify(row).includes(parsed.secret));
    assert.ok(await tokenWorks(ta, m.token));

    const full = await create(ta, {
      name: 'Affiliate B',
      status: 'paused',
      allowed_ips: ['203.0.113.7', '10.0.0.0/8', '2001:DB8::/32', '::ffff:198.51.100.1', '10.0.0.0/8'],
      duplicate_policy: { fields: ['phone'], window_hours: 0, scope: 'global' },
    });
    assert.equal(full.statusCode, 201, full.body);
    const f = full.json();
    assert.equal(f.status, 'paused');
    assert.deepEqual(
      f.allowed_ips,
      ['203.0.113.7/32', '10.0.0.0/8', '2001:db8::/32', '198.51.100.1/32'],
      'canonical and de-duplicated',
    );
    assert.deepEqual(f.duplicate_policy, { fields: ['phone'], window_hours: 0, scope: 'global' });
    const stored = await ta.db
      .selectFrom('traffic_providers')
      .select(['allowed_ips', 'duplicate_policy'])
      .where('id', '=', f.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(stored.allowed_ips), f.allowed_ips);
    assert.deepEqual(JSON.parse(stored.duplicate_policy), f.duplicate_policy);

    const { token: _t, intake_url: _u, ...shown } = f;
    const one = await get(ta, `${BASE}/${f.id}`);
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), shown, 'GET shows what the create showed, without the token and intake link');

    const changed = await patch(ta, f.id, {
      name: 'Affiliate B2',
      status: 'active',
      allowed_ips: [],
      duplicate_policy: { fields: [], window_hours: 24, scope: 'provider' },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(Object.keys(changed.json()).sort(), KEYS);
    const c = changed.json();
    assert.deepEqual(
      { ...c, updated_at: undefined },
      {
        ...shown,
        name: 'Affiliate B2',
        status: 'active',
        allowed_ips: [],
        duplicate_policy: { fields: [], window_hours: 24, scope: 'provider' },
        updated_at: undefined,
      },
    );
    assert.equal(c.token_prefix, f.token_prefix, 'a PATCH does not touch the token');
    assert.ok(await tokenWorks(ta, f.token));
    const partial = await patch(ta, f.id, { allowed_ips: ['192.0.2.0/24'] });
    assert.deepEqual(
      { ...(partial.json() as object), updated_at: undefined },
      { ...c, allowed_ips: ['192.0.2.0/24'], updated_at: undefined },
    );
    assert.deepEqual((await get(ta, `${BASE}/${f.id}`)).json(), partial.json());

    assert.deepEqual(fields(await patch(ta, f.id, {})), ['body']);
    assert.deepEqual(fields(await patch(ta, f.id, { token_hash: 'x' })), ['token_hash']);

    const audit = await auditActions(ta, f.id);
    assert.deepEqual(
      audit.map((a) => a.action),
      ['traffic_provider.created', 'traffic_provider.updated', 'traffic_provider.updated'],
    );
    assert.deepEqual(audit[0].details.allowed_ips, f.allowed_ips);
    assert.equal(audit[1].details.changes.name, 'Affiliate B2');
  });

  test('401 without credentials, 403 for a key without the scope or an operator without the permission; view keys cannot write', async (t) => {
    const ta = await buildTestApp(t, engine);
    const id = (await create(ta, { name: 'P' })).json().id;
    const routes = [
      { method: 'GET', url: BASE },
      { method: 'GET', url: `${BASE}/${id}` },
      { method: 'POST', url: BASE, payload: { name: 'Q' } },
      { method: 'PATCH', url: `${BASE}/${id}`, payload: { name: 'R' } },
      { method: 'POST', url: `${BASE}/${id}/rotate-token` },
      { method: 'DELETE', url: `${BASE}/${id}` },
    ] as const;
    const otherScope = await newApiKey(ta, ['partners:view', 'partners:edit', 'campaigns:view']);
    const viewKey = await newApiKey(ta, ['traffic_providers:view']);
    const outsider = await newOperator(ta, ['partners:view', 'partners:edit']);
    const viewer = await newOperator(ta, ['traffic_providers:view']);
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
    const rows = await ta.db.selectFrom('traffic_providers').select(['id', 'name']).execute();
    assert.deepEqual(rows, [{ id, name: 'P' }], 'nothing was changed or made');
    const editKey = await newApiKey(ta, ['traffic_providers:edit', 'traffic_providers:view']);
    const made = await create(ta, { name: 'By key' }, editKey.secret);
    assert.equal(made.statusCode, 201, made.body);
    assert.equal((await rotate(ta, made.json().id, editKey.secret)).statusCode, 200);
  });

  test('validation errors name each bad field', async (t) => {
    const ta = await buildTestApp(t, engine);
    assert.deepEqual(
      fields(
        await create(ta, {
          name: 'P',
          allowed_ips: ['10.0.0.1', 'not-an-ip', '10.0.0.0/33', '300.1.1.1', ' 192.0.2.1 '],
        }),
      ),
      ['allowed_ips[1]', 'allowed_ips[2]', 'allowed_ips[3]'],
    );
    const cases: [object, string[]][] = [
      [{ name: '' }, ['name']],
      [{}, ['name']],
      [{ name: 'P', status: 'deleted' }, ['status']],
      [{ name: 'P', allowed_ips: 'any' }, ['allowed_ips']],
      [{ name: 'P', allowed_ips: [1] }, ['allowed_ips[0]']],
      [
        { name: 'P', duplicate_policy: { fields: ['fax'], window_hours: 8761, scope: 'world' } },
        ['duplicate_policy.fields[0]', 'duplicate_policy.scope', 'duplicate_policy.window_hours'],
      ],
      [
        { name: 'P', duplicate_policy: { fields: ['email', 'email'], window_hours: -1, scope: 'global' } },
        ['duplicate_policy.fields', 'duplicate_policy.window_hours'],
      ],
      [{ name: 'P', duplicate_policy: { fields: [] } }, ['duplicate_policy.scope', 'duplicate_policy.window_hours']],
      [{ name: 'P', token: 'lgt_mine' }, ['token']],
    ];
    for (const [payload, expected] of cases)
      assert.deepEqual(fields(await create(ta, payload)), expected, JSON.stringify(payload));
    assert.deepEqual(await ta.db.selectFrom('traffic_providers').select('id').execute(), [], 'nothing stored');
    const id = (
      await create(ta, { name: 'P', duplicate_policy: { fields: ['email'], window_hours: 8760, scope: 'global' } })
    ).json().id;
    assert.deepEqual(fields(await patch(ta, id, { allowed_ips: ['::1', 'fe80::/129'] })), ['allowed_ips[1]']);
    assert.deepEqual(fields(await patch(ta, id, { duplicate_policy: { window_hours: 1 } })), [
      'duplicate_policy.fields',
      'duplicate_policy.scope',
    ]);
    const row = await ta.db
      .selectFrom('traffic_providers')
      .select(['allowed_ips', 'duplicate_policy'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, {
      allowed_ips: '[]',
      duplicate_policy: JSON.stringify({ fields: ['email'], window_hours: 8760, scope: 'global' }),
    });
  });

  test('404 for a provider that does not exist', async (t) => {
    const ta = await buildTestApp(t, engine);
    const missing = '01900000-0000-7000-8000-000000000000';
    expectProblem(await get(ta, `${BASE}/${missing}`), 404, 'not_found');
    expectProblem(await patch(ta, missing, { name: 'x' }), 404, 'not_found');
    expectProblem(await del(ta, missing), 404, 'not_found');
    expectProblem(await rotate(ta, missing), 404, 'not_found');
  });

  test('the intake token is shown once; rotating it makes the old one stop matching', async (t) => {
    const ta = await buildTestApp(t, engine);
    const made = (await create(ta, { name: 'P' })).json();
    const first = made.token as string;
    const firstSecret = parseToken(first)!.secret;
    const viewKey = await newApiKey(ta, ['traffic_providers:view', 'audit:view']);
    const bodies = [
      (await get(ta, `${BASE}/${made.id}`)).body,
      (await get(ta, BASE)).body,
      (await get(ta, `${BASE}?include_archived=true`, viewKey.secret)).body,
      (await patch(ta, made.id, { name: 'P2' })).body,
      (await get(ta, '/api/audit-log?limit=500')).body,
    ];
    for (const body of bodies) {
      assert.ok(!body.includes(firstSecret), 'no token secret in any later answer');
      assert.ok(!/"token"|lgt_[0-9A-Za-z]{20,}/.test(body), body.slice(0, 300));
    }

    const rotated = await rotate(ta, made.id);
    assert.equal(rotated.statusCode, 200, rotated.body);
    const r = rotated.json();
    assert.deepEqual(Object.keys(r).sort(), [...KEYS, 'token', 'intake_url'].sort());
    assert.equal(r.name, 'P2');
    assert.notEqual(r.token, first);
    const second = parseToken(r.token)!;
    assert.equal(second.kind, 'lgt_');
    assert.equal(r.token_prefix, `lgt_${second.id}`);
    assert.equal(await tokenWorks(ta, first), false, 'the old token stops matching');
    assert.equal(await tokenWorks(ta, r.token), true, 'the new one matches');
    // Even with the old id pointed at the row, the old secret does not match its hash.
    const row = await ta.db
      .selectFrom('traffic_providers')
      .select(['token_id', 'token_hash'])
      .where('id', '=', made.id)
      .executeTakeFirstOrThrow();
    assert.equal(secretMatches(firstSecret, row.token_hash), false);
    assert.deepEqual(row, { token_id: second.id, token_hash: hashSecret(second.secret) });

    const after = [(await get(ta, `${BASE}/${made.id}`)).body, (await get(ta, '/api/audit-log?limit=500')).body].join(
      '\n',
    );
    const logs = ta.logs.join('\n');
    for (const secret of [firstSecret, second.secret]) {
      assert.ok(!after.includes(secret));
      assert.ok(!logs.includes(secret), 'no token in a log line');
    }
    assert.ok(logs.includes('rotate-token'), 'the log capture works');
    assert.deepEqual(
      (await auditActions(ta, made.id)).map((a) => a.action),
      ['traffic_provider.created', 'traffic_provider.updated', 'traffic_provider.token_rotated'],
    );
  });

  test('delete: 409 while a live campaign uses it, archived when leads or campaigns refer to it, deleted otherwise', async (t) => {
    const ta = await buildTestApp(t, engine);
    const used = (await create(ta, { name: 'Used' })).json();
    const campaign = await insertCampaign(ta.db, used.id, null, { name: 'Spring promo' });
    const refused = expectProblem(await del(ta, used.id), 409, 'conflict');
    assert.match(refused.detail, /Spring promo/);
    assert.match(refused.detail, new RegExp(campaign));
    assert.equal((await get(ta, `${BASE}/${used.id}`)).json().archived_at, null);
    // Once the campaign is archived it is no longer live: the provider is archived (the campaign still refers to it).
    await ta.db
      .updateTable('campaigns')
      .set({ archived_at: new Date().toISOString() })
      .where('id', '=', campaign)
      .execute();
    assert.equal((await del(ta, used.id)).statusCode, 204);
    const archived = await get(ta, `${BASE}/${used.id}`);
    assert.equal(archived.statusCode, 200, 'still readable by id');
    assert.match(archived.json().archived_at, /^\d{4}-\d\d-\d\dT/);
    expectProblem(await patch(ta, used.id, { name: 'again' }), 409, 'conflict');
    expectProblem(await rotate(ta, used.id), 409, 'conflict');
    assert.ok(await tokenWorks(ta, used.token), 'a refused rotation changed nothing');
    assert.equal((await del(ta, used.id)).statusCode, 204, 'deleting again changes nothing');
    assert.equal((await get(ta, `${BASE}/${used.id}`)).json().archived_at, archived.json().archived_at);

    const withLeads = await insertTrafficProvider(ta.db, { name: 'With leads' });
    await insertLeads(ta.db, [
      { traffic_provider_id: withLeads },
      { traffic_provider_id: withLeads, status: 'duplicate' },
    ]);
    assert.equal((await del(ta, withLeads)).statusCode, 204);
    assert.ok(
      (
        await ta.db
          .selectFrom('traffic_providers')
          .select('archived_at')
          .where('id', '=', withLeads)
          .executeTakeFirstOrThrow()
      ).archived_at,
    );

    const unused = (await create(ta, { name: 'Unused' })).json();
    assert.equal((await del(ta, unused.id)).statusCode, 204);
    assert.equal(
      await ta.db.selectFrom('traffic_providers').select('id').where('id', '=', unused.id).executeTakeFirst(),
      undefined,
    );
    expectProblem(await get(ta, `${BASE}/${unused.id}`), 404, 'not_found');
    assert.equal(await tokenWorks(ta, unused.token), false);

    assert.deepEqual((await get(ta, BASE)).json().data, []);
    const all = (await get(ta, `${BASE}?include_archived=true`)).json().data.map((p: { id: string }) => p.id);
    assert.deepEqual(all, [used.id, withLeads]);

    assert.deepEqual(
      (await auditActions(ta, used.id)).map((a) => a.action),
      ['traffic_provider.created', 'traffic_provider.archived'],
    );
    assert.deepEqual(
      (await auditActions(ta, unused.id)).map((a) => a.action),
      ['traffic_provider.created', 'traffic_provider.deleted'],
    );
    assert.deepEqual(
      (await auditActions(ta, withLeads)).map((a) => a.action),
      ['traffic_provider.archived'],
    );
  });

  test('list: every provider exactly once across pages; filters by status, name and archive', async (t) => {
    const ta = await buildTestApp(t, engine);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await insertTrafficProvider(ta.db, { name: `Affiliate ${i}` }));
    const paused = (await create(ta, { name: 'Media_Buyer 100%', status: 'paused' })).json().id;
    const archived = await insertTrafficProvider(ta.db, { name: 'Affiliate old' });
    await ta.db
      .updateTable('traffic_providers')
      .set({ archived_at: new Date().toISOString() })
      .where('id', '=', archived)
      .execute();
    const live = [...ids, paused];

    for (const limit of [1, 2, 6, 7, 50]) assert.deepEqual(await allPages(ta, '', limit), live, `limit ${limit}`);
    assert.deepEqual(await allPages(ta, '&include_archived=true', 3), [...live, archived]);

    const list = async (q: string) => (await get(ta, `${BASE}?${q}`)).json().data.map((p: { id: string }) => p.id);
    assert.deepEqual(await list('status=paused'), [paused]);
    assert.deepEqual(await list('status=active'), ids);
    assert.deepEqual(await list('status=active&include_archived=true'), [...ids, archived]);
    assert.deepEqual(await list('q=AFFILIATE'), ids);
    assert.deepEqual(await list('q=affiliate&include_archived=true'), [...ids, archived]);
    assert.deepEqual(await list('q=e_0'), [], '_ is literal, not a wildcard');
    assert.deepEqual(await list('q=e%200'), [ids[0]]);
    assert.deepEqual(await list('q=a_b'), [paused]);
    assert.deepEqual(await list('q=r%20100%25'), [paused]);
    assert.deepEqual(await list('q=r%20100%25%25'), [], '% is literal, not a wildcard');
    assert.deepEqual(await list('q=zzz'), []);

    assert.deepEqual(fields(await get(ta, `${BASE}?limit=0`)), ['limit']);
    assert.deepEqual(fields(await get(ta, `${BASE}?limit=501`)), ['limit']);
    assert.deepEqual(fields(await get(ta, `${BASE}?cursor=${Buffer.from('{"id":5}').toString('base64url')}`)), [
      'cursor',
    ]);
    assert.deepEqual(fields(await get(ta, `${BASE}?include_archived=maybe`)), ['include_archived']);
    assert.deepEqual(fields(await get(ta, `${BASE}?country=DE`)), ['country']);
  });
});
