// Partners that refuse flagged or low-quality leads (issue 29), through the API on both engines,
// with real partner servers on loopback: a partner's quality rule skips it with verdict
// `quality` at intake (the plan made from intake's own read) and in a later delivery (the plan
// from the lead row), the simulator takes the lead's flags and score, and bad rules get 400.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadShippedRanges } from '../geo/ip-country.js';
import { flagBit } from '../db/lead-flags.js';
import { insertPendingLead, makeWorld, postLead, sampleLead } from '../../../test/distribution-world.js';
import { buildTestApp, call, expectProblem, forEachDatabase, getJson } from '../../../test/helpers.js';

const FLAGGED = { country: 'DE', phone: '+33612345678' }; // raises phone_country: score 70
const CLEAN = { country: 'DE', phone: '+4915112345678', ip: '193.99.144.80' }; // a German address

forEachDatabase('Partners refusing flagged or low-quality leads', (engine) => {
  test('a partner refusing phone_country is skipped for a flagged lead at intake (verdict quality), and takes a clean one', async (t) => {
    const ta = await buildTestApp(t, engine);
    await loadShippedRanges();
    const w = await makeWorld(t, ta, [{ fields: { quality: { refuse_flags: ['phone_country'] } } }, {}]);
    const [picky, other] = w.partners;
    assert.deepEqual((await getJson(ta, `/api/partners/${picky.id}`)).quality, {
      refuse_flags: ['phone_country'],
      min_score: null,
    });
    assert.deepEqual((await getJson(ta, `/api/partners/${other.id}`)).quality, { refuse_flags: [], min_score: null });

    const flagged = await postLead(ta, w.token, sampleLead(FLAGGED));
    assert.equal(flagged.statusCode, 201, flagged.body);
    assert.equal(flagged.json().status, 'delivered');
    const detail = await getJson(ta, `/api/leads/${flagged.json().id}`);
    assert.deepEqual([detail.flags, detail.quality_score, detail.partner_id], [['phone_country'], 70, other.id]);
    assert.deepEqual(detail.verdicts, [
      {
        partner_id: picky.id,
        partner_name: picky.name,
        verdict: 'quality',
        reason: 'refuses flagged leads (phone_country)',
        cap: null,
      },
    ]);
    assert.equal(picky.server!.received.length, 0, 'the refusing partner was never called');
    assert.equal(other.server!.received.length, 1);

    const clean = await postLead(ta, w.token, sampleLead(CLEAN));
    assert.equal(clean.json().status, 'delivered', clean.body);
    const cleanDetail = await getJson(ta, `/api/leads/${clean.json().id}`);
    assert.deepEqual([cleanDetail.flags, cleanDetail.quality_score], [[], 100]);
    assert.equal(cleanDetail.partner_id, picky.id);
    assert.deepEqual(
      cleanDetail.verdicts.map((v: Record<string, unknown>) => [v.partner_id, v.verdict]),
      [[other.id, 'not_reached']],
    );
    assert.equal(picky.server!.received.length, 1);

    // Refused by every partner: rejected, its reason names why; the provider is told no partner's name.
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/partners/${other.id}`,
      payload: { quality: { refuse_flags: ['ip_country', 'phone_country'] } },
    });
    const nowhere = await postLead(ta, w.token, sampleLead({ ...FLAGGED, phone: '+33612345679' }));
    assert.equal(nowhere.json().status, 'rejected', nowhere.body);
    assert.equal(
      (await getJson(ta, `/api/leads/${nowhere.json().id}`)).reason,
      `No eligible partner: ${picky.name} (refuses flagged leads (phone_country)), ${other.name} (refuses flagged leads (phone_country))`,
    );
    assert.doesNotMatch(nowhere.body, /Partner|refuses/);
  });

  test('min_score: a lead scoring below is skipped in a planned delivery; an unscored lead is not refused by it', async (t) => {
    const ta = await buildTestApp(t, engine);
    await loadShippedRanges();
    // The second partner's daily cap: intake cannot plan alone, so the delivery plans from the lead row.
    const w = await makeWorld(t, ta, [{ fields: { quality: { min_score: 80 } } }, { fields: { daily_cap: 100 } }]);
    const [picky, other] = w.partners;

    const flagged = await postLead(ta, w.token, sampleLead(FLAGGED));
    assert.equal(flagged.json().status, 'delivered', flagged.body);
    const detail = await getJson(ta, `/api/leads/${flagged.json().id}`);
    assert.equal(detail.partner_id, other.id);
    assert.deepEqual(
      detail.verdicts.map((v: Record<string, unknown>) => [v.partner_id, v.verdict, v.reason]),
      [[picky.id, 'quality', 'takes quality 80 or more (this lead: 70)']],
    );

    const clean = await postLead(ta, w.token, sampleLead(CLEAN));
    assert.equal((await getJson(ta, `/api/leads/${clean.json().id}`)).partner_id, picky.id);

    // A lead stored before scoring (null score) with a flag the rule does not name: min_score does not refuse it.
    const unscored = await insertPendingLead(ta, w, { flags: flagBit('ip_country'), quality_score: null });
    assert.equal((await ta.app.delivery.run(unscored)).status, 'delivered');
    assert.equal((await getJson(ta, `/api/leads/${unscored}`)).partner_id, picky.id);
    // Scored low, stored: the same rule refuses it when it is delivered later.
    const low = await insertPendingLead(ta, w, { flags: flagBit('ip_country'), quality_score: 75 });
    assert.equal((await ta.app.delivery.run(low)).status, 'delivered');
    const lowDetail = await getJson(ta, `/api/leads/${low}`);
    assert.equal(lowDetail.partner_id, other.id);
    assert.equal(lowDetail.verdicts[0].reason, 'takes quality 80 or more (this lead: 75)');
    assert.equal(picky.server!.received.length, 2);
  });

  test('the simulator takes the lead’s flags and score', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [
      { fields: { quality: { refuse_flags: ['disposable_email'], min_score: 50 } } },
      {},
    ]);
    const simulate = (payload: Record<string, unknown>) =>
      call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/routing/simulate',
        payload: { country: 'DE', flow_id: w.flowId, ...payload },
      });
    const verdicts = async (payload: Record<string, unknown>) => {
      const res = await simulate(payload);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().candidates.map((c: { verdict: string; reason: string | null }) => [c.verdict, c.reason]);
    };
    assert.deepEqual(await verdicts({}), [
      ['offer', null],
      ['offer', null],
    ]);
    const flagged = await simulate({ flags: ['ip_country', 'disposable_email'], quality_score: 35 });
    assert.deepEqual([flagged.json().flags, flagged.json().quality_score], [['disposable_email', 'ip_country'], 35]);
    assert.deepEqual(flagged.json().candidates[0].verdict, 'quality');
    assert.deepEqual(flagged.json().candidates[0].reason, 'refuses flagged leads (disposable_email)');
    assert.deepEqual((await verdicts({ quality_score: 45 }))[0], [
      'quality',
      'takes quality 50 or more (this lead: 45)',
    ]);
    assert.deepEqual((await verdicts({ flags: ['ip_country'], quality_score: null }))[0], ['offer', null]);
    const bad = expectProblem(await simulate({ flags: ['nope'], quality_score: 101 }), 400, 'validation_failed');
    assert.deepEqual(bad.errors!.map((e) => e.field).sort(), ['flags[0]', 'quality_score']);
  });

  test('a quality rule is validated, shown, replaced whole and audited', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const id = w.partners[0].id;
    const patch = (quality: unknown) =>
      call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/partners/${id}`, payload: { quality } });
    const fields = (res: Awaited<ReturnType<typeof patch>>) =>
      expectProblem(res, 400, 'validation_failed')
        .errors!.map((e) => e.field)
        .sort();

    assert.deepEqual(fields(await patch({ refuse_flags: ['phone_country', 'nope'], min_score: 101 })), [
      'quality.min_score',
      'quality.refuse_flags[1]',
    ]);
    assert.deepEqual(fields(await patch({ min_score: -1 })), ['quality.min_score']);
    assert.deepEqual(fields(await patch({ min_score: 50.5 })), ['quality.min_score']);
    assert.deepEqual(fields(await patch({ refuse_flags: ['ip_country', 'ip_country'] })), ['quality.refuse_flags']);
    assert.deepEqual(fields(await patch({ refuse_flag: [] })), ['quality.refuse_flag']);
    const created = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/partners',
      payload: { name: 'Bad rule', integration: {}, quality: { refuse_flags: ['spam'], min_score: 'high' } },
    });
    const createdFields = fields(created);
    assert.ok(
      ['quality.refuse_flags[0]', 'quality.min_score'].every((f) => createdFields.includes(f)),
      createdFields.join(),
    );

    const set = await patch({ refuse_flags: ['ip_country', 'phone_country'], min_score: 60 });
    assert.equal(set.statusCode, 200, set.body);
    // Stored in the flags' own order.
    assert.deepEqual(set.json().quality, { refuse_flags: ['phone_country', 'ip_country'], min_score: 60 });
    // Replaced whole: what is left out takes its default.
    assert.deepEqual((await patch({ min_score: 0 })).json().quality, { refuse_flags: [], min_score: 0 });
    assert.deepEqual((await getJson(ta, `/api/partners/${id}`)).quality, { refuse_flags: [], min_score: 0 });
    const log = await getJson(ta, '/api/audit-log?limit=500&action=partner.updated');
    const updates = log.data.filter((e: { target_id: string }) => e.target_id === id);
    assert.ok(
      updates.some(
        (e: { details: { changes: { quality?: unknown } } }) =>
          JSON.stringify(e.details.changes.quality) ===
          '{"refuse_flags":["phone_country","ip_country"],"min_score":60}',
      ),
      JSON.stringify(updates),
    );
  });
});
