import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { nowIso } from '../../db/ids.js';
import { insertLeads, insertPartner } from '../../../../test/fixtures.js';
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
import { SCOPED_PERMISSIONS } from '../../../../test/scoped-world.js';

// The re-injection API: input checks, access, scope, preview, progress, steering, report, audit.

async function setup(t: TestContext, engine: Engine) {
  const ta = await buildTestApp(t, engine);
  const a = await makeWorld(t, ta, [{}]);
  const b = await makeWorld(t, ta, [{}]);
  const leads = async (w: World, n: number, status: 'rejected' | 'delivered' = 'rejected') =>
    insertLeads(
      ta.db,
      Array.from({ length: n }, () => ({
        traffic_provider_id: w.providerId,
        campaign_id: w.campaignId,
        flow_id: w.flowId,
        status,
        reason: status === 'rejected' ? 'declined' : null,
      })),
    );
  return { ta, a, b, leads };
}

const post = (ta: TestApp, url: string, payload?: object, token: string | null = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url, ...(payload ? { payload } : {}) });
const fields = (res: Awaited<ReturnType<typeof post>>) =>
  expectProblem(res, 400, 'validation_failed').errors!.map((e) => e.field);

forEachDatabase('Re-injection jobs API', (engine) => {
  test('needs leads:edit: 401 without a credential, 403 for a view-only role and key', async (t) => {
    const { ta, a } = await setup(t, engine);
    const body = { filter: { status: ['rejected'] }, flow_id: a.flowId, per_minute: 10 };
    expectProblem(await post(ta, '/api/injections', body, null), 401, 'unauthorized');
    const viewer = await newOperator(ta, ['leads:view']);
    expectProblem(await post(ta, '/api/injections', body, viewer.token), 403, 'forbidden');
    expectProblem(await post(ta, '/api/injections/preview', { filter: {} }, viewer.token), 403, 'forbidden');
    const key = await newApiKey(ta, ['leads:view']);
    expectProblem(await post(ta, '/api/injections', body, key.secret), 403, 'insufficient_scope');
    assert.equal((await ta.db.selectFrom('injection_jobs').selectAll().execute()).length, 0);
  });

  test('bad input: a 400 naming each field; nothing stored', async (t) => {
    const { ta, a, b } = await setup(t, engine);
    const archived = await insertPartner(ta.db);
    await ta.db.updateTable('partners').set({ archived_at: nowIso() }).where('id', '=', archived).execute();
    const ok = { filter: {}, flow_id: a.flowId, per_minute: 10 };
    const create = (over: Record<string, unknown>) => post(ta, '/api/injections', { ...ok, ...over });
    assert.deepEqual(fields(await create({ flow_id: undefined })), ['flow_id']);
    assert.deepEqual(fields(await create({ partner_ids: [b.partners[0].id] })), ['partner_ids']);
    assert.deepEqual(fields(await create({ flow_id: 'nope' })), ['flow_id']);
    assert.deepEqual(fields(await create({ flow_id: undefined, partner_ids: [b.partners[0].id, archived] })), [
      'partner_ids[1]',
    ]);
    assert.deepEqual(fields(await create({ filter: undefined })), ['filter']);
    assert.deepEqual(fields(await create({ lead_ids: ['x'] })), ['filter']);
    assert.deepEqual(fields(await create({ filter: { status: ['lost'] } })), ['filter.status']);
    assert.deepEqual(fields(await create({ per_minute: 0 })), ['per_minute']);
    assert.deepEqual(fields(await create({ per_minute: 10_001 })), ['per_minute']);
    assert.deepEqual(fields(await create({ window: { time_zone: 'Mars/Base', from: '09:00', to: '17:00' } })), [
      'window.time_zone',
    ]);
    assert.deepEqual(fields(await create({ window: { time_zone: 'UTC', from: '09:00', to: '09:00' } })), ['window.to']);
    assert.ok(fields(await create({ window: { time_zone: 'UTC', from: '9am', to: '17:00' } }))[0].includes('from'));
    assert.ok(fields(await create({ start_at: 'tomorrow' }))[0].includes('start_at'));
    assert.deepEqual(
      fields(await create({ filter: { status: ['lost'] }, flow_id: 'nope', per_minute: 5 })),
      ['filter.status', 'flow_id'],
      'every bad field at once',
    );
    assert.equal((await ta.db.selectFrom('injection_jobs').selectAll().execute()).length, 0);
  });

  test('preview counts the selection (0 when nothing matches); a job holds it, is listed, read, steered and audited', async (t) => {
    const { ta, a, leads } = await setup(t, engine);
    const rejected = await leads(a, 3);
    await leads(a, 2, 'delivered');
    const preview = async (body: object) => (await post(ta, '/api/injections/preview', body)).json().count;
    assert.equal(await preview({ filter: { status: ['rejected'] } }), 3);
    assert.equal(await preview({ filter: { campaign_id: 'none-such' } }), 0);
    assert.equal(await preview({ lead_ids: [rejected[0], 'not-a-lead'] }), 1);

    const res = await post(ta, '/api/injections', {
      filter: { status: ['rejected'], campaign_id: a.campaignId },
      flow_id: a.flowId,
      per_minute: 30,
      start_at: '2099-01-01T00:00:00Z',
    });
    assert.equal(res.statusCode, 201, res.body);
    const job = res.json();
    assert.deepEqual(
      [job.state, job.total, job.left, job.sent, job.reoffer, job.start_at],
      ['scheduled', 3, 3, 0, false, '2099-01-01T00:00:00.000Z'],
    );
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/injections/${job.id}` })).json().id,
      job.id,
    );
    const list = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/injections?limit=1' })).json();
    assert.deepEqual([list.data.map((j: { id: string }) => j.id), list.next_cursor], [[job.id], null]);
    const audit = await ta.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'injection.created')
      .executeTakeFirstOrThrow();
    assert.equal(audit.actor_email, OWNER.email);
    assert.deepEqual(JSON.parse(audit.details).leads, 3);
    assert.deepEqual(JSON.parse(audit.details).selection.status, ['rejected']);

    const steer = (step: string) => post(ta, `/api/injections/${job.id}/${step}`);
    assert.match(expectProblem(await steer('resume'), 409, 'conflict').detail, /is scheduled/);
    assert.equal((await steer('pause')).json().state, 'paused');
    assert.equal((await steer('resume')).json().state, 'scheduled', 'its start is still ahead');
    const cancelled = (await steer('cancel')).json();
    assert.deepEqual([cancelled.state, cancelled.skipped, cancelled.left], ['cancelled', 3, 0]);
    assert.match(expectProblem(await steer('pause'), 409, 'conflict').detail, /is cancelled/);
    expectProblem(await post(ta, '/api/injections/nope/pause'), 404, 'not_found');
    const csv = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/injections/${job.id}/report.csv` });
    assert.match(csv.headers['content-type'] as string, /text\/csv/);
    const lines = csv.body.trim().split('\r\n');
    assert.equal(lines[0], 'lead_id,state,reason,partner_id,partner_name,at');
    assert.deepEqual(
      lines
        .slice(1)
        .map((l) => l.split(',')[0])
        .sort(),
      [...rejected].sort(),
    );
    assert.doesNotMatch(csv.body, /@/, 'no contacts');
  });

  test('a scoped operator selects only leads in its scope, and sees only its own jobs', async (t) => {
    const { ta, a, b, leads } = await setup(t, engine);
    const mine = await leads(a, 2);
    const theirs = await leads(b, 2);
    const role = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/roles',
      payload: {
        name: 'Provider A only',
        permissions: SCOPED_PERMISSIONS,
        scope: { traffic_provider_ids: [a.providerId], partner_ids: null },
      },
    });
    assert.equal(role.statusCode, 201, role.body);
    const email = 'scoped@example.test';
    const password = 'scoped-password-1';
    const op = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/operators',
      payload: { email, name: 'Scoped', password, role_id: role.json().id, current_password: OWNER.password },
    });
    assert.equal(op.statusCode, 201, op.body);
    const token = await login(ta.app, email, password);
    const preview = (body: object) => post(ta, '/api/injections/preview', body, token);
    assert.equal((await preview({ filter: {} })).json().count, 2);
    assert.equal((await preview({ lead_ids: [...mine, ...theirs] })).json().count, 2);
    const res = await post(
      ta,
      '/api/injections',
      { lead_ids: [...mine, ...theirs], flow_id: a.flowId, per_minute: 5 },
      token,
    );
    assert.equal(res.statusCode, 201, res.body);
    const items = await ta.db
      .selectFrom('injection_items')
      .select('lead_id')
      .where('job_id', '=', res.json().id)
      .execute();
    assert.deepEqual(items.map((i) => i.lead_id).sort(), [...mine].sort());
    // The owner's job is not the scoped operator's to see.
    const owners = (await post(ta, '/api/injections', { filter: {}, flow_id: b.flowId, per_minute: 5 })).json();
    expectProblem(await call(ta.app, token, { method: 'GET', url: `/api/injections/${owners.id}` }), 404, 'not_found');
    const listed = (await call(ta.app, token, { method: 'GET', url: '/api/injections' })).json().data;
    assert.deepEqual(
      listed.map((j: { id: string }) => j.id),
      [res.json().id],
    );
  });
});
