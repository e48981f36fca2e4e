// The reader (db/reader.ts): on SQLite, reports read on a thread of their own, so a long one
// holds neither the event loop nor the server's connection (intake).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, call, forEachDatabase } from '../../../test/helpers.js';
import { insertAttempt, insertLeads, insertLeadWorld } from '../../../test/fixtures.js';
import { openReader } from './reader.js';

test('SQLite: partner performance reads on the reader, not on the server connection', async (t) => {
  const main: string[] = [];
  const reader: string[] = [];
  const ta = await buildTestApp(t, 'sqlite', {
    onQuery: (s) => main.push(s),
    onReaderQuery: (s) => reader.push(s),
  });
  const w = await insertLeadWorld(ta.db);
  const [lead] = await insertLeads(ta.db, [{ traffic_provider_id: w.providerA, partner_id: w.partnerA }]);
  await insertAttempt(ta.db, { lead_id: lead, partner_id: w.partnerA, attempt_no: 1 });
  await insertAttempt(ta.db, { lead_id: lead, partner_id: w.partnerB, attempt_no: 2, outcome: 'rejected' });
  const from = main.length;
  const res = await call(ta.app, ta.ownerToken, {
    method: 'GET',
    url: '/api/analytics/partners?then_by=traffic_provider',
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.totals.attempts, 2);
  assert.equal(body.totals.accepted, 1);
  assert.ok(
    reader.some((s) => /lead_attempts/.test(s)),
    `the reader ran no statement on lead_attempts:\n${reader.join('\n')}`,
  );
  const onMain = main.slice(from).filter((s) => /lead_attempts|autologin_links/.test(s));
  assert.deepEqual(onMain, [], 'statements of the report on the server connection');
  assert.equal(ta.app.reader.threads, 1);
});

test('SQLite: a long read on the reader leaves the event loop and the server connection free', async (t) => {
  const ta = await buildTestApp(t, 'sqlite');
  // A statement that computes for a while (tens of millions of rows of a recursive CTE).
  const long = sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 10000000)
    select count(*) as n from c`;
  const started = performance.now();
  let finished = 0;
  const read = long.execute(ta.app.reader.db).then((r) => {
    finished = performance.now();
    return r.rows[0].n;
  });
  // Meanwhile the server answers, and its own connection reads.
  await new Promise((r) => setTimeout(r, 20));
  const health = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/health' });
  assert.equal(health.statusCode, 200, health.body);
  const own = await sql<{ one: number }>`select 1 as one`.execute(ta.db);
  assert.equal(own.rows[0].one, 1);
  const answered = performance.now();
  assert.equal(finished, 0, 'the long read ended before the server answered: make it longer');
  assert.equal(Number(await read), 10_000_000);
  assert.ok(finished - started > 200, `the long read took ${finished - started} ms: too short to show anything`);
  assert.ok(answered < finished);
});

test('SQLite: the reader refuses writes and transactions, and its thread ends when idle', async (t) => {
  const ta = await buildTestApp(t, 'sqlite');
  const r = openReader(ta.db, ta.config.database, { idleMs: 50 });
  t.after(() => r.close());
  await assert.rejects(
    r.db.insertInto('settings').values({ key: 'x', value: '1', updated_at: new Date().toISOString() }).execute(),
    /the reader runs reads only/,
  );
  await assert.rejects(
    r.db.transaction().execute(async () => {}),
    /the reader runs no transactions/,
  );
  const rows = await r.db.selectFrom('settings').select('key').execute();
  assert.ok(Array.isArray(rows));
  assert.equal(r.threads, 1);
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(r.threads, 0, 'the thread is still running after the idle time');
  // A read after that starts it again.
  await r.db.selectFrom('settings').select('key').execute();
  assert.equal(r.threads, 1);
});

forEachDatabase('The reader', (engine) => {
  test('reports answer the same through it (PostgreSQL: the server pool itself)', async (t) => {
    const ta = await buildTestApp(t, engine);
    if (engine === 'postgres') assert.equal(ta.app.reader.db, ta.db);
    else assert.notEqual(ta.app.reader.db, ta.db);
    const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/analytics/report?group_by=partner' });
    assert.equal(res.statusCode, 200, res.body);
  });
});
