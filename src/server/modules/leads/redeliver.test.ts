import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { nowIso } from '../../db/ids.js';
import type { LeadStatus } from '../../db/tables.js';
import { insertFlow, insertLeads, insertPartner } from '../../../../test/fixtures.js';
import { makeWorld } from '../../../../test/distribution-world.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type Engine,
  type TestApp,
} from '../../../../test/helpers.js';
import { accepting, rejecting } from '../../../../test/partner-server.js';

/**
 * World A: a flow whose only partner rejects everything. World B: a flow whose only partner
 * accepts. Leads are written straight into world A (or B) with the status a test needs.
 */
async function setup(t: TestContext, engine: Engine) {
  const ta = await buildTestApp(t, engine);
  const payout = { payout: { model: 'cpl', amount: 10 } };
  const a = await makeWorld(t, ta, [{ handler: rejecting() }], { campaign: payout });
  const b = await makeWorld(t, ta, [{ handler: accepting(50) }], { campaign: payout });
  const lead = async (status: LeadStatus, world = a) =>
    (
      await insertLeads(ta.db, [
        {
          traffic_provider_id: world.providerId,
          campaign_id: world.campaignId,
          flow_id: world.flowId,
          status,
          reason:
            status === 'rejected'
              ? 'Every partner tried declined'
              : status === 'failed'
                ? 'Delivery interrupted'
                : null,
          ...(status === 'delivered' ? { partner_id: world.partners[0].id, delivered_at: nowIso() } : {}),
        },
      ])
    )[0];
  return { ta, a, b, lead };
}

