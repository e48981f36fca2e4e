// Readiness (GET /api/health: the database answers and is migrated) and liveness
// (GET /api/health/live: the process answers, no database), for load balancers and orchestrators.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import { buildApp } from '../../app.js';
import { openDatabase } from '../../db/database.js';
import { LATEST_MIGRATION, MIGRATION_NAMES } from '../../db/migrate.js';
import { buildTestApp, call, expectProblem, forEachDatabase, type TestApp } from '../../../../test/helpers.js';

const health = (ta: { app: TestApp['app'] }, url = '/api/health', remoteAddress?: string) =>
  ta.app.inject({ method: 'GET', url, ...(remoteAddress ? { remoteAddress } : {}) });

/** A second app on its own connection to the test's database, whose connection the test may close. */
async function appOnOwnConnection(t: import('node:test').TestContext, ta: TestApp) {
  const db = openDatabase(ta.config.database);
  const logs: string[] = [];
  const app = await buildApp(ta.config, db, {
    logStream: new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) }),
  });
  let destroyed = false;
  t.after(async () => {
    await app.close();
    if (!destroyed) await db.destroy();
  });
  return {
    app,
    logs,
    cutDatabase: async () => {
      destroyed = true;
      await db.destroy();
    },
  };
}

forEachDatabase('health', (engine) => {
  test('ready: 200 ok with the engine, the migrations all applied, no credentials needed', async (t) => {
    const ta = await buildTestApp(t, engine);
    const res = await health(ta);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'ok');
    assert.deepEqual(body.database, { engine, ok: true });
    assert.deepEqual(body.migrations, {
      ok: true,
      applied: MIGRATION_NAMES.length,
      expected: MIGRATION_NAMES.length,
      missing: [],
    });
    assert.equal(typeof body.version, 'string');
    assert.equal(res.headers['retry-after'], undefined);
  });

  test('a migration this version needs is missing: 503 unavailable with Retry-After, naming it; liveness stays 200', async (t) => {
    const ta = await buildTestApp(t, engine);
    await (ta.db as unknown as Kysely<any>)
      .deleteFrom('schema_migrations')
      .where('name', '=', LATEST_MIGRATION)
      .execute();
    const res = await health(ta);
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '5');
    const body = res.json();
    assert.equal(body.status, 'unavailable');
    assert.deepEqual(body.database, { engine, ok: true });
    assert.deepEqual(body.migrations, {
      ok: false,
      applied: MIGRATION_NAMES.length - 1,
      expected: MIGRATION_NAMES.length,
      missing: [LATEST_MIGRATION],
    });
    assert.equal((await health(ta, '/api/health/live')).statusCode, 200);
  });

  test('a database migrated further than this version (a rolling upgrade) is still ready', async (t) => {
    const ta = await buildTestApp(t, engine);
    await (ta.db as unknown as Kysely<any>)
      .insertInto('schema_migrations')
      .values({ name: '29990101T000000Z_from_a_newer_version', applied_at: new Date().toISOString() })
      .execute();
    const res = await health(ta);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().migrations.missing.length, 0);
  });

  test('the database unreachable: readiness 503 unavailable with Retry-After and no driver error text; liveness 200', async (t) => {
    const ta = await buildTestApp(t, engine);
    const other = await appOnOwnConnection(t, ta);
    assert.equal((await health(other)).statusCode, 200);
    await other.cutDatabase();

    const res = await health(other);
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '5');
    const body = res.json();
    assert.equal(body.status, 'unavailable');
    assert.deepEqual(body.database, { engine, ok: false });
    assert.equal(body.migrations.ok, false);
    assert.deepEqual(
      Object.keys(body).sort(),
      ['database', 'migrations', 'status', 'uptime_s', 'version'],
      'the error itself goes to the log only',
    );
    assert.ok(
      other.logs.some((l) => l.includes('health: not ready')),
      'the reason is logged',
    );

    const live = await health(other, '/api/health/live');
    assert.equal(live.statusCode, 200, live.body);
    assert.equal(live.json().status, 'ok');
    assert.deepEqual(Object.keys(live.json()).sort(), ['status', 'uptime_s', 'version']);
  });
});

test('liveness runs no query; both checks skip the IP allow-list and the request rate limits', async (t) => {
  const queries: string[] = [];
  const ta = await buildTestApp(t, 'sqlite', { onQuery: (sql) => queries.push(sql), env: { RATE_LIMIT_PER_IP: '2' } });
  const put = await call(ta.app, ta.ownerToken, {
    method: 'PUT',
    url: '/api/settings/security',
    payload: { ip_allowlist: ['127.0.0.0/8'] },
  });
  assert.equal(put.statusCode, 200, put.body);
  const FAR = '192.0.2.50';
  expectProblem(
    await call(ta.app, null, { method: 'GET', url: '/api/openapi.json', remoteAddress: FAR }),
    403,
    'ip_not_allowed',
  );

  queries.length = 0;
  for (let i = 0; i < 5; i++) {
    const live = await health(ta, '/api/health/live', FAR);
    assert.equal(live.statusCode, 200, live.body);
    assert.equal(live.headers.ratelimit, undefined, 'not counted');
  }
  assert.deepEqual(queries, [], 'liveness touched the database');
  for (let i = 0; i < 5; i++) assert.equal((await health(ta, '/api/health', FAR)).statusCode, 200);
  assert.ok(
    queries.some((q) => /schema_migrations/.test(q)),
    'readiness reads the applied migrations',
  );
});
