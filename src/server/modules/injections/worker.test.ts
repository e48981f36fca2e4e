import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { openDatabase } from '../../db/database.js';
import { insertAttempt, insertLeads } from '../../../../test/fixtures.js';
import { makeWorld, secondRunner, type World, type WorldPartner } from '../../../../test/distribution-world.js';
import {
  buildTestApp,
  call,
  forEachDatabase,
  getJson,
  postgresOnly,
  type Engine,
  type TestApp,
} from '../../../../test/helpers.js';
import { accepting } from '../../../../test/partner-server.js';
import { InjectionWorker } from './worker.js';

// The worker on both engines, with a clock of the test's own (each tick is given its instant),
// and real loopback partners.

const T0 = Date.parse('2026-03-02T09:00:00.000Z'); // a Monday

async function setup(t: TestContext, engine: Engine, partners: WorldPartner[] = [{ handler: accepting() }]) {
  const ta = await buildTestApp(t, engine);
  const w = await makeWorld(t, ta, partners);
  const worker = new InjectionWorker({ db: ta.db, delivery: ta.app.delivery, log: ta.app.log });
  return { ta, w, worker };
}

const rejectedLeads = (ta: TestApp, w: World, n: number) =>
  insertLeads(
    ta.db,
    Array.from({ length: n }, () => ({
      traffic_provider_id: w.providerId,
      campaign_id: w.campaignId,
      flow_id: w.flowId,
      status: 'rejected' as const,
      reason: 'Every partner tried declined',
    })),
  );

async function createJob(ta: TestApp, body: Record<string, unknown>) {
  const res = await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/injections', payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; total: number; state: string };
}

const job = (ta: TestApp, id: string) => getJson(ta, `/api/injections/${id}`);
const received = (w: World, i = 0) => w.partners[i].server!.received.length;

