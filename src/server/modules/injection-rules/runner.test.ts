import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { openDatabase } from '../../db/database.js';
import { insertLeads } from '../../../../test/fixtures.js';
import { makeWorld, type World } from '../../../../test/distribution-world.js';
import {
  buildTestApp,
  call,
  forEachDatabase,
  getJson,
  newOperator,
  postgresOnly,
  type Engine,
  type TestApp,
} from '../../../../test/helpers.js';
import { RuleRunner } from './runner.js';

// The rules' runner on both engines with a clock of the test's own (each tick is given its instant).

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (text: string) => Date.parse(text);

async function setup(t: TestContext, engine: Engine) {
  const ta = await buildTestApp(t, engine);
  const x = await makeWorld(t, ta, [{}]);
  const y = await makeWorld(t, ta, [{}]);
  const runner = new RuleRunner({ db: ta.db, log: ta.app.log });
  return { ta, x, y, runner };
}

/** Leads refused (rejected) at `when`, in w's campaign. */
const refused = (ta: TestApp, w: World, n: number, when: number, status: 'rejected' | 'delivered' = 'rejected') =>
  insertLeads(
    ta.db,
    Array.from({ length: n }, () => ({
      traffic_provider_id: w.providerId,
      campaign_id: w.campaignId,
      flow_id: w.flowId,
      status,
      reason: status === 'rejected' ? 'declined' : null,
      status_updated_at: new Date(when).toISOString(),
    })),
  );

