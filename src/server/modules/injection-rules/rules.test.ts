import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { insertLeads } from '../../../../test/fixtures.js';
import { makeWorld, type World } from '../../../../test/distribution-world.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  login,
  newApiKey,
  newOperator,
  OWNER,
  type Engine,
  type TestApp,
} from '../../../../test/helpers.js';

// The recurring rules API: input checks, access, preview, list/get/update/delete, audit.

async function setup(t: TestContext, engine: Engine) {
  const ta = await buildTestApp(t, engine);
  const a = await makeWorld(t, ta, [{}]);
  const b = await makeWorld(t, ta, [{}]);
  const leads = (w: World, n: number, over: Record<string, unknown> = {}) =>
    insertLeads(
      ta.db,
      Array.from({ length: n }, () => ({
        traffic_provider_id: w.providerId,
        campaign_id: w.campaignId,
        flow_id: w.flowId,
        status: 'rejected' as const,
        reason: 'declined',
        ...over,
      })),
    );
  return { ta, a, b, leads };
}

const send = (
  ta: TestApp,
  method: 'POST' | 'PATCH' | 'GET' | 'DELETE',
  url: string,
  payload?: object,
  token = ta.ownerToken,
) => call(ta.app, token, { method, url, ...(payload ? { payload } : {}) });
const fields = (res: Awaited<ReturnType<typeof send>>) =>
  expectProblem(res, 400, 'validation_failed').errors!.map((e) => e.field);

export const ruleBody = (w: World, over: Record<string, unknown> = {}) => ({
  name: 'Refused, daily',
  filter: { status: ['rejected'], campaign_id: w.campaignId, date_type: 'status_updated', last_days: 7 },
  flow_id: w.flowId,
  per_minute: 30,
  schedule: { time_zone: 'Europe/Berlin', at: '10:00' },
  ...over,
});

