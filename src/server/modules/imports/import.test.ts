import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { insertCampaign, insertLeads, insertTrafficProvider } from '../../../../test/fixtures.js';
import { buildTestApp, expectProblem, forEachDatabase, newOperator, type Engine } from '../../../../test/helpers.js';
import {
  allErrors,
  get,
  goodRow,
  HEADER,
  importTarget,
  MAPPING,
  post,
  upload,
  uploaded,
  worker,
  workUntilNot,
} from '../../../../test/import-world.js';
import { importById } from './queries.js';

// Import "store": exactly the good rows stored (with what intake writes beside a lead), a cancel
// taking effect after the chunk in hand, crash safety (a worker stops, another carries on from the
// cursor: no row twice, none lost), access and scope.

/** 30 good rows with a bad row (every 7th) and a duplicate of row 1 (row 20) among them. */
function file() {
  const rows = Array.from({ length: 30 }, (_, i) => {
    const n = i + 1;
    if (n % 7 === 0) return `Bad${n},Row,bad${n}@example.com,+49 151 1,DE,10.0.0.1,`;
    if (n === 20) return goodRow(1).replace('Ann1', 'Twin');
    return goodRow(n);
  });
  return `${HEADER}\n${rows.join('\n')}\n`;
}
const GOOD = 30 - 4 - 1; // rows 7, 14, 21, 28 bad; row 20 a duplicate

async function setup(t: TestContext, engine: Engine) {
  const ta = await buildTestApp(t, engine, { env: { IMPORT_CHUNK_BYTES: '400' } });
  const target = await importTarget(ta);
  const body = {
    mapping: MAPPING,
    traffic_provider_id: target.providerId,
    campaign_id: target.campaignId,
    mode: 'store',
  };
  return { ta, target, body };
}

const importedEmails = async (ta: Awaited<ReturnType<typeof setup>>['ta'], id: string) =>
  (await ta.db.selectFrom('leads').select('email').where('import_id', '=', id).orderBy('email').execute()).map(
    (l) => l.email,
  );