/** "Every day at 10:00 Berlin, leads refused in the last 7 days from campaign X go to flow Y", armed long ago. */
async function dailyRule(ta: TestApp, x: World, target: World, token = ta.ownerToken, over: object = {}) {
  const res = await call(ta.app, token, {
    method: 'POST',
    url: '/api/injection-rules',
    payload: {
      name: 'Refused, daily',
      filter: { status: ['rejected'], campaign_id: x.campaignId, date_type: 'status_updated', last_days: 7 },
      flow_id: target.flowId,
      per_minute: 30,
      schedule: { time_zone: 'Europe/Berlin', at: '10:00' },
      ...over,
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  // Created "now"; the test's clock lies in the past: every occurrence from 2026 on may run.
  await ta.db.updateTable('injection_rules').set({ armed_at: '2026-01-01T00:00:00.000Z' }).execute();
  return res.json() as { id: string };
}

const jobs = (ta: TestApp) =>
  ta.db.selectFrom('injection_jobs').selectAll().orderBy('created_at').orderBy('id').execute();
const itemsOf = async (ta: TestApp, jobId: string) =>
  (await ta.db.selectFrom('injection_items').select('lead_id').where('job_id', '=', jobId).execute())
    .map((r) => r.lead_id)
    .sort();

forEachDatabase('Recurring rules runner', (engine) => {
  test('10:00 Europe/Berlin runs at 09:00Z in winter and 08:00Z in summer, once a day, taking the leads refused in the last 7 days from campaign X', async (t) => {
    const { ta, x, y, runner } = await setup(t, engine);
    const winter = at('2026-01-15T09:00:00Z');
    const fresh = await refused(ta, x, 2, winter - DAY);
    await refused(ta, x, 1, winter - 8 * DAY); // refused too long ago
    await refused(ta, x, 1, winter - DAY, 'delivered');
    await refused(ta, y, 1, winter - DAY); // another campaign
    const rule = await dailyRule(ta, x, y);

    await runner.tick(winter - 1000);
    assert.equal((await jobs(ta)).length, 0, 'not before 10:00 local');
    await runner.tick(winter);
    await runner.tick(winter + 30_000);
    await runner.tick(winter + 3 * HOUR);
    const [job] = await jobs(ta);
    assert.equal((await jobs(ta)).length, 1, 'one job for the occurrence');
    assert.deepEqual([job.rule_id, job.flow_id, job.per_minute], [rule.id, y.flowId, 30]);
    assert.deepEqual(await itemsOf(ta, job.id), [...fresh].sort());
    const shown = await getJson(ta, `/api/injections/${job.id}`);
    assert.deepEqual([shown.rule_id, shown.total], [rule.id, 2]);
    assert.deepEqual(shown.selection.date_from, new Date(winter - 7 * DAY).toISOString());
    assert.deepEqual((await getJson(ta, `/api/injection-rules/${rule.id}`)).last_run, {
      at: '2026-01-15T09:00:00.000Z',
      injection_id: job.id,
      skipped: null,
    });

    // Summer: 10:00 Berlin is 08:00Z; the window is counted back from that day's run.
    const summer = at('2026-07-15T08:00:00Z');
    const july = await refused(ta, x, 1, summer - 2 * DAY);
    await runner.tick(summer - 60_000);
    assert.equal((await jobs(ta)).length, 1, 'yesterday’s occurrence is long past: not run');
    await runner.tick(summer);
    await runner.tick(summer + 60_000);
    const all = await jobs(ta);
    assert.equal(all.length, 2);
    assert.deepEqual(await itemsOf(ta, all[1].id), july);
    assert.equal((await getJson(ta, `/api/injection-rules/${rule.id}`)).last_run.at, '2026-07-15T08:00:00.000Z');

    const audit = await ta.db
      .selectFrom('audit_log')
      .select(['action', 'via', 'target_id', 'details'])
      .where('action', 'in', ['injection_rule.ran', 'injection.created'])
      .execute();
    // Each run: its record on the rule (naming the job) and the job's (naming the rule), both by the system.
    const ran = audit.filter((a) => a.action === 'injection_rule.ran');
    const made = audit.filter((a) => a.action === 'injection.created');
    assert.deepEqual([ran.length, made.length], [2, 2]);
    assert.ok(audit.every((a) => a.via === 'system'));
    assert.deepEqual(ran.map((a) => JSON.parse(a.details).injection_id).sort(), all.map((j) => j.id).sort());
    assert.deepEqual(
      made.map((a) => [a.target_id, JSON.parse(a.details).rule_id]).sort(),
      all.map((j) => [j.id, rule.id]).sort(),
    );
  });

  test('after downtime only the latest missed occurrence runs, once, and only when less than 6 h late', async (t) => {
    const { ta, x, y, runner } = await setup(t, engine);
    await dailyRule(ta, x, y);
    // Down from the 15th to the 17th, back at 14:59 Berlin on the 17th: only the 17th's run, 5 h late.
    await runner.tick(at('2026-01-17T13:59:00Z'));
    await runner.tick(at('2026-01-17T14:00:00Z'));
    const runs = await ta.db.selectFrom('injection_rule_runs').select('occurrence_at').execute();
    assert.deepEqual(
      runs.map((r) => r.occurrence_at),
      ['2026-01-17T09:00:00.000Z'],
    );
    // Back 7 h after the 19th's run: nothing; the 20th runs on time.
    await runner.tick(at('2026-01-19T16:00:00Z'));
    assert.equal((await jobs(ta)).length, 1);
    await runner.tick(at('2026-01-20T09:00:00Z'));
    assert.equal((await jobs(ta)).length, 2);
  });

  test("a run has its creator's rights now: a scoped creator's rule takes only leads in scope; a disabled creator's run is skipped, with why", async (t) => {
    const { ta, x, y, runner } = await setup(t, engine);
    const when = at('2026-01-15T09:00:00Z');
    const mine = await refused(ta, x, 2, when - DAY);
    await refused(ta, y, 2, when - DAY);
    const role = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/roles',
      payload: {
        name: 'Provider X only',
        permissions: ['leads:view', 'leads:edit'],
        scope: { traffic_provider_ids: [x.providerId], partner_ids: null },
      },
    });
    assert.equal(role.statusCode, 201, role.body);
    const op = await newOperator(ta, ['leads:view', 'leads:edit']);
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/operators/${op.id}`,
      payload: { role_id: role.json().id },
    });
    // No campaign in the filter: every refused lead the creator may read.
    const filter = { status: ['rejected'], date_type: 'status_updated', last_days: 7 };
    const rule = await dailyRule(ta, x, x, op.token, { filter });
    await runner.tick(when);
    const [job] = await jobs(ta);
    assert.deepEqual(await itemsOf(ta, job.id), [...mine].sort(), "only leads of the creator's provider");

    const disabled = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/operators/${op.id}`,
      payload: { status: 'disabled' },
    });
    assert.equal(disabled.statusCode, 200, disabled.body);
    await runner.tick(when + DAY);
    await runner.tick(when + DAY + 60_000);
    assert.equal((await jobs(ta)).length, 1, 'no job');
    const shown = await getJson(ta, `/api/injection-rules/${rule.id}`);
    assert.deepEqual(shown.last_run, {
      at: '2026-01-16T09:00:00.000Z',
      injection_id: null,
      skipped: 'its creator is disabled',
    });
    const skipped = await ta.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'injection_rule.skipped')
      .execute();
    assert.equal(skipped.length, 1);
    assert.equal(JSON.parse(skipped[0].details).reason, 'its creator is disabled');
  });

  test('a rule disabled and enabled again runs no occurrence from before it was enabled; the next one runs', async (t) => {
    const { ta, x, y, runner } = await setup(t, engine);
    // Scheduled a minute ago (UTC): due now, but missed while the rule was off.
    const minuteAgo = new Date(Date.now() - 60_000).toISOString().slice(11, 16);
    const rule = await dailyRule(ta, x, y, ta.ownerToken, { schedule: { time_zone: 'UTC', at: minuteAgo } });
    const patch = (enabled: boolean) =>
      call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/injection-rules/${rule.id}`, payload: { enabled } });
    assert.equal((await patch(false)).json().next_run_at, null);
    const next = Date.parse((await patch(true)).json().next_run_at);
    await runner.tick(Date.now());
    assert.equal((await jobs(ta)).length, 0, 'the occurrence before it was enabled does not run');
    assert.ok(next > Date.now() && next - Date.now() <= 86_400_000);
    await runner.tick(next);
    assert.equal((await jobs(ta)).length, 1);
  });

  test('a rule whose flow was deleted since is skipped, naming it; the flow could be deleted', async (t) => {
    const { ta, x, runner } = await setup(t, engine);
    const spare = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/flows',
      payload: { name: 'Spare', targets: [{ partner_id: x.partners[0].id, priority: 1 }] },
    });
    const rule = await dailyRule(ta, x, x, ta.ownerToken, { flow_id: spare.json().id });
    const gone = await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/flows/${spare.json().id}` });
    assert.equal(gone.statusCode, 204, gone.body);
    await runner.tick(at('2026-01-15T09:00:00Z'));
    assert.equal((await jobs(ta)).length, 0);
    const { last_run } = await getJson(ta, `/api/injection-rules/${rule.id}`);
    assert.match(last_run.skipped, /^flow_id names no flow/);
  });
});

postgresOnly(
  'Recurring rules runner: two schedulers on two pools of one PostgreSQL make one job per occurrence',
  async (t) => {
    const { ta, x, y, runner } = await setup(t, 'postgres');
    await refused(ta, x, 3, at('2026-01-14T12:00:00Z'));
    await dailyRule(ta, x, y);
    await dailyRule(ta, x, y, ta.ownerToken, { name: 'Second' });
    const db = openDatabase(ta.config.database);
    t.after(() => db.destroy());
    const other = new RuleRunner({ db, log: ta.app.log });
    for (const ms of [0, 0, 1000, 60_000])
      await Promise.all([runner.tick(at('2026-01-15T09:00:00Z') + ms), other.tick(at('2026-01-15T09:00:00Z') + ms)]);
    const made = await jobs(ta);
    assert.equal(made.length, 2, 'one job per rule');
    assert.notEqual(made[0].rule_id, made[1].rule_id);
    assert.deepEqual(
      made.map((j) => j.total),
      [3, 3],
    );
    const runs = await ta.db.selectFrom('injection_rule_runs').selectAll().execute();
    assert.equal(runs.length, 2);
  },
);
