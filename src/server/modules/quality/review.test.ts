import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  newOperator,
  newPortalUser,
  until,
  type TestApp,
} from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { startReceiver } from '../../../../test/webhook-receiver.js';
import { alertWaitingReviews } from './review-service.js';

/** A German lead with a French mobile: the phone_country flag (score 70 with the default weights). */
let k = 0;
const foreignPhone = () => sampleLead({ phone: `+3361234${String(5000 + ++k)}` });

const decide = (ta: TestApp, what: 'approve' | 'reject', payload: Record<string, unknown>, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: `/api/leads/review/${what}`, payload });

const leadOf = (ta: TestApp, id: string) => getJson(ta, `/api/leads/${id}`);

forEachDatabase('The review queue', (engine) => {
  test("a provider's rule holds flagged leads (answered pending); approved ones are routed, rejected ones told to the provider and its postback", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { provider: { review: { hold_flags: ['phone_country'] } } });
    const partner = w.partners[0].server!;
    const tracker = await startReceiver(t);
    const postbacks = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: `/api/traffic-providers/${w.providerId}/postbacks`,
      payload: {
        postbacks: [
          { event_type: 'lead.rejected', campaign_id: null, url: `${tracker.url}?lead={lead_id}&status={status}` },
        ],
      },
    });
    assert.equal(postbacks.statusCode, 200, postbacks.body);

    // A lead without the flag is routed as before.
    const clean = await postLead(ta, w.token, sampleLead());
    assert.equal(clean.json().status, 'delivered');
    assert.equal(partner.received.length, 1);

    // Flagged leads are held: stored, not routed, answered pending with a reason that names no flag.
    const held: string[] = [];
    for (const key of ['held-a', 'held-b', 'held-c']) {
      const res = await postLead(ta, w.token, foreignPhone(), { 'idempotency-key': key });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual([res.json().status, res.json().reason], ['pending', 'the lead is held for review']);
      held.push(res.json().id as string);
    }
    assert.equal(partner.received.length, 1, 'no partner was called for a held lead');
    const a = await leadOf(ta, held[0]);
    assert.equal(a.status, 'held');
    assert.equal(a.reason, "held for review: the provider's rule holds flagged leads (phone_country)");
    assert.equal(a.lease_until ?? null, null);

    const queue = await getJson(ta, '/api/leads/review');
    assert.equal(queue.held, 3);
    assert.deepEqual(
      queue.providers.map((p: any) => [p.traffic_provider_id, p.held]),
      [[w.providerId, 3]],
    );
    assert.equal(queue.oldest_held_at, a.created_at);
    assert.equal(queue.alert_after_minutes, 60);
    const listed = await getJson(ta, '/api/leads/search?date_type=registration&status=held');
    assert.deepEqual(listed.data.map((l: any) => l.id).sort(), [...held].sort());

    // Approve: routed as if it arrived now; an unknown id is named, not an error.
    const approved = await decide(ta, 'approve', { lead_ids: [held[0], 'no-such-lead'] });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.deepEqual(approved.json(), { done: [held[0]], skipped: [{ id: 'no-such-lead', reason: 'no such lead' }] });
    const routed = await until(async () => {
      const l = await leadOf(ta, held[0]);
      return l.status !== 'pending' && l;
    }, 'the approved lead to be routed');
    assert.equal(routed.status, 'delivered');
    assert.equal(partner.received.length, 2);
    const again = await decide(ta, 'approve', { lead_ids: [held[0]] });
    assert.deepEqual(again.json().skipped, [{ id: held[0], reason: 'the lead is delivered, not held for review' }]);

    // Reject: the provider is told the reviewer's reason, on a retry, and its postback is sent.
    const rejected = await decide(ta, 'reject', { lead_ids: [held[1]], reason: 'fake phone number' });
    assert.deepEqual(rejected.json(), { done: [held[1]], skipped: [] });
    const b = await leadOf(ta, held[1]);
    assert.deepEqual([b.status, b.reason], ['rejected', 'rejected in review: fake phone number']);
    await ta.app.events.drain();
    assert.deepEqual(
      tracker.received.map((r) => Object.fromEntries(new URL(r.url, 'http://x').searchParams)),
      [{ lead: held[1], status: 'rejected' }],
    );
    assert.equal(partner.received.length, 2, 'a rejected lead is never offered');

    const audit = await getJson(ta, '/api/audit-log?action=lead.review_rejected');
    assert.equal(audit.data.length, 1);
    assert.deepEqual(audit.data[0].details, { lead_ids: [held[1]], reason: 'fake phone number' });

    // Deciding takes leads:edit; reading the queue leads:view.
    const viewer = await newOperator(ta, ['leads:view']);
    expectProblem(await decide(ta, 'approve', { lead_ids: [held[2]] }, viewer.token), 403, 'forbidden');
    assert.equal((await getJson(ta, '/api/leads/review', viewer.token)).held, 1);
    const blank = await decide(ta, 'reject', { lead_ids: [held[2]], reason: '   ' });
    assert.equal(expectProblem(blank, 400, 'validation_failed').errors![0].field, 'reason');
    const none = await decide(ta, 'approve', { lead_ids: [] });
    assert.equal(expectProblem(none, 400, 'validation_failed').errors![0].field, 'lead_ids');
    assert.equal((await leadOf(ta, held[2])).status, 'held', 'nothing moved by a refused request');
  });

  test('a held lead retried with its Idempotency-Key is answered pending, then with the rejection the reviewer wrote', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { provider: { review: { hold_flags: ['phone_country'] } } });
    const lead = foreignPhone();
    const first = await postLead(ta, w.token, lead, { 'idempotency-key': 'k1' });
    const retry = await postLead(ta, w.token, lead, { 'idempotency-key': 'k1' });
    assert.deepEqual(retry.json(), first.json());
    assert.deepEqual([retry.json().status, retry.json().reason], ['pending', 'the lead is held for review']);
    // Its portal shows it pending too, and finds it under "pending"; "held" is not a word it knows.
    const portal = await newPortalUser(ta, w.providerId);
    const shown = await getJson(ta, '/api/portal/leads?status=pending', portal.token);
    assert.deepEqual(
      shown.data.map((l: any) => [l.id, l.status, l.reason]),
      [[first.json().id, 'pending', 'the lead is held for review']],
    );
    const held = await call(ta.app, portal.token, { method: 'GET', url: '/api/portal/leads?status=held' });
    assert.equal(expectProblem(held, 400, 'validation_failed').errors![0].field, 'status');
    await decide(ta, 'reject', { lead_ids: [first.json().id], reason: 'number not in service' });
    const told = await postLead(ta, w.token, lead, { 'idempotency-key': 'k1' });
    assert.deepEqual([told.json().status, told.json().reason], ['rejected', 'number not in service']);
    const after = await getJson(ta, `/api/portal/leads/${first.json().id}`, portal.token);
    assert.deepEqual([after.status, after.reason], ['rejected', 'number not in service']);
  });

  test("a flow's lowest score holds its leads; a provider's rule holds before routing whatever the flow says", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const patch = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/flows/${w.flowId}`,
      payload: { review: { min_score: 80 } },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.deepEqual(patch.json().review, { hold_flags: [], min_score: 80 });
    assert.equal((await postLead(ta, w.token, sampleLead())).json().status, 'delivered', 'score 100 passes');
    const low = await postLead(ta, w.token, foreignPhone());
    assert.equal(low.json().status, 'pending', low.body);
    const l = await leadOf(ta, low.json().id);
    assert.deepEqual(
      [l.status, l.reason],
      ['held', "held for review: the flow's rule holds leads scoring below 80 (this lead: 70)"],
    );
    const bad = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/flows/${w.flowId}`,
      payload: { review: { hold_flags: ['nope'], min_score: 101 } },
    });
    const fields = expectProblem(bad, 400, 'validation_failed').errors!.map((e) => e.field);
    assert.ok(fields.includes('review.min_score') || fields.some((f) => f.startsWith('review')), fields.join());
  });

  test('of two reviewers deciding one lead at once, exactly one wins', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { provider: { review: { hold_flags: ['phone_country'] } } });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await postLead(ta, w.token, foreignPhone())).json().id);
    const [approve, reject] = await Promise.all([
      decide(ta, 'approve', { lead_ids: ids }),
      decide(ta, 'reject', { lead_ids: ids, reason: 'duplicate traffic' }),
    ]);
    const done = [...approve.json().done, ...reject.json().done].sort();
    assert.deepEqual(done, [...ids].sort(), 'every lead decided once');
    const skipped = [...approve.json().skipped, ...reject.json().skipped].map((s: any) => s.id).sort();
    assert.deepEqual(skipped, [...ids].sort(), 'and skipped by the other');
  });

  test('a role limited to one provider counts and decides only its held leads', async (t) => {
    const ta = await buildTestApp(t, engine);
    const rule = { provider: { review: { hold_flags: ['phone_country'] } } };
    const a = await makeWorld(t, ta, [{}], rule);
    const b = await makeWorld(t, ta, [{}], rule);
    const mine = (await postLead(ta, a.token, foreignPhone())).json().id;
    const theirs = (await postLead(ta, b.token, foreignPhone())).json().id;
    const scoped = await newOperator(ta, ['leads:view', 'leads:edit'], {
      traffic_provider_ids: [a.providerId],
      partner_ids: null,
    });
    const queue = await getJson(ta, '/api/leads/review', scoped.token);
    assert.deepEqual([queue.held, queue.providers.map((p: any) => p.traffic_provider_id)], [1, [a.providerId]]);
    const res = await decide(ta, 'reject', { lead_ids: [theirs, mine], reason: 'no' }, scoped.token);
    assert.deepEqual(res.json(), { done: [mine], skipped: [{ id: theirs, reason: 'no such lead' }] });
    assert.equal((await leadOf(ta, theirs)).status, 'held', "another provider's lead is left alone");
  });

  test('leads waiting longer than the setting raise review_queue.waiting once per oldest lead', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { provider: { review: { hold_flags: ['phone_country'] } } });
    const id = (await postLead(ta, w.token, foreignPhone())).json().id;
    assert.equal(await alertWaitingReviews(ta.db), 0, 'not yet an hour');
    const set = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/quality/settings',
      payload: { review_alert_minutes: 5 },
    });
    assert.equal(set.json().review_alert_minutes, 5);
    const ago = new Date(Date.now() - 6 * 60_000).toISOString();
    await ta.db.updateTable('leads').set({ created_at: ago }).where('id', '=', id).execute();
    assert.equal(await alertWaitingReviews(ta.db), 1);
    assert.equal(await alertWaitingReviews(ta.db), 1);
    const events = await ta.db
      .selectFrom('events')
      .select(['traffic_provider_id', 'data'])
      .where('type', '=', 'review_queue.waiting')
      .execute();
    assert.equal(events.length, 1, 'once per oldest lead');
    assert.equal(events[0].traffic_provider_id, w.providerId);
    const { name } = await getJson(ta, `/api/traffic-providers/${w.providerId}`);
    assert.deepEqual(JSON.parse(events[0].data), { held: 1, oldest_held_at: ago, minutes: 5, name });
    const notes = await getJson(ta, '/api/notifications');
    assert.ok(
      notes.data.some((n: any) => n.type === 'review_queue.waiting'),
      'shown as a notification',
    );
    await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/quality/settings',
      payload: { review_alert_minutes: null },
    });
    assert.equal(await alertWaitingReviews(ta.db), 0, 'off');
  });
});
