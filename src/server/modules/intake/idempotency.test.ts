import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, until, type TestApp } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { gated } from '../../../../test/partner-server.js';
import { purgeIdempotencyKeys } from './service.js';
import { lockKey } from './duplicates.js';

const count = async (ta: TestApp, table: 'leads' | 'intake_requests') =>
  Number(
    (
      await ta.db
        .selectFrom(table)
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
const key = (k: string) => ({ 'idempotency-key': k });
const NO_DUPLICATE_CHECK = { provider: { duplicate_policy: { fields: [], window_hours: 0, scope: 'provider' } } };

forEachDatabase('Lead intake: Idempotency-Key', (engine) => {
  test('a retry with the same key answers the same lead and creates nothing; another lead under that key is refused', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const lead = sampleLead({ email: 'Retry@Example.com', phone: '+49 151 23456789' });
    const first = await postLead(ta, w.token, lead, key('order-1'));
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.json().status, 'delivered');

    // The same lead, written differently (case, phone format, spaces), is the same request.
    const retry = await postLead(
      ta,
      w.token,
      { ...lead, email: ' retry@example.COM', phone: '0151 23456789' },
      key('order-1'),
    );
    assert.equal(retry.statusCode, 201, retry.body);
    assert.deepEqual(retry.json(), first.json());
    assert.deepEqual([await count(ta, 'leads'), await count(ta, 'intake_requests')], [1, 1]);
    assert.equal(w.partners[0].server!.received.length, 1);

    const other = await postLead(ta, w.token, sampleLead(), key('order-1'));
    const problem = expectProblem(other, 409, 'conflict');
    assert.match(problem.detail, /Idempotency-Key was used for a different lead/);
    assert.equal(await count(ta, 'leads'), 1);

    // Keys belong to one provider: another provider's same key is its own.
    const w2 = await makeWorld(t, ta, [{}]);
    const theirs = await postLead(ta, w2.token, sampleLead(), key('order-1'));
    assert.equal(theirs.statusCode, 201, theirs.body);
    assert.notEqual(theirs.json().id, first.json().id);

    // A retry is answered even when the campaign setup changed since (no campaign_id: now ambiguous).
    await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/campaigns',
      payload: { name: 'Second', traffic_provider_id: w.providerId, payout: { model: 'cpl', amount: 1 } },
    });
    assert.deepEqual((await postLead(ta, w.token, lead, key('order-1'))).json(), first.json());
    expectProblem(await postLead(ta, w.token, sampleLead(), key('order-2')), 400, 'validation_failed');
  });

  test('the retry answers the lead as it is now: pending first, delivered later', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { INTAKE_WAIT_MS: '30' } });
    // The partner answers only when the test lets it, so "pending first" does not race a delay.
    const partner = gated(t);
    const w = await makeWorld(t, ta, [{ handler: partner.handler }]);
    const lead = sampleLead();
    const first = await postLead(ta, w.token, lead, key('k-1'));
    assert.equal(first.json().status, 'pending');
    assert.equal((await postLead(ta, w.token, lead, key('k-1'))).json().status, 'pending');
    partner.release();
    const now = await until(async () => {
      const answer = (await postLead(ta, w.token, lead, key('k-1'))).json();
      return answer.status !== 'pending' && answer;
    }, 'the retry to answer the lead as delivered');
    assert.equal(now.id, first.json().id);
    assert.equal(now.status, 'delivered');
    assert.match(now.autologin_url, /^https:\/\/broker\.example\/login\//);
    assert.equal(await count(ta, 'leads'), 1);
  });

  test('concurrent retries with one key make one lead', async (t) => {
    const ta = await buildTestApp(t, engine);
    // No duplicate check: only the key keeps these apart.
    const w = await makeWorld(t, ta, [{}], NO_DUPLICATE_CHECK);
    const lead = sampleLead();
    const answers = await Promise.all(Array.from({ length: 12 }, () => postLead(ta, w.token, lead, key('same-key'))));
    assert.ok(
      answers.every((r) => r.statusCode === 201),
      answers.map((r) => r.body).join('\n'),
    );
    assert.equal(new Set(answers.map((r) => r.json().id)).size, 1);
    assert.deepEqual([await count(ta, 'leads'), await count(ta, 'intake_requests')], [1, 1]);
    assert.equal(w.partners[0].server!.received.length, 1);
  });

  test('keys older than 24 hours are forgotten: reused, or purged', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], NO_DUPLICATE_CHECK);
    const lead = sampleLead();
    const first = (await postLead(ta, w.token, lead, key('old'))).json();
    await ta.db
      .updateTable('intake_requests')
      .set({ created_at: hoursAgo(25) })
      .execute();
    const again = await postLead(ta, w.token, sampleLead(), key('old'));
    assert.equal(again.statusCode, 201, again.body);
    assert.notEqual(again.json().id, first.id, 'an expired key starts afresh, even for another lead');
    const row = await ta.db.selectFrom('intake_requests').selectAll().executeTakeFirstOrThrow();
    assert.equal(row.lead_id, again.json().id);

    await postLead(ta, w.token, sampleLead(), key('fresh'));
    await ta.db
      .updateTable('intake_requests')
      .set({ created_at: hoursAgo(30) })
      .where('idempotency_key', '=', 'old')
      .execute();
    assert.equal(await purgeIdempotencyKeys(ta.db, hoursAgo(24)), 1);
    assert.deepEqual(
      (await ta.db.selectFrom('intake_requests').select('idempotency_key').execute()).map((r) => r.idempotency_key),
      ['fresh'],
    );
    assert.equal(await count(ta, 'leads'), 3, 'purging keys keeps the leads');
  });

  test('a refused request (409 inside the serialized part) leaves no lock behind: the next one with its key answers at once', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const lead = sampleLead();
    const first = (await postLead(ta, w.token, lead, key('held'))).json();
    expectProblem(await postLead(ta, w.token, sampleLead(), key('held')), 409, 'conflict');
    // A lock left held would make this wait forever (the test would time out).
    const retry = await postLead(ta, w.token, lead, key('held'));
    assert.equal(retry.json().id, first.id);
    if (engine === 'postgres') {
      // This test's locks only: pg_locks is the whole cluster's, and other test files run at once.
      const k = BigInt.asUintN(64, lockKey(`idem:${w.providerId}:held`));
      const held = await ta.db
        .selectFrom('pg_locks' as any)
        .select((e) => e.fn.countAll().as('n'))
        .where('locktype', '=', 'advisory')
        .where('classid' as any, '=', Number(k >> 32n))
        .where('objid' as any, '=', Number(k & 0xffffffffn))
        .executeTakeFirstOrThrow();
      assert.equal(
        Number(held.n),
        0,
        "no advisory lock is held once the requests are answered (the Idempotency-Key's)",
      );
    }
  });
});
