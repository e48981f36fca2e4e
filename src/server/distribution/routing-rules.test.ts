// Caps the way operators write them (issue 16), through the engine on both engines: daily caps per
// lead country and hourly caps under concurrent delivery (on PostgreSQL through two pools, as two
// server processes), a target's hourly and total caps, caps counted on FTDs, the verdicts each
// lead records, the cap alerts and the cap usage view.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import {
  capCounters,
  insertPendingLead,
  makeWorld,
  secondRunner,
  type World,
  type WorldPartner,
} from '../../../test/distribution-world.js';
import { buildTestApp, call, forEachDatabase, getJson, type Engine, type TestApp } from '../../../test/helpers.js';
import { accepting } from '../../../test/partner-server.js';

const NOON = Date.parse('2026-06-15T12:00:00.000Z'); // a Monday
const HOUR = 3_600_000;

async function setup(t: TestContext, engine: Engine, partners: WorldPartner[]) {
  t.mock.timers.enable({ apis: ['Date'], now: NOON });
  const ta = await buildTestApp(t, engine);
  const w = await makeWorld(t, ta, partners);
  return { ta, w, lead: (country = 'DE') => insertPendingLead(ta, w, { country }) };
}

const targetIds = async (ta: TestApp, w: World): Promise<string[]> =>
  (await getJson(ta, `/api/flows/${w.flowId}`)).targets.map((x: { id: string }) => x.id);

/** Runs all leads at once, half of them through a second runner (a second process on PostgreSQL). */
async function runAtOnce(t: TestContext, ta: TestApp, engine: Engine, ids: string[]) {
  const other = await secondRunner(t, ta, engine);
  return Promise.all(ids.map((id, i) => (i % 2 ? other : ta.app.delivery).run(id)));
}

const verdictsOf = async (ta: TestApp, leadId: string) => (await getJson(ta, `/api/leads/${leadId}`)).verdicts;