forEachDatabase('CSV import (store)', (engine) => {
  test('the good rows, and only they, are stored as new leads of the provider and campaign; chunks deleted when done', async (t) => {
    const { ta, target, body } = await setup(t, engine);
    // Someone wants lead.received: an intake lead would write the event, an imported one does not.
    await ta.db
      .insertInto('event_subscriptions')
      .values({
        event_type: 'lead.received',
        destination_kind: 'webhook',
        destination_id: 'w1',
        traffic_provider_id: null,
        campaign_id: null,
      })
      .execute();
    const imp = await uploaded(ta, file());
    const res = await post(ta, `/api/imports/${imp.id}/run`, body);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().state, 'importing');
    const done = await workUntilNot(ta, imp.id, 'importing');
    assert.equal(done.state, 'done');
    assert.deepEqual(done.counts, { good: GOOD, bad: 4, duplicates: 1, imported: GOOD });
    assert.deepEqual(
      (await allErrors(ta, imp.id)).map((e) => [e.row, e.field]),
      [
        [7, 'phone'],
        [14, 'phone'],
        [20, 'email'],
        [21, 'phone'],
        [28, 'phone'],
      ],
    );
    const leads = await ta.db.selectFrom('leads').selectAll().where('import_id', '=', imp.id).execute();
    assert.equal(leads.length, GOOD);
    assert.equal(new Set(leads.map((l) => l.email)).size, GOOD, 'no row twice');
    for (const l of leads) {
      assert.deepEqual(
        [l.status, l.traffic_provider_id, l.campaign_id, l.flow_id, l.partner_id, l.lease_until],
        ['new', target.providerId, target.campaignId, target.flowId, null, null],
      );
    }
    const first = leads.find((l) => l.email === 'ann1@example.com')!;
    assert.deepEqual([first.phone, first.first_name, first.sub_id1], ['+4915102000001', 'Ann1', 's1']);
    const lead = await get(ta, `/api/leads/${first.id}`);
    assert.equal(lead.import_id, imp.id);
    // What intake writes beside a stored lead: the provider's log fact; the rollups (triggers); no lead event.
    const facts = await ta.db
      .selectFrom('provider_log_pending')
      .select(['lead_id', 'kind'])
      .where('traffic_provider_id', '=', target.providerId)
      .execute();
    assert.equal(facts.filter((f) => f.kind === 'received').length, GOOD);
    // (The rollup tables are the triggers' own, untyped here as in the analytics tests.)
    const rollup = await (ta.db as any)
      .selectFrom('lead_provider_stats_hourly')
      .select((eb: any) => eb.fn.sum('n_leads').as('n'))
      .where('traffic_provider_id', '=', target.providerId)
      .executeTakeFirst();
    assert.equal(Number(rollup?.n), GOOD);
    assert.equal((await ta.db.selectFrom('events').selectAll().execute()).length, 0, 'no per-lead event');
    await insertLeads(ta.db, [{ traffic_provider_id: target.providerId }]);
    assert.equal((await ta.db.selectFrom('events').selectAll().execute()).length, 1, 'the trigger still works');
    assert.equal((await ta.db.selectFrom('import_chunks').selectAll().execute()).length, 0);
    assert.equal((await ta.db.selectFrom('import_keys').selectAll().execute()).length, 0);
    const audit = await ta.db.selectFrom('audit_log').selectAll().where('action', '=', 'import.started').execute();
    assert.deepEqual(JSON.parse(audit[0].details).mode, 'store');
    expectProblem(await post(ta, `/api/imports/${imp.id}/run`, body), 409, 'conflict');
    expectProblem(await post(ta, `/api/imports/${imp.id}/cancel`), 409, 'conflict');

    // The work is deleted after the import is marked done, in batches; a process that stopped
    // in between leaves some, which a later tick deletes.
    await ta.db
      .insertInto('import_keys')
      .values({ import_id: imp.id, key: 'email:left@example.com', row: 1 })
      .execute();
    await worker(ta).tick();
    assert.equal((await ta.db.selectFrom('import_keys').selectAll().execute()).length, 0, 'leftover work deleted');
  });

  test('cancel: the work stops after the chunk in hand; whole chunks only; the file is deleted', async (t) => {
    const { ta, body } = await setup(t, engine);
    const imp = await uploaded(ta, file());
    await post(ta, `/api/imports/${imp.id}/run`, body);
    const w = worker(ta, 'one-chunk-a-tick', 0);
    await w.tick();
    const cancelled = await post(ta, `/api/imports/${imp.id}/cancel`);
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().state, 'cancelled');
    await w.tick();
    const after = await get(ta, `/api/imports/${imp.id}`);
    assert.equal(after.state, 'cancelled');
    const first = await ta.db.selectFrom('import_chunks').selectAll().execute();
    assert.equal(first.length, 0, 'the chunks are deleted');
    assert.ok(after.counts.imported > 0 && after.counts.imported < GOOD, `one chunk in: ${after.counts.imported}`);
    assert.equal((await importedEmails(ta, imp.id)).length, after.counts.imported);
    assert.equal(after.progress.rows_done, after.counts.good + after.counts.bad + after.counts.duplicates);
    const audit = await ta.db.selectFrom('audit_log').selectAll().where('action', '=', 'import.cancelled').execute();
    assert.equal(audit.length, 1);
  });

  test('crash safety: a worker stops mid-import, another carries on from the cursor; a stale one writes nothing', async (t) => {
    const { ta, body } = await setup(t, engine);
    const imp = await uploaded(ta, file());
    await post(ta, `/api/imports/${imp.id}/run`, body);
    const a = worker(ta, 'process-a', 0);
    await a.tick();
    const stale = (await importById(ta.db, imp.id))!;
    const ctx = await a.context(stale);
    // Process A dies; B takes the lease once it has run out and works on.
    const b = worker(ta, 'process-b', 0);
    await b.tick(Date.now() + 5_000);
    assert.equal((await importById(ta.db, imp.id))!.next_seq, stale.next_seq, 'the lease is still A’s');
    await b.tick(Date.now() + 31_000);
    assert.equal((await importById(ta.db, imp.id))!.next_seq, stale.next_seq + 1);
    // A, back from a pause, tries the chunk it had in hand: refused, nothing written.
    const before = (await importedEmails(ta, imp.id)).length;
    await assert.rejects(a.step(stale, ctx));
    assert.equal((await importedEmails(ta, imp.id)).length, before);
    for (let i = 0; i < 50 && (await importById(ta.db, imp.id))!.state === 'importing'; i++)
      await b.tick(Date.now() + 31_000);
    const done = await get(ta, `/api/imports/${imp.id}`);
    assert.deepEqual([done.state, done.counts.imported], ['done', GOOD]);
    const emails = await importedEmails(ta, imp.id);
    assert.equal(emails.length, GOOD);
    assert.equal(new Set(emails).size, GOOD, 'no row twice');
    assert.equal((await allErrors(ta, imp.id)).length, 5, 'every bad row reported once');
  });

  test('access: 403 without leads:edit; a scoped operator imports only to its providers and sees only its imports', async (t) => {
    const { ta, target, body } = await setup(t, engine);
    const imp = await uploaded(ta, file());
    const viewer = await newOperator(ta, ['leads:view']);
    expectProblem(await post(ta, `/api/imports/${imp.id}/run`, body, viewer.token), 403, 'forbidden');
    expectProblem(await post(ta, `/api/imports/${imp.id}/cancel`, undefined, viewer.token), 403, 'forbidden');

    const other = await insertTrafficProvider(ta.db);
    const otherCampaign = await insertCampaign(ta.db, other, null);
    const role = await post(ta, '/api/roles', {
      name: 'Scoped importer',
      permissions: ['leads:view', 'leads:edit'],
      scope: { traffic_provider_ids: [target.providerId], partner_ids: null },
    });
    assert.equal(role.statusCode, 201, role.body);
    const scoped = await newOperatorWithRole(ta, role.json().id);
    expectProblem(await post(ta, `/api/imports/${imp.id}/run`, body, scoped), 404, 'not_found');
    const mine = (await upload(ta, file(), scoped)).json();
    const wrong = await post(
      ta,
      `/api/imports/${mine.id}/run`,
      { ...body, traffic_provider_id: other, campaign_id: otherCampaign },
      scoped,
    );
    assert.deepEqual(
      expectProblem(wrong, 400, 'validation_failed').errors!.map((e) => e.field),
      ['traffic_provider_id', 'campaign_id'],
    );
    const list = await get(ta, '/api/imports', scoped);
    assert.deepEqual(
      list.data.map((i: { id: string }) => i.id),
      [mine.id],
    );
    const ok = await post(ta, `/api/imports/${mine.id}/run`, body, scoped);
    assert.equal(ok.statusCode, 202, ok.body);
    const route = await post(ta, `/api/imports/${imp.id}/run`, { ...body, per_minute: 5 });
    assert.deepEqual(
      expectProblem(route, 400, 'validation_failed').errors!.map((e) => e.field),
      ['per_minute'],
    );
  });
});

async function newOperatorWithRole(ta: Awaited<ReturnType<typeof setup>>['ta'], roleId: string) {
  const { login, OWNER } = await import('../../../../test/helpers.js');
  const email = `scoped-importer-${Math.random().toString(36).slice(2)}@example.test`;
  const password = 'scoped-importer-password-1';
  const res = await post(ta, '/api/operators', {
    email,
    name: 'Scoped importer',
    password,
    role_id: roleId,
    current_password: OWNER.password,
  });
  assert.equal(res.statusCode, 201, res.body);
  return login(ta.app, email, password);
}
