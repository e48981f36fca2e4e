import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../db/ids.js';
import { insertAttempt, insertLeads } from '../../../../test/fixtures.js';
import {
  call,
  buildTestApp,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { tracesOf } from '../../../../test/traces.js';
import { ALL_PERMISSIONS } from '../../auth/permissions.js';
import { runRetention } from './retention-service.js';

const DAY = 86_400_000;
const daysAgo = (d: number) => new Date(Date.now() - d * DAY).toISOString();
const URL = '/api/privacy/retention';

const setRetention = async (ta: TestApp, body: { contacts_days: number | null; leads_days: number | null }) => {
  const res = await call(ta.app, ta.ownerToken, { method: 'PUT', url: URL, payload: body });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};

/** Every rollup row, in key order: what the reports read. */
async function rollups(ta: TestApp) {
  const out: Record<string, unknown[]> = {};
  for (const table of [
    'lead_stats_hourly',
    'lead_country_stats_hourly',
    'lead_provider_stats_hourly',
    'lead_ftd_stats_hourly',
  ] as const) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(ta.db);
    out[table] = rows
      .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v) || v]))))
      .filter((r) => !/"n_leads":0[,}]/.test(r))
      .sort();
  }
  return out;
}

forEachDatabase('retention', (engine) => {
  test('contacts past their days are purged everywhere they were; digests still catch a duplicate', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], {
      provider: { duplicate_policy: { fields: ['email', 'phone'], window_hours: 8760, scope: 'global' } },
    });
    const old = {
      email: 'old.purge@example.test',
      phone: '+4915177700011',
      first_name: 'Oldfellow',
      last_name: 'Purgeworthy',
    };
    const ids = await insertLeads(ta.db, [
      { ...old, traffic_provider_id: w.providerId, created_at: daysAgo(40), status: 'delivered' },
      // Another old one: every batch of the run (batch 1 below) moves the cursor past it.
      {
        traffic_provider_id: w.providerId,
        created_at: daysAgo(35),
        email: 'old.second@example.test',
        status: 'rejected',
      },
      { traffic_provider_id: w.providerId, created_at: daysAgo(5), email: 'recent.keep@example.test' },
    ]);
    await insertAttempt(ta.db, {
      lead_id: ids[0],
      partner_id: w.partners[0].id,
      attempt_no: 1,
      reason: `exists: ${old.email}`,
      response_excerpt: JSON.stringify({ lead: { email: old.email, phone: old.phone, name: old.first_name } }),
    });
    await ta.db
      .insertInto('events')
      .values({
        type: 'lead.received',
        occurred_at: daysAgo(40),
        lead_id: ids[0],
        partner_id: null,
        traffic_provider_id: w.providerId,
        campaign_id: null,
        data: JSON.stringify({ lead: { email: old.email, phone: old.phone, last_name: old.last_name } }),
        dedupe_key: null,
      })
      .execute();
    const before = await rollups(ta);
    // Nothing set: nothing done, no run recorded.
    assert.equal(await runRetention(ta.db), null);

    await setRetention(ta, { contacts_days: 30, leads_days: null });
    // Before each batch (one lead each: two, then the one that finds none) the run waits for the
    // last batch to be written back.
    const settles: number[] = [];
    const run = await runRetention(ta.db, { batch: 1, settle: async (ms) => void settles.push(ms) });
    assert.equal(run?.contacts, 2);
    assert.equal(settles.length, 3, 'settled before every batch');
    const leads = await ta.db.selectFrom('leads').selectAll().where('id', 'in', ids).orderBy('created_at').execute();
    assert.deepEqual(
      leads.map((l) => [l.email, l.phone, l.first_name, l.erased_at !== null, l.email_digest !== null]),
      [
        ['', '', '[erased]', true, true],
        ['', '', '[erased]', true, true],
        ['recent.keep@example.test', leads[2].phone, 'Ada', false, false],
      ],
    );
    assert.equal(leads[0].status, 'delivered', 'the rest of the lead stays');
    assert.deepEqual(await tracesOf(ta, [old.email, old.phone.slice(1), old.first_name, old.last_name]), []);
    assert.deepEqual(await rollups(ta), before, 'the reports are unchanged');

    const view = await (await call(ta.app, ta.ownerToken, { method: 'GET', url: URL })).json();
    assert.equal(view.contacts_days, 30);
    assert.equal(view.runs.length, 1);
    assert.equal(view.runs[0].state, 'done');
    assert.equal(view.runs[0].contacts_purged, 2);
    assert.ok(view.runs[0].finished_at);
    // A purged lead is neither redelivered nor re-injected: a partner could not take it.
    const redeliver = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/leads/${ids[1]}/redeliver`,
      payload: {},
    });
    assert.match(expectProblem(redeliver, 409, 'conflict').detail as string, /erased/);
    const job = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/injections',
      payload: { lead_ids: [ids[1], ids[2]], flow_id: w.flowId, per_minute: 60 },
    });
    assert.equal(job.statusCode, 201, job.body);
    assert.equal(job.json().total, 1, 'only the lead with its contacts');
    // Done: the next run finds nothing and records nothing.
    assert.equal(await runRetention(ta.db), null);

    // The same email (any other phone) or the same phone is still a duplicate of the purged lead.
    const byEmail = await postLead(ta, w.token, sampleLead({ email: old.email }));
    assert.equal(byEmail.json().status, 'duplicate', byEmail.body);
    const byPhone = await postLead(ta, w.token, sampleLead({ phone: old.phone }));
    assert.equal(byPhone.json().status, 'duplicate', byPhone.body);
    const reasons = await ta.db
      .selectFrom('leads')
      .select('reason')
      .where('id', 'in', [byEmail.json().id, byPhone.json().id])
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      reasons.map((r) => r.reason),
      [`duplicate of lead ${ids[0]} (same email)`, `duplicate of lead ${ids[0]} (same phone)`],
    );
    assert.equal((await postLead(ta, w.token, sampleLead())).json().status === 'duplicate', false);

    // An erasure of that email finds the purged lead by its digest and forgets the digests too.
    const erased = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/privacy/erasures',
      payload: { email: old.email },
    });
    assert.equal(erased.statusCode, 201, erased.body);
    assert.ok(erased.json().lead_ids.includes(ids[0]));
    const after = await ta.db
      .selectFrom('leads')
      .select(['email_digest', 'phone_digest'])
      .where('id', '=', ids[0])
      .executeTakeFirstOrThrow();
    assert.deepEqual(after, { email_digest: null, phone_digest: null });
  });

  test('leads past their days are deleted with what references them; the reports keep counting them', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const ids = await insertLeads(ta.db, [
      {
        traffic_provider_id: w.providerId,
        partner_id: w.partners[0].id,
        created_at: daysAgo(100),
        status: 'delivered',
        ftd_at: daysAgo(90),
        revenue_cents: 5000,
        cost_cents: 1000,
      },
      { traffic_provider_id: w.providerId, created_at: daysAgo(95), status: 'rejected' },
      { traffic_provider_id: w.providerId, created_at: daysAgo(10), status: 'delivered' },
    ]);
    await insertAttempt(ta.db, { lead_id: ids[0], partner_id: w.partners[0].id, attempt_no: 1 });
    await ta.db
      .insertInto('autologin_links')
      .values({
        token_hash: `hash-${newId()}`,
        lead_id: ids[0],
        partner_id: w.partners[0].id,
        single_use: 0,
        created_at: daysAgo(100),
        first_open_at: null,
        last_open_at: null,
      })
      .execute();
    await ta.db
      .insertInto('events')
      .values({
        type: 'lead.received',
        occurred_at: daysAgo(100),
        lead_id: ids[1],
        partner_id: null,
        traffic_provider_id: w.providerId,
        campaign_id: null,
        data: '{}',
        dedupe_key: null,
      })
      .execute();
    const before = await rollups(ta);
    assert.ok(before.lead_stats_hourly.length >= 3);

    await setRetention(ta, { contacts_days: null, leads_days: 60 });
    const run = await runRetention(ta.db);
    assert.equal(run?.leads, 2);
    const left = await ta.db.selectFrom('leads').select('id').execute();
    assert.deepEqual(
      left.map((l) => l.id),
      [ids[2]],
    );
    for (const table of ['lead_attempts', 'autologin_links', 'events', 'lead_status_history'] as const) {
      const { rows } = await sql<{
        n: number;
      }>`select count(*) as n from ${sql.table(table)} where lead_id in (${sql.join(ids.slice(0, 2))})`.execute(ta.db);
      assert.equal(Number(rows[0].n), 0, table);
    }
    assert.deepEqual(await rollups(ta), before, 'deleted leads are still counted');
    const view = await (await call(ta.app, ta.ownerToken, { method: 'GET', url: URL })).json();
    assert.equal(view.runs[0].leads_deleted, 2);
    assert.equal(view.runs[0].leads_before.slice(0, 10), daysAgo(60).slice(0, 10));

    // Any other delete still takes a lead out of the counts (the trigger's exception is the retention's alone).
    await ta.db.deleteFrom('leads').where('id', '=', ids[2]).execute();
    assert.notDeepEqual(await rollups(ta), before);
    const keep = await ta.db.selectFrom('settings').select('key').where('key', 'like', 'rollups.%').execute();
    assert.deepEqual(keep, [], 'the marker never outlives its transaction');
  });

  test('retention settings: signed-in admins from a session only; bad days named; audited', async (t) => {
    const ta = await buildTestApp(t, engine);
    expectProblem(await call(ta.app, null, { method: 'GET', url: URL }), 401, 'unauthorized');
    expectProblem(
      await call(ta.app, null, { method: 'PUT', url: URL, payload: { contacts_days: 30, leads_days: null } }),
      401,
      'unauthorized',
    );
    const key = await newApiKey(ta, ALL_PERMISSIONS);
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url: URL }), 403, 'session_required');
    const op = await newOperator(ta, ALL_PERMISSIONS);
    expectProblem(
      await call(ta.app, op.token, { method: 'PUT', url: URL, payload: { contacts_days: 30, leads_days: null } }),
      403,
      'forbidden',
    );
    for (const [payload, field] of [
      [{ contacts_days: 0, leads_days: null }, 'contacts_days'],
      [{ contacts_days: null, leads_days: 3651 }, 'leads_days'],
      [{ contacts_days: 1.5, leads_days: null }, 'contacts_days'],
      [{ contacts_days: 30 }, 'leads_days'],
    ] as const) {
      const res = await call(ta.app, ta.ownerToken, { method: 'PUT', url: URL, payload });
      const p = expectProblem(res, 400, 'validation_failed');
      assert.ok(
        (p.errors as { field: string }[]).some((e) => e.field === field),
        `${JSON.stringify(payload)}: ${res.body}`,
      );
    }
    const view = await setRetention(ta, { contacts_days: 30, leads_days: 400 });
    assert.deepEqual([view.contacts_days, view.leads_days, view.interval_seconds, view.runs], [30, 400, 600, []]);
    const audit = await ta.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'privacy.retention_updated')
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(audit.details!).after, { contacts_days: 30, leads_days: 400 });
  });
});