forEachDatabase('routing rules: caps', (engine) => {
  test('daily caps per country under concurrent delivery: DE 4 and AT 2 of 10 each, never over; verdicts, alerts and usage say so', async (t) => {
    const { ta, w, lead } = await setup(t, engine, [
      { handler: accepting(15), target: { country_caps: { DE: 4, AT: 2 } } },
    ]);
    const [target] = await targetIds(ta, w);
    const de: string[] = [];
    const at: string[] = [];
    for (let i = 0; i < 10; i++) {
      de.push(await lead('DE'));
      at.push(await lead('AT'));
    }
    const outcomes = await runAtOnce(t, ta, engine, [...de, ...at].sort());
    const statusOf = new Map([...de, ...at].sort().map((id, i) => [id, outcomes[i].status]));
    assert.equal(de.filter((id) => statusOf.get(id) === 'delivered').length, 4);
    assert.equal(at.filter((id) => statusOf.get(id) === 'delivered').length, 2);
    assert.equal(w.partners[0].server!.received.length, 6);
    assert.deepEqual(await capCounters(ta), {
      [`target:${target}:DE 2026-06-15`]: 4,
      [`target:${target}:AT 2026-06-15`]: 2,
    });

    // A refused lead records why, with the cap's numbers; its reason says it in words.
    const refused = de.find((id) => statusOf.get(id) === 'rejected')!;
    assert.deepEqual(await verdictsOf(ta, refused), [
      {
        partner_id: w.partners[0].id,
        partner_name: w.partners[0].name,
        verdict: 'cap_full',
        reason: 'daily cap for DE in this flow full',
        cap: { kind: 'flow_country_daily', window: 'day', country: 'DE', counts: 'deliveries', used: 4, cap: 4 },
      },
    ]);
    assert.equal(
      (await getJson(ta, `/api/leads/${refused}`)).reason,
      `No eligible partner: ${w.partners[0].name} (daily cap for DE in this flow full)`,
    );
    // A delivered lead skipped nobody.
    assert.deepEqual(
      await verdictsOf(
        ta,
        de.find((id) => statusOf.get(id) === 'delivered')!,
      ),
      [],
    );

    // One alert per country cap filled (and one at 90 %: 4 × 0.9 rounds up to 4, so none for DE).
    const alerts = (
      await ta.db
        .selectFrom('events')
        .select(['type', 'data'])
        .where('type', 'like', 'partner.cap%')
        .orderBy('id')
        .execute()
    ).map((e) => ({ type: e.type, ...JSON.parse(e.data) }));
    assert.deepEqual(
      alerts
        .filter((a) => a.type === 'partner.cap_full')
        .map((a) => [a.cap_kind, a.country, a.used, a.cap, a.flow_id, a.counts])
        .sort(),
      [
        ['flow_country_daily', 'AT', 2, 2, w.flowId, 'deliveries'],
        ['flow_country_daily', 'DE', 4, 4, w.flowId, 'deliveries'],
      ],
    );

    const texts = (await getJson(ta, '/api/notifications')).data.map((n: { text: string }) => n.text);
    assert.ok(texts.includes(`${w.partners[0].name}: daily cap for DE in a flow full (4 of 4)`), texts.join('\n'));

    // The cap usage view: one row per country with a cap, today's numbers.
    const usage = await getJson(ta, '/api/routing/cap-usage');
    assert.equal(usage.at, new Date(NOON).toISOString());
    assert.deepEqual(
      usage.data.map((r: any) => [r.partner_id, r.flow_id, r.target_id, r.country, r.counts, r.day, r.hour, r.total]),
      [
        [w.partners[0].id, w.flowId, target, 'AT', 'deliveries', { used: 2, cap: 2, period: '2026-06-15' }, null, null],
        [w.partners[0].id, w.flowId, target, 'DE', 'deliveries', { used: 4, cap: 4, period: '2026-06-15' }, null, null],
      ],
    );
  });

  test("a partner's hourly cap under concurrent delivery: 3 of 9 this hour, 3 more the next hour, in the partner's time zone", async (t) => {
    const tokyo = { timezone: 'Asia/Tokyo', days: [1, 2, 3, 4, 5, 6, 7], from: '00:00', to: '00:00' };
    const { ta, w, lead } = await setup(t, engine, [
      { handler: accepting(15), fields: { hourly_cap: 3, daily_cap: 100, working_hours: tokyo } },
    ]);
    const first = [];
    for (let i = 0; i < 9; i++) first.push(await lead());
    let outcomes = await runAtOnce(t, ta, engine, first);
    assert.equal(outcomes.filter((o) => o.status === 'delivered').length, 3);
    assert.ok(
      outcomes
        .filter((o) => o.status === 'rejected')
        .every((o) => o.reason === `No eligible partner: ${w.partners[0].name} (hourly cap full)`),
    );

    t.mock.timers.tick(HOUR);
    const next = [];
    for (let i = 0; i < 9; i++) next.push(await lead());
    outcomes = await runAtOnce(t, ta, engine, next);
    assert.equal(outcomes.filter((o) => o.status === 'delivered').length, 3);
    // 12:00 UTC is 21:00 in Tokyo; the day counts 6.
    const p = w.partners[0].id;
    assert.deepEqual(await capCounters(ta), {
      [`partner:${p} 2026-06-15`]: 6,
      [`partner:${p} 2026-06-15T21`]: 3,
      [`partner:${p} 2026-06-15T22`]: 3,
    });
    assert.equal(w.partners[0].server!.received.length, 6);
  });

  test("a target's hourly and total caps: the next lead goes on to the next partner, each refusal recorded with its cap", async (t) => {
    const { ta, w, lead } = await setup(t, engine, [{ target: { hourly_cap: 2, total_cap: 3 } }, {}]);
    const [a, b] = w.partners;
    const where = async () => {
      const id = await lead();
      const outcome = await ta.app.delivery.run(id);
      assert.equal(outcome.status, 'delivered');
      return { partner: (await getJson(ta, `/api/leads/${id}`)).partner_id, verdicts: await verdictsOf(ta, id) };
    };
    const first = await where();
    assert.equal(first.partner, a.id);
    assert.deepEqual(
      first.verdicts.map((v: any) => [v.partner_id, v.verdict, v.reason]),
      [[b.id, 'not_reached', `not reached: ${a.name} took the lead first`]],
    );
    assert.equal((await where()).partner, a.id);
    const third = await where();
    assert.equal(third.partner, b.id);
    assert.deepEqual(
      third.verdicts.map((v: any) => [v.partner_id, v.verdict, v.reason, v.cap.kind, v.cap.used, v.cap.cap]),
      [[a.id, 'cap_full', 'hourly cap in this flow full', 'flow_hourly', 2, 2]],
    );
    t.mock.timers.tick(HOUR);
    assert.equal((await where()).partner, a.id); // a new hour; 3 in all now
    const fifth = await where();
    assert.equal(fifth.partner, b.id);
    assert.deepEqual(
      fifth.verdicts.map((v: any) => [v.verdict, v.reason, v.cap.kind, v.cap.window, v.cap.used, v.cap.cap]),
      [['cap_full', 'total cap in this flow full', 'flow_total', 'total', 3, 3]],
    );
  });

  test('caps counted on FTDs: deliveries go on until the FTDs recorded today reach the cap, then the lead goes to the next partner', async (t) => {
    const { ta, w, lead } = await setup(t, engine, [
      { target: { cap_counts: 'ftds', daily_cap: 2, country_caps: { DE: 2 } } },
      {},
    ]);
    const [a, b] = w.partners;
    const [target] = await targetIds(ta, w);
    const delivered: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await lead();
      assert.equal((await ta.app.delivery.run(id)).status, 'delivered');
      delivered.push(id);
    }
    // No FTD yet: all three went to A, and nothing was counted.
    for (const id of delivered) assert.equal((await getJson(ta, `/api/leads/${id}`)).partner_id, a.id);
    assert.deepEqual(await capCounters(ta), {});

    const ftd = (id: string) =>
      call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/leads/${id}/conversion`, payload: { ftd: true } });
    for (const id of delivered.slice(0, 2)) assert.equal((await ftd(id)).statusCode, 200);
    assert.deepEqual(await capCounters(ta), {
      [`target:${target}:ftds 2026-06-15`]: 2,
      [`target:${target}:ftds:DE 2026-06-15`]: 2,
    });

    const next = await lead();
    assert.equal((await ta.app.delivery.run(next)).status, 'delivered');
    assert.equal((await getJson(ta, `/api/leads/${next}`)).partner_id, b.id);
    assert.deepEqual(
      (await verdictsOf(ta, next)).map((v: any) => [v.partner_id, v.reason, v.cap.counts, v.cap.used, v.cap.cap]),
      [[a.id, 'daily FTD cap in this flow full', 'ftds', 2, 2]],
    );
    // A lead delivered before the cap filled may still convert: it is counted past the cap.
    assert.equal((await ftd(delivered[2])).statusCode, 200);
    assert.equal((await capCounters(ta))[`target:${target}:ftds 2026-06-15`], 3);
    // The FTD cap's alert, counted on FTDs.
    const full = await ta.db.selectFrom('events').select('data').where('type', '=', 'partner.cap_full').execute();
    assert.deepEqual(
      full
        .map((e) => JSON.parse(e.data))
        .map((d) => [d.cap_kind, d.counts, d.used, d.cap])
        .sort(),
      [
        ['flow_country_daily', 'ftds', 2, 2],
        ['flow_daily', 'ftds', 2, 2],
      ],
    );
    const texts = (await getJson(ta, '/api/notifications')).data.map((n: { text: string }) => n.text);
    assert.ok(texts.includes(`${a.name}: daily FTD cap in a flow full (2 of 2)`), texts.join('\n'));
    // Next day, a new count: A takes leads again (read from the table: the session has expired by then).
    t.mock.timers.tick(24 * HOUR);
    const tomorrow = await lead();
    await ta.app.delivery.run(tomorrow);
    assert.equal(
      (await ta.db.selectFrom('leads').select('partner_id').where('id', '=', tomorrow).executeTakeFirstOrThrow())
        .partner_id,
      a.id,
    );
  });
});