forEachDatabase('Re-injection worker', (engine) => {
  test('the Leads filter reinjected: true finds the leads a job sent out, false the others', async (t) => {
    const { ta, w, worker } = await setup(t, engine);
    const leads = await rejectedLeads(ta, w, 6);
    // Four go into a job at 120 a minute: after two ticks some are sent, the rest wait.
    const { id } = await createJob(ta, { lead_ids: leads.slice(0, 4), flow_id: w.flowId, per_minute: 120 });
    await worker.tick(T0);
    await worker.tick(T0 + 1000);
    const sent = (
      await ta.db
        .selectFrom('injection_items')
        .select('lead_id')
        .where('job_id', '=', id)
        .where('state', '!=', 'pending')
        .execute()
    ).map((r) => r.lead_id);
    assert.ok(sent.length > 0 && sent.length < 4, `${sent.length} of 4 sent`);
    const ids = async (query: string) =>
      (await getJson(ta, `/api/leads/search?limit=100&${query}`)).data.map((l: { id: string }) => l.id).sort();
    assert.deepEqual(await ids('reinjected=true'), [...sent].sort());
    assert.deepEqual(
      await ids('reinjected=false'),
      leads.filter((l) => !sent.includes(l)).sort(),
      'fresh traffic: the leads no job sent, those still waiting in one included',
    );
    const count = await getJson(ta, '/api/leads/count?reinjected=true');
    assert.equal(count.count, sent.length);
    const bad = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?reinjected=maybe' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /reinjected/);
  });

  test('partner performance then_by=origin keeps the calls of a job apart from fresh traffic', async (t) => {
    const { ta, w, worker } = await setup(t, engine);
    const leads = await rejectedLeads(ta, w, 3);
    const partner = w.partners[0];
    // The fresh call: the partner refused the first lead when it came in.
    await insertAttempt(ta.db, {
      lead_id: leads[0],
      partner_id: partner.id,
      attempt_no: 1,
      outcome: 'rejected',
      reason: 'no',
    });
    const { id } = await createJob(ta, { lead_ids: leads, flow_id: w.flowId, per_minute: 600, reoffer: true });
    for (let s = 0; s < 5 && (await job(ta, id)).left > 0; s++) await worker.tick(T0 + s * 1000);
    assert.equal((await job(ta, id)).delivered, 3);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const body = await getJson(
      ta,
      `/api/analytics/partners?then_by=origin&timezone=UTC&date_from=${day(Date.now() - 86_400_000)}&date_to=${day(Date.now() + 86_400_000)}`,
    );
    const row = body.rows.find((r: { key: string }) => r.key === partner.id);
    const children = Object.fromEntries(
      row.children.map((c: { key: string; label: string; attempts: number; accepted: number }) => [
        c.key,
        [c.label, c.attempts, c.accepted],
      ]),
    );
    assert.deepEqual(children, { fresh: ['Fresh traffic', 1, 0], reinjected: ['Re-injected', 3, 3] });
    assert.deepEqual([row.attempts, row.accepted], [4, 3]);
  });

  test('pace: 60 a minute for 300 leads sends 60 ± 1 in each simulated minute; attempts carry the job id', async (t) => {
    const { ta, w, worker } = await setup(t, engine);
    const leads = await rejectedLeads(ta, w, 300);
    const { id, total } = await createJob(ta, { lead_ids: leads, flow_id: w.flowId, per_minute: 60 });
    assert.equal(total, 300);
    const perMinute: number[] = [];
    for (let minute = 0; minute < 2; minute++) {
      const before = received(w);
      for (let s = 0; s < 60; s++) await worker.tick(T0 + minute * 60_000 + s * 1000);
      perMinute.push(received(w) - before);
    }
    for (const n of perMinute) assert.ok(Math.abs(n - 60) <= 1, `sent ${perMinute.join(', ')} a minute`);
    const j = await job(ta, id);
    assert.equal(j.delivered, received(w));
    assert.equal(j.sent, received(w));
    assert.equal(j.left, 300 - received(w));
    assert.equal(j.state, 'running');
    // A sent lead's new attempt is marked with the job on GET /api/leads/{id}.
    const sent = await ta.db
      .selectFrom('injection_items')
      .select('lead_id')
      .where('job_id', '=', id)
      .where('state', '=', 'delivered')
      .executeTakeFirstOrThrow();
    const lead = await getJson(ta, `/api/leads/${sent.lead_id}`);
    assert.equal(lead.status, 'delivered');
    assert.deepEqual(
      lead.attempts.map((a: { injection_id: string | null }) => a.injection_id),
      [id],
    );
  });

  test("the server's injections job works the jobs (the scheduler's tick, real time)", async (t) => {
    const { ta, w } = await setup(t, engine);
    const leads = await rejectedLeads(ta, w, 2);
    const { id } = await createJob(ta, { lead_ids: leads, flow_id: w.flowId, per_minute: 60 });
    await ta.app.jobs.runNow('injections');
    assert.equal(received(w), 1);
    assert.equal((await job(ta, id)).delivered, 1);
  });

  test('the window is honoured: nothing before from or after to, in its time zone', async (t) => {
    const { ta, w, worker } = await setup(t, engine);
    const leads = await rejectedLeads(ta, w, 5);
    // 10:00–11:00 in Berlin is 09:00–10:00 UTC in March (CET).
    const window = { time_zone: 'Europe/Berlin', from: '10:30', to: '11:00' };
    const { id } = await createJob(ta, { lead_ids: leads, flow_id: w.flowId, per_minute: 600, window });
    for (let s = 0; s < 30; s++) await worker.tick(T0 + s * 1000); // 10:00–10:00:29 Berlin: closed
    assert.equal(received(w), 0);
    await worker.tick(T0 + 30 * 60_000); // 10:30 Berlin: open
    assert.ok(received(w) >= 1);
    const at1030 = received(w);
    await worker.tick(T0 + 60 * 60_000); // 11:00 Berlin: closed again
    assert.equal(received(w), at1030);
    assert.equal((await job(ta, id)).left, 5 - at1030);
  });

  test('never offers a lead to a partner that was offered it before, unless reoffer', async (t) => {
    const { ta, w, worker } = await setup(t, engine, [{ handler: accepting() }, { handler: accepting() }]);
    const [a, b] = w.partners;
    const [first, second] = await rejectedLeads(ta, w, 2);
    for (const lead of [first, second])
      await insertAttempt(ta.db, { lead_id: lead, partner_id: a.id, attempt_no: 1, outcome: 'rejected' });
    const j1 = await createJob(ta, { lead_ids: [first], flow_id: w.flowId, per_minute: 60 });
    await worker.tick(T0);
    assert.equal(received(w, 0), 0, 'the partner offered it before is skipped');
    assert.equal(received(w, 1), 1);
    const item = await ta.db.selectFrom('injection_items').selectAll().where('job_id', '=', j1.id).executeTakeFirst();
    assert.equal(item?.state, 'delivered');
    assert.equal(item?.partner_id, b.id);

    // Only that partner, already offered: refused with why; with reoffer: offered again.
    await createJob(ta, { lead_ids: [second], partner_ids: [a.id], per_minute: 60 });
    await worker.tick(T0 + 1000);
    assert.equal(received(w, 0), 0);
    const refused = await ta.db
      .selectFrom('injection_items')
      .selectAll()
      .where('lead_id', '=', second)
      .executeTakeFirstOrThrow();
    assert.equal(refused.state, 'refused');
    assert.match(refused.reason!, /already offered/);
    await createJob(ta, { lead_ids: [second], partner_ids: [a.id], per_minute: 60, reoffer: true });
    await worker.tick(T0 + 2000);
    assert.equal(received(w, 0), 1);
  });

  test("caps stop it: a partner's daily cap is never passed; the rest are refused with the cap named", async (t) => {
    const { ta, w, worker } = await setup(t, engine, [{ handler: accepting(), fields: { daily_cap: 2 } }]);
    const leads = await rejectedLeads(ta, w, 5);
    const { id } = await createJob(ta, { lead_ids: leads, flow_id: w.flowId, per_minute: 600 });
    for (let s = 0; s < 5; s++) await worker.tick(T0 + s * 1000);
    assert.equal(received(w), 2);
    const j = await job(ta, id);
    assert.deepEqual([j.delivered, j.refused, j.left, j.state], [2, 3, 0, 'done']);
    const reasons = await ta.db
      .selectFrom('injection_items')
      .select('reason')
      .where('job_id', '=', id)
      .where('state', '=', 'refused')
      .execute();
    for (const r of reasons) assert.match(r.reason!, /cap/i);
  });

  test('pause and cancel take effect from the next tick; a lead no longer rejected is skipped with why', async (t) => {
    const { ta, w, worker } = await setup(t, engine);
    // Items are worked in lead id order: the first one is no longer rejected.
    const leads = (await rejectedLeads(ta, w, 6)).sort();
    await ta.db.updateTable('leads').set({ status: 'delivered' }).where('id', '=', leads[0]).execute();
    const { id } = await createJob(ta, { lead_ids: leads, flow_id: w.flowId, per_minute: 60 });
    const steer = (step: string) =>
      call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/injections/${id}/${step}` });
    await worker.tick(T0);
    assert.equal(received(w), 1, 'the delivered lead is skipped without spending the pace');
    assert.equal((await steer('pause')).json().state, 'paused');
    for (let s = 1; s <= 5; s++) await worker.tick(T0 + s * 1000);
    assert.equal(received(w), 1);
    assert.equal((await steer('resume')).json().state, 'running');
    await worker.tick(T0 + 6000);
    assert.equal(received(w), 2);
    const cancelled = (await steer('cancel')).json();
    assert.deepEqual([cancelled.state, cancelled.delivered, cancelled.skipped, cancelled.left], ['cancelled', 2, 4, 0]);
    await worker.tick(T0 + 7000);
    assert.equal(received(w), 2);
    const report = (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/injections/${id}/report.csv` })).body;
    assert.match(report, new RegExp(`${leads[0]},skipped,the lead is delivered; only rejected or failed`));
    assert.match(report, /skipped,the job was cancelled/);
  });

  test("a lead a crash left mid-job is resumed by the recovery sweep to the job's partners, its attempt marked", async (t) => {
    // The lead's own flow has partner A; the job sends to partner B only.
    const { ta, w, worker } = await setup(t, engine, [{ handler: accepting() }]);
    const b = await makeWorld(t, ta, [{ handler: accepting() }]);
    const [lead] = await rejectedLeads(ta, w, 1);
    const { id } = await createJob(ta, { lead_ids: [lead], partner_ids: [b.partners[0].id], per_minute: 60 });
    // As a process that died right after claiming it (item sent, lead pending), its claim run out.
    await ta.db.updateTable('injection_items').set({ state: 'sent' }).where('job_id', '=', id).execute();
    await ta.db
      .updateTable('leads')
      .set({ status: 'pending', lease_until: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', lead)
      .execute();
    await ta.app.delivery.sweep();
    assert.equal(received(w), 0, "the lead's own flow is not where the job sends it");
    assert.equal(b.partners[0].server!.received.length, 1);
    const attempts = await ta.db
      .selectFrom('lead_attempts')
      .select('injection_id')
      .where('lead_id', '=', lead)
      .execute();
    assert.deepEqual(attempts, [{ injection_id: id }]);
    await worker.tick(T0);
    const j = await job(ta, id);
    assert.deepEqual([j.delivered, j.state], [1, 'done']);
  });

  test('an item a crash left sent is settled from its lead on the next tick; the lead is not sent again', async (t) => {
    const { ta, w, worker } = await setup(t, engine);
    const leads = await rejectedLeads(ta, w, 2);
    const { id } = await createJob(ta, { lead_ids: leads, flow_id: w.flowId, per_minute: 60 });
    // As a process that died after claiming leads[0] and the engine's rejecting it left it.
    await ta.db
      .updateTable('injection_items')
      .set({ state: 'sent' })
      .where('job_id', '=', id)
      .where('lead_id', '=', leads[0])
      .execute();
    await worker.tick(T0);
    await worker.tick(T0 + 1000);
    assert.equal(received(w), 1, 'only the other lead was sent');
    const j = await job(ta, id);
    assert.deepEqual([j.refused, j.delivered, j.state], [1, 1, 'done']);
  });
});

postgresOnly('Re-injection worker: two processes on one PostgreSQL send each lead once', async (t) => {
  const { ta, w, worker } = await setup(t, 'postgres');
  const leads = await rejectedLeads(ta, w, 40);
  await createJob(ta, { lead_ids: leads, flow_id: w.flowId, per_minute: 600 });
  const db = openDatabase(ta.config.database);
  t.after(() => db.destroy());
  const other = new InjectionWorker({ db, delivery: await secondRunner(t, ta, 'postgres'), log: ta.app.log });
  // Both tick together; then the first stops and the second takes the job over once its lease has run out.
  for (let s = 0; s < 2; s++) await Promise.all([worker.tick(T0 + s * 1000), other.tick(T0 + s * 1000)]);
  for (let s = 0; s < 6; s++) await other.tick(T0 + 60_000 + s * 1000);
  const ids = w.partners[0].server!.received.map((r) => r.json.email);
  assert.equal(ids.length, 40);
  assert.equal(new Set(ids).size, 40, 'no lead sent twice');
});