forEachDatabase('Recurring re-injection rules API', (engine) => {
  test('needs leads:edit: 401 without a credential, 403 for a view-only role and key', async (t) => {
    const { ta, a } = await setup(t, engine);
    expectProblem(
      await call(ta.app, null, { method: 'POST', url: '/api/injection-rules', payload: ruleBody(a) }),
      401,
      'unauthorized',
    );
    const viewer = await newOperator(ta, ['leads:view']);
    expectProblem(await send(ta, 'POST', '/api/injection-rules', ruleBody(a), viewer.token), 403, 'forbidden');
    expectProblem(await send(ta, 'GET', '/api/injection-rules', undefined, viewer.token), 403, 'forbidden');
    const preview = { filter: { last_days: 7 } };
    expectProblem(await send(ta, 'POST', '/api/injection-rules/preview', preview, viewer.token), 403, 'forbidden');
    const key = await newApiKey(ta, ['leads:view']);
    expectProblem(await send(ta, 'POST', '/api/injection-rules', ruleBody(a), key.secret), 403, 'insufficient_scope');
    assert.equal((await ta.db.selectFrom('injection_rules').selectAll().execute()).length, 0);
  });

  test('bad input: a 400 naming each field; dates in the filter are refused by name; nothing stored', async (t) => {
    const { ta, a, b } = await setup(t, engine);
    const create = (over: Record<string, unknown>) => send(ta, 'POST', '/api/injection-rules', ruleBody(a, over));
    const filter = (over: Record<string, unknown>) => create({ filter: { ...ruleBody(a).filter, ...over } });
    assert.deepEqual(fields(await filter({ date_from: '2026-01-01', date_to: '2026-02-01' })), [
      'filter.date_from',
      'filter.date_to',
    ]);
    assert.deepEqual(fields(await filter({ last_days: 0 })), ['filter.last_days']);
    assert.deepEqual(fields(await filter({ last_days: 366 })), ['filter.last_days']);
    assert.deepEqual(fields(await create({ filter: { status: ['rejected'] } })), ['filter.last_days']);
    assert.deepEqual(fields(await filter({ status: ['lost'] })), ['filter.status']);
    assert.deepEqual(fields(await create({ name: ' ' })), ['name']);
    assert.deepEqual(fields(await create({ flow_id: undefined })), ['flow_id']);
    assert.deepEqual(fields(await create({ partner_ids: [b.partners[0].id] })), ['partner_ids']);
    assert.deepEqual(fields(await create({ flow_id: 'nope' })), ['flow_id']);
    assert.deepEqual(fields(await create({ per_minute: 0 })), ['per_minute']);
    assert.deepEqual(fields(await create({ window: { time_zone: 'UTC', from: '09:00', to: '09:00' } })), ['window.to']);
    assert.deepEqual(fields(await create({ schedule: { time_zone: 'Mars/Base', at: '10:00' } })), [
      'schedule.time_zone',
    ]);
    assert.deepEqual(fields(await create({ schedule: { time_zone: 'UTC', at: '25:00' } })), ['schedule.at']);
    assert.deepEqual(fields(await create({ schedule: { time_zone: 'UTC', at: '10:00', days: ['monday'] } })), [
      'schedule.days[0]',
    ]);
    assert.deepEqual(fields(await create({ schedule: { time_zone: 'UTC', at: '10:00', days: [] } })), [
      'schedule.days',
    ]);
    assert.deepEqual(
      fields(await create({ flow_id: 'nope', schedule: { time_zone: 'Mars/Base', at: '10:00' } })),
      ['flow_id', 'schedule.time_zone'],
      'every bad field at once',
    );
    assert.deepEqual(
      fields(await send(ta, 'POST', '/api/injection-rules/preview', { filter: { date_from: 'x' } })).sort(),
      ['filter.date_from', 'filter.last_days'],
    );
    assert.equal((await ta.db.selectFrom('injection_rules').selectAll().execute()).length, 0);
  });

  test('preview counts what a run now would take (0 when nothing matches); create, list, get, update, delete, audited', async (t) => {
    const { ta, a, b, leads } = await setup(t, engine);
    const day = 86_400_000;
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    await leads(a, 3, { status_updated_at: ago(day) });
    await leads(a, 2, { status_updated_at: ago(10 * day) }); // refused too long ago
    await leads(a, 1, { status: 'delivered', status_updated_at: ago(day) });
    await leads(b, 4, { status_updated_at: ago(day) }); // another campaign
    const preview = async (filter: object) =>
      (await send(ta, 'POST', '/api/injection-rules/preview', { filter })).json().count;
    assert.equal(await preview(ruleBody(a).filter), 3);
    assert.equal(await preview({ ...ruleBody(a).filter, last_days: 30 }), 5);
    assert.equal(await preview({ ...ruleBody(a).filter, campaign_id: 'none-such' }), 0);

    const res = await send(ta, 'POST', '/api/injection-rules', ruleBody(a));
    assert.equal(res.statusCode, 201, res.body);
    const rule = res.json();
    assert.deepEqual(
      [rule.enabled, rule.reoffer, rule.schedule.days.length, rule.last_run, rule.flow_id, rule.filter.last_days],
      [true, false, 7, null, a.flowId, 7],
    );
    assert.ok(Date.parse(rule.next_run_at) > Date.now());
    assert.equal((await send(ta, 'GET', `/api/injection-rules/${rule.id}`)).json().name, 'Refused, daily');
    const other = (await send(ta, 'POST', '/api/injection-rules', ruleBody(b, { name: 'B' }))).json();
    const page = (await send(ta, 'GET', '/api/injection-rules?limit=1')).json();
    assert.deepEqual(
      page.data.map((r: { id: string }) => r.id),
      [other.id],
    );
    const rest = (await send(ta, 'GET', `/api/injection-rules?limit=1&cursor=${page.next_cursor}`)).json();
    assert.deepEqual([rest.data.map((r: { id: string }) => r.id), rest.next_cursor], [[rule.id], null]);

    // Update: disable, retarget to partners, drop nothing else.
    const patch = (body: object) => send(ta, 'PATCH', `/api/injection-rules/${rule.id}`, body);
    const off = (await patch({ enabled: false })).json();
    assert.deepEqual([off.enabled, off.next_run_at, off.flow_id, off.name], [false, null, a.flowId, 'Refused, daily']);
    const moved = await patch({
      partner_ids: [a.partners[0].id],
      window: { time_zone: 'UTC', from: '08:00', to: '18:00' },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual([moved.json().flow_id, moved.json().partner_ids], [null, [a.partners[0].id]]);
    assert.equal((await patch({ window: null })).json().window, null);
    assert.deepEqual(fields(await patch({ flow_id: a.flowId, partner_ids: [a.partners[0].id] })), ['partner_ids']);
    assert.deepEqual(fields(await patch({ filter: { last_days: 7, date_to: '2026-01-01' } })), ['filter.date_to']);
    assert.deepEqual(fields(await patch({})), ['body']);
    expectProblem(await send(ta, 'PATCH', '/api/injection-rules/nope', { name: 'x' }), 404, 'not_found');

    const del = await send(ta, 'DELETE', `/api/injection-rules/${rule.id}`);
    assert.equal(del.statusCode, 204);
    expectProblem(await send(ta, 'GET', `/api/injection-rules/${rule.id}`), 404, 'not_found');
    expectProblem(await send(ta, 'DELETE', `/api/injection-rules/${rule.id}`), 404, 'not_found');

    const audit = await ta.db
      .selectFrom('audit_log')
      .select(['action', 'actor_email', 'details'])
      .where('target_id', '=', rule.id)
      .orderBy('at')
      .execute();
    assert.deepEqual(
      audit.map((r) => r.action),
      [
        'injection_rule.created',
        'injection_rule.updated',
        'injection_rule.updated',
        'injection_rule.updated',
        'injection_rule.deleted',
      ],
    );
    assert.equal(audit[0].actor_email, OWNER.email);
    assert.equal(JSON.parse(audit[0].details).filter.last_days, 7);
    assert.deepEqual(JSON.parse(audit[1].details).changed, ['enabled']);
  });

  test('a scoped operator sees only its own rules; its flow is refused (its role sends to its partners only)', async (t) => {
    const { ta, a } = await setup(t, engine);
    const owners = (await send(ta, 'POST', '/api/injection-rules', ruleBody(a))).json();
    const role = await send(ta, 'POST', '/api/roles', {
      name: 'Partner A only',
      permissions: ['leads:view', 'leads:edit'],
      scope: { traffic_provider_ids: null, partner_ids: [a.partners[0].id] },
    });
    assert.equal(role.statusCode, 201, role.body);
    const email = 'rules-scoped@example.test';
    const password = 'scoped-password-1';
    const op = await send(ta, 'POST', '/api/operators', {
      email,
      name: 'Scoped',
      password,
      role_id: role.json().id,
      current_password: OWNER.password,
    });
    assert.equal(op.statusCode, 201, op.body);
    const token = await login(ta.app, email, password);
    assert.deepEqual(fields(await send(ta, 'POST', '/api/injection-rules', ruleBody(a), token)), ['flow_id']);
    const mine = await send(
      ta,
      'POST',
      '/api/injection-rules',
      ruleBody(a, { flow_id: undefined, partner_ids: [a.partners[0].id] }),
      token,
    );
    assert.equal(mine.statusCode, 201, mine.body);
    expectProblem(await send(ta, 'GET', `/api/injection-rules/${owners.id}`, undefined, token), 404, 'not_found');
    expectProblem(await send(ta, 'DELETE', `/api/injection-rules/${owners.id}`, undefined, token), 404, 'not_found');
    const listed = (await send(ta, 'GET', '/api/injection-rules', undefined, token)).json().data;
    assert.deepEqual(
      listed.map((r: { id: string }) => r.id),
      [mine.json().id],
    );
  });
});
