import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, forEachDatabase, until, type TestApp } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { withLease } from '../../jobs/lease.js';
import { providerLogJob } from '../../jobs/provider-log.js';
import { chainDue, checkpointAll } from './chain.js';
import { canonicalJson, entryHash, GENESIS } from './hashing.js';
import { latestProviderCheckpoint, readProviderLog } from './service.js';

/** The provider's whole log as the portal API gives it. */
export async function fullLog(ta: TestApp, providerId: string) {
  return (await readProviderLog(ta.db, providerId, { after: 0, limit: 500 })).data;
}

/** Asserts the chain: seq 1…n, each prev_hash the hash before, each hash its content's. */
function assertChain(providerId: string, entries: Awaited<ReturnType<typeof fullLog>>) {
  let prev = GENESIS;
  entries.forEach((e, i) => {
    assert.equal(e.seq, i + 1);
    assert.equal(e.prev_hash, prev, `seq ${e.seq} links to the entry before`);
    assert.equal(e.hash, entryHash({ ...e, traffic_provider_id: providerId, data: canonicalJson(e.data) }));
    prev = e.hash;
  });
}

const conversion = (ta: TestApp, leadId: string, payload: Record<string, unknown>) =>
  call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/leads/${leadId}/conversion`, payload });

forEachDatabase('provider log', (engine) => {
  test("each provider's facts are chained in order, in a chain of its own; a reversed FTD is a new entry", async (t) => {
    const ta = await buildTestApp(t, engine);
    const a = await makeWorld(t, ta, [{ fields: { name: 'Secret Broker Ltd' } }], {
      campaign: { payout: { model: 'cpa', amount: 40 } },
    });
    const b = await makeWorld(t, ta, [{}]);
    const aLeads: string[] = [];
    for (let i = 0; i < 3; i++) {
      aLeads.push((await postLead(ta, a.token, sampleLead({ sub_id1: `click-${i}` }))).json().id);
      await postLead(ta, b.token, sampleLead());
    }
    // Nothing is in the log until the job chains it.
    assert.deepEqual(await fullLog(ta, a.providerId), []);
    assert.equal(await chainDue(ta.db), 12);

    const logA = await fullLog(ta, a.providerId);
    assert.deepEqual(
      logA.map((e) => [e.kind, e.lead_id]),
      aLeads.flatMap((id) => [
        ['received', id],
        ['accepted', id],
      ]),
    );
    assert.deepEqual(logA[0].data, {
      campaign_id: a.campaignId,
      country: 'DE',
      created_at: logA[0].data.created_at,
      sub_id1: 'click-0',
      sub_id2: null,
      sub_id3: null,
      sub_id4: null,
      sub_id5: null,
    });
    assertChain(a.providerId, logA);
    const logB = await fullLog(ta, b.providerId);
    // B's CPL campaign pays at delivery: the payout comes with the acceptance.
    assert.deepEqual(
      logB.map((e) => e.kind),
      ['received', 'accepted', 'received', 'accepted', 'received', 'accepted'],
    );
    assert.deepEqual(logB[1].data, { payout_cents: 1000 });
    assert.deepEqual(logA[1].data, {}, 'a CPA campaign pays nothing at delivery');
    assertChain(b.providerId, logB);
    assert.ok(!JSON.stringify(logA).includes('Secret'), "no partner's name in the log");

    // An FTD, then its reversal (a chargeback): two new entries, the FTD's left as it was.
    const ftd = await conversion(ta, aLeads[1], { ftd: true, sale_status: 'Deposited' });
    assert.equal(ftd.statusCode, 200, ftd.body);
    await chainDue(ta.db);
    const reversed = await conversion(ta, aLeads[1], { ftd: false });
    assert.equal(reversed.statusCode, 200, reversed.body);
    assert.equal(reversed.json().changed, true);
    const lead = await ta.db
      .selectFrom('leads')
      .select(['ftd_at', 'cost_cents'])
      .where('id', '=', aLeads[1])
      .executeTakeFirstOrThrow();
    assert.deepEqual([lead.ftd_at, Number(lead.cost_cents)], [null, 0]);
    await chainDue(ta.db);
    const after = await fullLog(ta, a.providerId);
    assert.deepEqual(after.slice(0, logA.length), logA, 'earlier entries unchanged');
    // Sale statuses are hidden by default (portal settings): not in the log.
    assert.deepEqual(
      after.slice(logA.length).map((e) => e.kind),
      ['ftd', 'payout', 'ftd_reversed', 'payout'],
    );
    const [f, p, r, p2] = after.slice(logA.length);
    assert.equal(r.data.ftd_at, f.data.ftd_at);
    assert.deepEqual([p.data, p2.data], [{ payout_cents: 4000 }, { payout_cents: 0 }]);
    assertChain(a.providerId, after);

    // A partner's ftd=0 still withdraws nothing: only an operator reverses an FTD.
    await conversion(ta, aLeads[2], { ftd: true });
    const partner = a.partners[0];
    const pb = await ta.app.inject({
      method: 'GET',
      url: `/api/postback/${partner.postbackToken}?lead_id=${aLeads[2]}&ftd=0`,
    });
    assert.equal(pb.statusCode, 200, pb.body);
    const kept = await ta.db.selectFrom('leads').select('ftd_at').where('id', '=', aLeads[2]).executeTakeFirstOrThrow();
    assert.notEqual(kept.ftd_at, null);
  });

  test('sale statuses appear as the provider words when shown; payouts are left out when hidden', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    await ta.db
      .updateTable('traffic_providers')
      .set({ portal_sale_status: 1, portal_payout: 0, sale_status_map: JSON.stringify({ deposited: 'converted' }) })
      .where('id', '=', w.providerId)
      .execute();
    const id = (await postLead(ta, w.token, sampleLead())).json().id;
    await conversion(ta, id, { sale_status: 'Callback Tomorrow' });
    await conversion(ta, id, { sale_status: 'Deposited' });
    await chainDue(ta.db);
    const log = await fullLog(ta, w.providerId);
    assert.deepEqual(
      log.map((e) => [e.kind, e.data.sale_status ?? null]),
      [
        ['received', null],
        ['accepted', null],
        ['sale_status', 'in_progress'],
        ['sale_status', 'converted'],
      ],
    );
  });

  test('two processes chaining at once (two leases) write each seq once', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    for (let round = 0; round < 3; round++) {
      await Promise.all([1, 2, 3, 4].map(() => postLead(ta, w.token, sampleLead())));
      const ran = await Promise.all(
        ['process-a', 'process-b'].map((holder) =>
          withLease(ta.db, 'provider-log', 60_000, () => chainDue(ta.db), { holder }),
        ),
      );
      assert.ok(ran.includes(true));
    }
    await chainDue(ta.db);
    const log = await fullLog(ta, w.providerId);
    assert.equal(log.length, 24); // 12 leads × received, accepted
    assertChain(w.providerId, log);
    // And should a lease ever fail, the primary key refuses a seq written twice.
    const last = log[log.length - 1];
    await assert.rejects(
      ta.db
        .insertInto('provider_log')
        .values({
          traffic_provider_id: w.providerId,
          seq: last.seq,
          at: last.at,
          lead_id: last.lead_id,
          kind: last.kind,
          data: '{}',
          prev_hash: last.prev_hash,
          hash: last.hash,
        })
        .execute(),
    );
  });

  test('the provider-log job chains due facts on its own and signs the head it moved', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { PROVIDER_LOG_INTERVAL_MS: '50' } });
    const w = await makeWorld(t, ta, [{}]);
    await postLead(ta, w.token, sampleLead());
    await until(async () => (await fullLog(ta, w.providerId)).length === 2, 'the job to chain 2 facts');
    // The hourly checkpoint ran at start, before the lead: it had nothing to sign then.
    const cp = await ta.db.selectFrom('provider_log_checkpoints').selectAll().execute();
    assert.deepEqual(cp, []);
    const made = await latestProviderCheckpoint(ta.db, w.providerId);
    assert.equal(made.seq, 2);
    assert.deepEqual(await latestProviderCheckpoint(ta.db, w.providerId), made, 'the head did not move: the same one');
  });

  test('checkpoints: hourly, once across processes, and only of heads that moved', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    await postLead(ta, w.token, sampleLead());
    const signed = () => ta.db.selectFrom('provider_log_checkpoints').select('seq').orderBy('seq').execute();
    const ran: string[] = [];
    const job = (name: string) =>
      providerLogJob(
        ta.db,
        { chain: chainDue, checkpointAll: async (db) => (ran.push(name), checkpointAll(db)) },
        1000,
        `process-${name}`,
      );
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const [a, b] = [job('a'), job('b')];
    await a.run(new AbortController().signal);
    await b.run(new AbortController().signal); // another process, within the hour: the lease keeps it out
    await a.run(new AbortController().signal); // the same one, within the hour: not again
    assert.deepEqual(ran, ['a']);
    assert.deepEqual(
      (await signed()).map((c) => Number(c.seq)),
      [2],
    );
    await postLead(ta, w.token, sampleLead());
    t.mock.timers.tick(3_600_000 + 1000);
    await a.run(new AbortController().signal);
    await a.run(new AbortController().signal);
    assert.deepEqual(ran, ['a', 'a']);
    assert.deepEqual(
      (await signed()).map((c) => Number(c.seq)),
      [2, 4],
    );
    t.mock.timers.tick(3_600_000 + 1000);
    await b.run(new AbortController().signal); // the head has not moved: nothing new to sign
    assert.deepEqual(ran, ['a', 'a', 'b']);
    assert.equal((await signed()).length, 2);
  });
});
