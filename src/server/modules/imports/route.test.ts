import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorld } from '../../../../test/distribution-world.js';
import { buildTestApp, expectProblem, forEachDatabase } from '../../../../test/helpers.js';
import { get, goodRow, HEADER, MAPPING, post, uploaded, workUntilNot } from '../../../../test/import-world.js';
import { InjectionWorker } from '../injections/worker.js';

// Import "route": the imported leads are stored, then sent by one re-injection job at its pace,
// made when the import is done; its body is checked as a job's target is.

forEachDatabase('CSV import (route)', (engine) => {
  test('when the import is done, one re-injection job sends exactly its leads through the flow', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { IMPORT_CHUNK_BYTES: '300' } });
    const w = await makeWorld(t, ta, [{}]);
    const rows = Array.from({ length: 6 }, (_, i) => goodRow(i + 1));
    rows.push('Bad,Row,bad@example.com,+49 1,DE,10.0.0.1,');
    const imp = await uploaded(ta, `${HEADER}\n${rows.join('\n')}\n`);
    const body = { mapping: MAPPING, traffic_provider_id: w.providerId, campaign_id: w.campaignId, mode: 'route' };
    const fields = async (over: object) =>
      expectProblem(
        await post(ta, `/api/imports/${imp.id}/run`, { ...body, ...over }),
        400,
        'validation_failed',
      ).errors!.map((e) => e.field);
    assert.deepEqual(await fields({}), ['flow_id', 'per_minute']);
    assert.deepEqual(await fields({ flow_id: 'nope', per_minute: 10 }), ['flow_id']);
    assert.deepEqual(await fields({ flow_id: w.flowId, partner_ids: [w.partners[0].id], per_minute: 10 }), [
      'partner_ids',
    ]);
    assert.deepEqual(await fields({ partner_ids: ['nope'], per_minute: 10 }), ['partner_ids[0]']);

    const res = await post(ta, `/api/imports/${imp.id}/run`, { ...body, flow_id: w.flowId, per_minute: 600 });
    assert.equal(res.statusCode, 202, res.body);
    const done = await workUntilNot(ta, imp.id, 'importing');
    assert.deepEqual([done.state, done.counts.imported, done.mode], ['done', 6, 'route']);
    assert.ok(done.injection_id);
    const job = await get(ta, `/api/injections/${done.injection_id}`);
    assert.deepEqual([job.state, job.total, job.flow_id, job.per_minute], ['running', 6, w.flowId, 600]);
    assert.equal(job.selection.import_id, imp.id);

    const sender = new InjectionWorker({ db: ta.db, delivery: ta.app.delivery, log: ta.app.log });
    const T0 = Date.now();
    for (let s = 0; s < 10 && (await get(ta, `/api/injections/${job.id}`)).left > 0; s++)
      await sender.tick(T0 + s * 1000);
    const sent = await get(ta, `/api/injections/${job.id}`);
    assert.deepEqual([sent.state, sent.delivered, sent.skipped], ['done', 6, 0]);
    const leads = await ta.db.selectFrom('leads').select(['status', 'import_id']).execute();
    assert.deepEqual(
      leads.map((l) => [l.status, l.import_id]),
      Array.from({ length: 6 }, () => ['delivered', imp.id]),
    );
    assert.equal(w.partners[0].server!.received.length, 6, 'each lead sent once');
  });
});