/** payload null: no body at all. */
const redeliver = (ta: TestApp, id: string, payload: object | null = {}, token: string | null = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: `/api/leads/${id}/redeliver`, ...(payload ? { payload } : {}) });
const statusOf = async (ta: TestApp, id: string) =>
  (await ta.db.selectFrom('leads').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
const redeliveries = (ta: TestApp, id: string) =>
  ta.db
    .selectFrom('audit_log')
    .selectAll()
    .where('action', '=', 'lead.redelivered')
    .where('target_id', '=', id)
    .execute();

forEachDatabase('Redeliver', (engine) => {
  test('needs leads:edit: 401 without a credential, 403 for a view-only key and a view-only role', async (t) => {
    const { ta, lead } = await setup(t, engine);
    const id = await lead('rejected');
    expectProblem(await redeliver(ta, id, {}, null), 401, 'unauthorized');
    const key = await newApiKey(ta, ['leads:view']);
    expectProblem(await redeliver(ta, id, {}, key.secret), 403, 'insufficient_scope');
    const viewer = await newOperator(ta, ['leads:view']);
    expectProblem(await redeliver(ta, id, {}, viewer.token), 403, 'forbidden');
    assert.equal(await statusOf(ta, id), 'rejected');
  });

  test('only rejected or failed leads: 409 naming the status; duplicates never; 404 for an unknown lead', async (t) => {
    const { ta, lead } = await setup(t, engine);
    for (const status of ['delivered', 'pending', 'new'] as const) {
      const id = await lead(status);
      const p = expectProblem(await redeliver(ta, id), 409, 'conflict');
      assert.match(p.detail, new RegExp(`is ${status}; only rejected or failed`));
      assert.equal(await statusOf(ta, id), status);
    }
    const dup = await lead('duplicate');
    assert.match(expectProblem(await redeliver(ta, dup), 409, 'conflict').detail, /duplicate/);
    expectProblem(await redeliver(ta, 'no-such-lead'), 404, 'not_found');
  });

  test('a bad flow_id or partner_id is a 400 naming the field, and the lead stays as it was', async (t) => {
    const { ta, a, b, lead } = await setup(t, engine);
    const id = await lead('rejected');
    const fields = async (payload: object) =>
      expectProblem(await redeliver(ta, id, payload), 400, 'validation_failed').errors!.map((e) => e.field);
    const archivedFlow = await insertFlow(ta.db);
    await ta.db.updateTable('flows').set({ archived_at: nowIso() }).where('id', '=', archivedFlow).execute();
    const archivedPartner = await insertPartner(ta.db);
    await ta.db.updateTable('partners').set({ archived_at: nowIso() }).where('id', '=', archivedPartner).execute();
    assert.deepEqual(await fields({ flow_id: 'nope' }), ['flow_id']);
    assert.deepEqual(await fields({ flow_id: archivedFlow }), ['flow_id']);
    assert.deepEqual(await fields({ partner_id: 'nope' }), ['partner_id']);
    assert.deepEqual(await fields({ partner_id: archivedPartner }), ['partner_id']);
    assert.deepEqual(await fields({ flow_id: b.flowId, partner_id: a.partners[0].id }), ['partner_id']);
    assert.deepEqual(await fields({ flow: b.flowId }), ['flow']);
    assert.deepEqual(
      expectProblem(await redeliver(ta, id, null), 400, 'validation_failed').errors!.map((e) => e.field),
      ['body'],
      'a body is required ({} for neither)',
    );
    assert.equal(await statusOf(ta, id), 'rejected');
    assert.equal((await redeliveries(ta, id)).length, 0);
  });

  test("to a partner that does not take the lead's country: a 400 naming partner_id and the countries; nothing sent", async (t) => {
    const { ta, b, lead } = await setup(t, engine);
    const partner = b.partners[0];
    await ta.db
      .updateTable('partners')
      .set({ countries: JSON.stringify(['FR', 'IT']) })
      .where('id', '=', partner.id)
      .execute();
    const id = await lead('rejected'); // a DE lead
    const p = expectProblem(await redeliver(ta, id, { partner_id: partner.id }), 400, 'validation_failed');
    assert.deepEqual(p.errors, [
      { field: 'partner_id', message: 'this partner does not take DE leads (it takes FR, IT)' },
    ]);
    assert.equal(await statusOf(ta, id), 'rejected');
    assert.equal((await redeliveries(ta, id)).length, 0);
    assert.equal(partner.server!.received.length, 0, 'the partner was not called');
    // A country it takes goes through.
    await ta.db.updateTable('leads').set({ country: 'IT' }).where('id', '=', id).execute();
    const res = await redeliver(ta, id, { partner_id: partner.id });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'delivered');
  });

  test('a rejected lead sent through another flow is delivered there; the answer is the lead in full, masked', async (t) => {
    const { ta, a, b, lead } = await setup(t, engine);
    const id = await lead('rejected');
    const editor = await newOperator(ta, ['leads:view', 'leads:edit']); // no leads:contacts
    const res = await redeliver(ta, id, { flow_id: b.flowId }, editor.token);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.id, id);
    assert.equal(body.status, 'delivered');
    assert.equal(body.reason, null);
    assert.equal(body.flow_id, b.flowId);
    assert.equal(body.partner_id, b.partners[0].id);
    assert.match(body.autologin_url, /^https:\/\/broker\.example\/login\//);
    assert.equal(body.attempts.length, 1);
    assert.equal(body.attempts[0].outcome, 'accepted');
    assert.match(body.email, /^.\*\*\*@/, 'masked without leads:contacts');
    assert.equal(b.partners[0].server!.received.length, 1, "world B's partner was called");
    assert.equal(a.partners[0].server!.received.length, 0, "world A's partner was not");
    const [entry] = await redeliveries(ta, id);
    assert.equal(entry.actor_id, editor.id);
    assert.deepEqual(JSON.parse(entry.details), { from_status: 'rejected', flow_id: b.flowId });
    const row = await ta.db
      .selectFrom('leads')
      .select(['lease_until', 'status'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { lease_until: null, status: 'delivered' });
  });

  test('a failed lead offered to one chosen partner; with neither, its own flow', async (t) => {
    const { ta, b, lead } = await setup(t, engine);
    const chosen = await lead('failed');
    const res = await redeliver(ta, chosen, { partner_id: b.partners[0].id });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'delivered');
    assert.equal(res.json().partner_id, b.partners[0].id);
    assert.deepEqual(JSON.parse((await redeliveries(ta, chosen))[0].details), {
      from_status: 'failed',
      partner_id: b.partners[0].id,
    });

    const own = await lead('failed', b);
    const res2 = await redeliver(ta, own, {});
    assert.equal(res2.statusCode, 200, res2.body);
    assert.equal(res2.json().status, 'delivered');
    assert.equal(res2.json().flow_id, b.flowId);

    // Through its own flow again, world A's partner still declines: rejected once more, with the reason.
    const again = await lead('rejected');
    const res3 = await redeliver(ta, again, {});
    assert.equal(res3.statusCode, 200, res3.body);
    assert.equal(res3.json().status, 'rejected');
    assert.ok(res3.json().reason, 'the new reason is shown');
    assert.equal(res3.json().attempts.length, 1);
  });

  test('two redeliveries of one lead at once: one wins, the other gets 409', async (t) => {
    const { ta, b, lead } = await setup(t, engine);
    const id = await lead('rejected');
    const answers = await Promise.all([
      redeliver(ta, id, { flow_id: b.flowId }),
      redeliver(ta, id, { flow_id: b.flowId }),
    ]);
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [200, 409], answers.map((r) => r.body).join('\n'));
    expectProblem(
      answers.find((r) => r.statusCode === 409)!,
      409,
      'conflict',
    );
    assert.equal(answers.find((r) => r.statusCode === 200)!.json().status, 'delivered');
    assert.equal(b.partners[0].server!.received.length, 1, 'the partner got the lead once');
    assert.equal((await redeliveries(ta, id)).length, 1);
  });
});
