import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, forEachDatabase, type TestApp } from '../../../../test/helpers.js';
import { insertLeads } from '../../../../test/fixtures.js';
import { makeWorld, postLead, sampleLead, type World } from '../../../../test/distribution-world.js';
import { providerReason } from './service.js';

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
const storedLead = (ta: TestApp, id: string) =>
  ta.db
    .selectFrom('leads')
    .select(['status', 'reason', 'traffic_provider_id'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
const policy = (fields: string[], window_hours = 24, scope = 'provider') => ({
  provider: { duplicate_policy: { fields, window_hours, scope } },
});

async function post(ta: TestApp, w: World, over: Record<string, unknown>) {
  const res = await postLead(ta, w.token, sampleLead(over));
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; status: string; reason: string | null; autologin_url: string | null };
}

forEachDatabase('Lead intake: duplicates', (engine) => {
  test('same email or phone within the window: stored as duplicate, not offered to buyers; the provider is not told which lead', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], policy(['email', 'phone']));
    const first = await post(ta, w, { email: 'dup@example.com', phone: '+4915123456789' });
    assert.equal(first.status, 'delivered');

    const byEmail = await post(ta, w, { email: ' DUP@example.com ' });
    assert.deepEqual(
      [byEmail.status, byEmail.reason, byEmail.autologin_url],
      ['duplicate', 'duplicate: an earlier lead has the same email', null],
    );
    assert.deepEqual(await storedLead(ta, byEmail.id), {
      status: 'duplicate',
      reason: `duplicate of lead ${first.id} (same email)`,
      traffic_provider_id: w.providerId,
    });

    // The same number in national format is the same phone.
    const byPhone = await post(ta, w, { phone: '0151 23456789', country: 'DE' });
    assert.deepEqual([byPhone.status, byPhone.reason], ['duplicate', 'duplicate: an earlier lead has the same phone']);
    assert.equal((await storedLead(ta, byPhone.id)).reason, `duplicate of lead ${first.id} (same phone)`);
    assert.equal(w.partners[0].server!.received.length, 1, 'duplicates never reach a partner');
  });

  test('full-width and other compatibility spellings of an email or a phone are the same lead (NFKC before the duplicate check)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], policy(['email', 'phone']));
    const first = await post(ta, w, { email: 'x@example.com', phone: '+4915123456789' });
    assert.equal(first.status, 'delivered');

    const byEmail = await post(ta, w, { email: 'x@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com' }); // x@ｅｘａｍｐｌｅ.com
    assert.equal(byEmail.status, 'duplicate');
    assert.equal((await storedLead(ta, byEmail.id)).reason, `duplicate of lead ${first.id} (same email)`);
    const wide = await post(ta, w, { email: '\uff38\uff20Example.com' }); // Ｘ＠Example.com
    assert.equal(wide.status, 'duplicate');
    const stored = await ta.db.selectFrom('leads').select(['email']).where('id', 'in', [byEmail.id, wide.id]).execute();
    assert.deepEqual(
      stored.map((r) => r.email),
      ['x@example.com', 'x@example.com'],
      'stored in the one normal form',
    );

    // Full-width "+" and digits: the same number (a full-width "+" alone used to read as a national number).
    const byPhone = await post(ta, w, { phone: '\uff0b\uff14\uff19 151 23456789' }); // ＋４９ 151 23456789
    assert.equal(byPhone.status, 'duplicate');
    assert.equal((await storedLead(ta, byPhone.id)).reason, `duplicate of lead ${first.id} (same phone)`);
    assert.equal(w.partners[0].server!.received.length, 1, 'the mailbox and the number are sold once');
    // An operator searching with the full-width spelling finds the leads by their normal form.
    const found = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/leads/search?q=${encodeURIComponent('x@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com')}`,
    });
    assert.equal(found.statusCode, 200, found.body);
    assert.ok(
      found.json().data.some((l: { id: string }) => l.id === first.id),
      found.body,
    );
  });

  test("the window, earlier duplicates, and the policy's fields decide", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], policy(['email'], 1));
    const [old, dupOfSomething, rejected] = await insertLeads(ta.db, [
      { traffic_provider_id: w.providerId, email: 'old@example.com', created_at: hoursAgo(1.1), status: 'delivered' },
      { traffic_provider_id: w.providerId, email: 'again@example.com', created_at: hoursAgo(0.5), status: 'duplicate' },
      {
        traffic_provider_id: w.providerId,
        email: 'rejected@example.com',
        phone: '+4915199999999',
        created_at: hoursAgo(0.5),
        status: 'rejected',
      },
    ]);
    assert.ok(old && dupOfSomething);
    assert.equal((await post(ta, w, { email: 'old@example.com' })).status, 'delivered', 'outside the window');
    assert.equal(
      (await post(ta, w, { email: 'again@example.com' })).status,
      'delivered',
      'an earlier duplicate does not count',
    );
    const dup = await post(ta, w, { email: 'rejected@example.com' });
    assert.equal(
      (await storedLead(ta, dup.id)).reason,
      `duplicate of lead ${rejected} (same email)`,
      'a rejected lead counts',
    );
    assert.equal((await post(ta, w, { phone: '+4915199999999' })).status, 'delivered', 'phone is not in this policy');

    for (const off of [policy([], 24), policy(['email', 'phone'], 0)]) {
      const w2 = await makeWorld(t, ta, [{}], off);
      assert.equal((await post(ta, w2, { email: 'same@example.com' })).status, 'delivered');
      assert.equal(
        (await post(ta, w2, { email: 'same@example.com' })).status,
        'delivered',
        'no check: no fields, or a zero window',
      );
    }
  });

  test("scope: provider looks at the provider's own leads only, global at everyone's", async (t) => {
    const ta = await buildTestApp(t, engine);
    const a = await makeWorld(t, ta, [{}], policy(['email']));
    const b = await makeWorld(t, ta, [{}], policy(['email']));
    const g = await makeWorld(t, ta, [{}], policy(['email'], 24, 'global'));
    const first = await post(ta, a, { email: 'shared@example.com' });
    assert.equal(
      (await post(ta, b, { email: 'shared@example.com' })).status,
      'delivered',
      "another provider's lead is not a duplicate under provider scope",
    );
    const global = await post(ta, g, { email: 'shared@example.com' });
    assert.equal(global.status, 'duplicate');
    assert.equal(
      (await storedLead(ta, global.id)).reason,
      `duplicate of lead ${first.id} (same email)`,
      'the earliest one is named',
    );
  });

  test('20 identical leads at once: exactly one gets through', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], policy(['email', 'phone']));
    const lead = sampleLead();
    const answers = await Promise.all(Array.from({ length: 20 }, () => postLead(ta, w.token, lead)));
    assert.ok(
      answers.every((r) => r.statusCode === 201),
      answers.map((r) => r.body).join('\n'),
    );
    const through = answers.filter((r) => r.json().status !== 'duplicate');
    assert.equal(through.length, 1, answers.map((r) => r.json().status).join());
    const rows = await ta.db.selectFrom('leads').select(['id', 'status', 'reason']).execute();
    assert.equal(rows.length, 20);
    const original = through[0].json().id;
    for (const r of rows.filter((r) => r.id !== original))
      assert.equal(r.reason, `duplicate of lead ${original} (same email)`);
    assert.equal(w.partners[0].server!.received.length, 1);
  });

  test('global scope: two providers posting the same email at once still let exactly one through', async (t) => {
    const ta = await buildTestApp(t, engine);
    const a = await makeWorld(t, ta, [{}], policy(['email'], 24, 'global'));
    const b = await makeWorld(t, ta, [{}], policy(['email'], 24, 'global'));
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        postLead(ta, (i % 2 ? a : b).token, sampleLead({ email: 'race@example.com' })),
      ),
    );
    const statuses = answers.map((r) => r.json().status);
    assert.equal(statuses.filter((s) => s !== 'duplicate').length, 1, statuses.join());
    assert.equal(a.partners[0].server!.received.length + b.partners[0].server!.received.length, 1);
  });

  test("the provider's reason never carries the operator's", () => {
    assert.equal(
      providerReason('rejected', 'Broker One: rejected (HTTP 200): duplicate in CRM'),
      'no buyer accepted the lead',
    );
    assert.equal(providerReason('rejected', 'campaign is paused'), 'campaign is paused');
    assert.equal(providerReason('rejected', 'campaign does not accept FR leads'), 'campaign does not accept FR leads');
    assert.equal(
      providerReason('rejected', 'campaign does not accept FR leads; partner Broker One'),
      'no buyer accepted the lead',
    );
    assert.equal(providerReason('failed', 'Broker One timed out'), 'delivery failed; the lead is kept');
    assert.equal(
      providerReason('duplicate', 'duplicate of lead x (same phone)'),
      'duplicate: an earlier lead has the same phone',
    );
    assert.equal(providerReason('delivered', null), null);
    assert.equal(providerReason('pending', null), null);
  });
});
